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
from roofcast.analyzer.parsing import chained_comparisons
from roofcast.features import positionshare, scaledshare
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


def _cycle(expr: sympy.Expr) -> sympy.Expr | None:
    """How many values a position's remainder (`threadIdx.x % 32`) cycles through: the
    divisor, or the position's count when that is fewer; None for any other value."""
    if not isinstance(expr, sympy.Mod) or not expr.args[1].is_Integer or expr.args[1] < 2:
        return None
    counted = _enumerated(expr.args[0])
    if counted is None:
        return None
    return sympy.Min(expr.args[1], counted[1])


def _enumerated(expr: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr] | None:
    """(its value at position 0, how many values) of a value that takes each of
    0 .. count-1 once over the threads, plus a constant: one position (`threadIdx.x + 1`,
    over blockDim.x values) or a block's and its thread's (`blockIdx.x * blockDim.x +
    threadIdx.x`, over blockDim.x * gridDim.x); None for any other."""
    positions = _positions(expr)
    if not positions or not _linear_in(expr, positions):
        return None
    first = expr.subs({p: 0 for p in positions})
    varying = sympy.expand(expr - first)
    if len(positions) == 1:
        (position,) = positions
        return (first, _extent(position)) if varying == position else None
    if len(positions) != 2:
        return None
    thread = next((p for p in positions if p.name.startswith("threadIdx_")), None)
    block = next((p for p in positions if p.name.startswith("blockIdx_")), None)
    if thread is None or block is None or thread.name[-1] != block.name[-1]:
        return None
    if varying != sympy.expand(block * _extent(thread) + thread):
        return None
    return first, _extent(thread) * _extent(block)


def arm_share(pairs: Iterable[tuple[str, sympy.Expr, sympy.Expr]]) -> sympy.Expr:
    """S16: the share of a launch's threads for which every `left OP right` holds, from
    those that compare a thread position with a value no position changes. `==` sets the
    positions it names (`i == 0`, `threadIdx.x == blockDim.x - 1`): one thread per value
    of the others, 1 / (the product of those positions' extents); of a remainder
    (`threadIdx.x % 32 == 0`) one in as many as it cycles through. `<` or `<=` a value no
    position changes (`threadIdx.x < 32`, `i < n`) keeps that many of the values a
    position (or a block's and its thread's) takes, at most all. 1 when none does."""
    named: set[sympy.Symbol] = set()
    share: sympy.Expr = sympy.Integer(1)
    for op, left, right in pairs:
        if op == "==":
            for position_side, other in ((left, right), (right, left)):
                positions = _positions(position_side)
                if not positions or _positions(other):
                    continue
                quotient = positionshare.quotient_share(position_side)
                if quotient is not None:  # S48: `tid / 32 == 0`, 32 threads per quotient
                    share = share * quotient
                    break
                if _linear_in(position_side, positions):
                    named |= positions
                    break
                cycle = _cycle(position_side)
                if cycle is not None:  # `threadIdx.x % 32 == 0`: one lane of each 32
                    share = share / cycle
                    break
            continue
        if op in (">", ">="):
            op, left, right = ("<" if op == ">" else "<="), right, left
        if op not in ("<", "<=") or _positions(right):
            continue
        left = scaledshare.below_floor(left, op, right)  # S52: `max(0, x) < R`, R > 0
        counted, divisor = _enumerated(left), 1
        if counted is None:  # S44: `id / 36 < n`, several threads per item
            counted, divisor = scaledshare.divided(left, _enumerated) or (None, 1)
        if counted is None:  # S49: `blockIdx.z / G * 16 + threadIdx.y < h`, a tile's position
            counted = positionshare.tiled(left)
        scaled = scaledshare.multiplied(left, _enumerated) if counted is None else None
        if scaled is not None:  # S52: `16 * tid - 1 < i`, every 16th value
            counted = scaled[0]
        if counted is None:
            continue
        first, count = counted
        kept = right - first + (1 if op == "<=" else 0)
        if divisor > 1:
            kept = scaledshare.kept_below(op, right, first, divisor)
        if scaled is not None:
            kept = scaledshare.kept_scaled(op, right, first, scaled[1], scaled[2])
        if kept.is_number and kept <= 0:
            continue
        share = share * sympy.Max(0, sympy.Min(kept, count)) / count  # never below none
    if named:
        share = share / sympy.Mul(*(_extent(p) for p in sorted(named, key=lambda s: s.name)))
    return share


def fixed_positions(
    pairs: Iterable[tuple[str, sympy.Expr, sympy.Expr]],
) -> dict[sympy.Symbol, sympy.Expr] | None:
    """C8: the value each position takes where every comparison holds, when each is an
    `==` of one position to the first power (`blockIdx.x == gridDim.x - 1`, `2 *
    threadIdx.x + 1 == n`) with a value no position changes; None for any other."""
    fixed: dict[sympy.Symbol, sympy.Expr] = {}
    for op, left, right in pairs:
        if op != "==":
            return None
        if _positions(right):
            left, right = right, left
        positions = _positions(left)
        if len(positions) != 1 or _positions(right):
            return None
        (position,) = positions
        left = sympy.expand(left)
        if not left.is_polynomial(position) or sympy.degree(left, position) != 1:
            return None
        slope = left.coeff(position, 1)
        rest = sympy.expand(left - slope * position)
        if slope.is_zero or position in rest.free_symbols or position in fixed:
            return None
        fixed[position] = (right - rest) / slope
    return fixed or None


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


#: S16: what a comparison's failing says (`if (i >= n) return;`: the rest has `i < n`)
_NEGATED = {">=": "<", ">": "<=", "<": ">=", "<=": ">", "!=": "=="}


def comparisons(
    cond: tree_sitter.Node,
    value: Callable[[tree_sitter.Node], sympy.Expr | None],
    failing: bool = False,
) -> list[tuple[str, sympy.Expr, sympy.Expr]]:
    """S16: each comparison (`==`, `<`, `<=`, `>`, `>=`) that a condition's top-level `&&`
    chain requires, with the values of its sides (an `||`, a `!`, anything else requires
    none of them), walked with a stack. `failing`: those its failing requires instead,
    each of a top-level `||` chain's comparisons negated."""
    chain = "||" if failing else "&&"
    roots = list(cond.named_children) if cond.type == "condition_clause" else [cond]
    out: list[tuple[str, sympy.Expr, sympy.Expr]] = []
    for op, left, right in chained_comparisons(roots, (chain,)):
        if failing:
            op = _NEGATED.get(op, "")
        if op in ("==", "<", "<=", ">", ">="):
            values = value(left), value(right)
            if values[0] is not None and values[1] is not None:
                out.append((op, values[0], values[1]))
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


#: S35: statements whose every line is the statement's own (no statement of theirs inside)
_SIMPLE = frozenset({"expression_statement", "declaration", "return_statement"})


def note_continued(
    shares: dict, node: tree_sitter.Node, where: tuple[str, int], share: sympy.Expr
) -> None:
    """S35: a simple statement written over several lines (`a[i] = b[i - 1]` on one line,
    `+ b[i - 2];` on the next) runs for the threads its first line does: the compiler
    places part of its instructions on the continuation lines, which no statement of
    their own notes. Each continuation line takes the statement's share (S16's rule for
    a line noted twice applies as before)."""
    if node.type not in _SIMPLE:
        return
    file, first = where
    for line in range(first + 1, first + node.end_point[0] - node.start_point[0] + 1):
        note_share(shares, (file, line), share)


def exits(node: tree_sitter.Node) -> bool:
    """S16: an `if` without `else` whose arm is only a `return` (bare or in braces): the
    statements after it run for the threads its condition fails for."""
    if node.child_by_field_name("alternative") is not None:
        return False
    arm = node.child_by_field_name("consequence")
    if arm is not None and arm.type == "compound_statement" and len(arm.named_children) == 1:
        arm = arm.named_children[0]
    return arm is not None and arm.type == "return_statement"


def halving_mean(
    op: str, start: sympy.Expr, end: sympy.Expr, kind: str, amount: sympy.Expr, trip: sympy.Expr
) -> sympy.Expr | None:
    """S18: the mean over its trips of a counter halved down to 1 (`s = a; s > 0; s >>= 1`
    or `s /= 2`: a, a/2, ..., 1 sum to 2a - 1) or doubled from a below an end (`s = a;
    s < e; s *= 2`: a, 2a, ... sum to e - a), exact where a (e / a) is a power of two;
    None for any other counter. A tree reduction's `if (tid < s)` keeps that many
    threads on average (S16)."""
    if amount != 2 or trip == 0 or _positions(start) or _positions(end):
        return None
    if kind == "div" and op in (">", "!=") and end == 0:
        return (2 * start - 1) / trip
    if kind == "div" and op == ">=" and end == 1:
        return (2 * start - 1) / trip
    if kind == "mul" and op == "<":
        return (end - start) / trip
    return None
