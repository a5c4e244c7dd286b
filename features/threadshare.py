"""Compile mode: how much of a line a launch's average thread runs, where the source says
so through thread positions (docs/counting.md S16, S17).

Nsight Compute counts the instructions each thread executes. Two shapes make a line's
per-thread count far from "once per trip of the loops around it":

- an arm selected by an equality on the thread's position (`if (threadIdx.x == 0)`,
  `if (i == 0)`) runs for one thread of each block, or of the launch (S16);
- a loop that strides over positions by as many as there are (`for (i = tid; i < n;
  i += blockDim.x * gridDim.x)`) runs n / threads times on average, not the ceiling of
  it: with fewer items than threads most threads run it not at all (S17).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import sympy
import tree_sitter
from roofcast.analyzer.parsing import operator
from roofcast.features.symbolic import THREAD_POSITION_PREFIXES, symbol

#: a thread position's symbol prefix -> the prefix of its extent's (threadIdx_x < blockDim_x)
EXTENT_OF = {"threadIdx_": "blockDim_", "blockIdx_": "gridDim_"}
_LAUNCH = (*THREAD_POSITION_PREFIXES, *EXTENT_OF.values())


def _positions(expr: sympy.Expr) -> set[sympy.Symbol]:
    return {s for s in expr.free_symbols if s.name.startswith(THREAD_POSITION_PREFIXES)}


def _extent(position: sympy.Symbol) -> sympy.Symbol:
    for prefix, extent in EXTENT_OF.items():
        if position.name.startswith(prefix):
            return symbol(extent + position.name[len(prefix) :])
    raise ValueError(position.name)


def _linear_in(expr: sympy.Expr, positions: set[sympy.Symbol]) -> bool:
    """Whether `expr` is of degree one in each position, over launch values only: a
    distinct value for each position (not `threadIdx.x % 32`, `threadIdx.x / 2`)."""
    if not all(s.name.startswith(_LAUNCH) for s in expr.free_symbols):
        return False
    if not expr.is_polynomial(*positions):
        return False
    poly = sympy.Poly(expr, *positions)
    return all(sum(m) == 1 for m in poly.monoms() if any(m))


def equality_share(pairs: Iterable[tuple[sympy.Expr, sympy.Expr]]) -> sympy.Expr:
    """S16: the share of a launch's threads for which every `left == right` holds, from
    those equalities that set a thread position to a value no position changes (`i == 0`,
    `threadIdx.x == blockDim.x - 1`): one thread per value of the positions they name,
    1 / (the product of those positions' extents). 1 when none does."""
    named: set[sympy.Symbol] = set()
    for left, right in pairs:
        for position_side, other in ((left, right), (right, left)):
            positions = _positions(position_side)
            if positions and not _positions(other) and _linear_in(position_side, positions):
                named |= positions
                break
    if not named:
        return sympy.Integer(1)
    return 1 / sympy.Mul(*(_extent(p) for p in sorted(named, key=lambda s: s.name)))


def spread_trip(
    op: str, start: sympy.Expr, end: sympy.Expr, amount: sympy.Expr
) -> sympy.Expr | None:
    """S17: the mean trip count over the launch's threads of a loop from a thread's
    position (`start`, positions kept) up to `end` (`<` or `<=`) by `amount`, when the
    amount is the product of the extents of the positions in the start (`tid` by
    `blockDim.x * gridDim.x`, `threadIdx.x` by `blockDim.x`): the positions then cover
    one stride, each value below the bound is one thread's one trip, and the mean is the
    span over the stride, below one when there are fewer values than threads. None for
    any other loop."""
    positions = _positions(start)
    if op not in ("<", "<=") or not positions or not _linear_in(start, positions):
        return None
    extents = sympy.Mul(*(_extent(p) for p in positions))
    if sympy.expand(amount - extents) != 0 or _positions(end):
        return None
    first = start.subs({p: 0 for p in positions})
    span = end - first + (1 if op == "<=" else 0)
    return span / amount


def equalities(
    cond: tree_sitter.Node, value: Callable[[tree_sitter.Node], sympy.Expr | None]
) -> list[tuple[sympy.Expr, sympy.Expr]]:
    """S16: the values of both sides of each `==` that a condition's top-level `&&` chain
    requires (an `||`, a `!`, anything else requires none of them), walked with a stack."""
    pending = list(cond.named_children) if cond.type == "condition_clause" else [cond]
    out: list[tuple[sympy.Expr, sympy.Expr]] = []
    while pending:
        node = pending.pop()
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        if node.type != "binary_expression":
            continue
        op = operator(node)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            continue
        if op == "&&":
            pending += [right, left]
        elif op == "==":
            values = value(left), value(right)
            if values[0] is not None and values[1] is not None:
                out.append((values[0], values[1]))
    return out


def note_share(shares: dict, where: tuple[str, int], share: sympy.Expr) -> None:
    """S16: a line's share of the threads: the one it was noted with; 1 (no entry) once
    it is noted with another (a line both inside and outside one thread's arm, a callee
    inlined at two sites), as counting it for every thread bounds it from above."""
    if where in shares:
        if shares[where] != share:
            shares[where] = sympy.Integer(1)
    else:
        shares[where] = share
