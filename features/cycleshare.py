"""Compile mode: a remainder by a doubling loop counter tested for zero (docs/counting.md
S50).

A tree reduction written `for (i = 1; i <= n; i *= 2) if (ty % i == 0) ...` keeps one
thread in i on the trip with counter i: the guarded line runs 1/i of the trips' threads
on each trip, so its share over the loop is the mean of 1/i over the trips, not 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import sympy
import tree_sitter
from roofcast.features.symbolic import THREAD_POSITION_PREFIXES, symbol


def inverse_mean(
    kind: str, amount: sympy.Expr, start: sympy.Expr, trip: sympy.Expr
) -> sympy.Expr | None:
    """S50: the mean of 1 / counter over a loop's `trip` trips for a counter doubled from
    `start` (a, 2a, 4a, ...: the sum is (2 - 2^(1-trip)) / a) or halved from it (a, a/2,
    ...: (2^trip - 1) / a); None for any other step or a start that names a position."""
    if amount != 2 or kind not in ("mul", "div") or trip == 0:
        return None
    if any(s.name.startswith(THREAD_POSITION_PREFIXES) for s in start.free_symbols):
        return None
    if kind == "mul":
        return (2 - 2 ** (1 - trip)) / (start * trip)
    return (2**trip - 1) / (start * trip)


def _extent(expr: sympy.Expr) -> sympy.Expr | None:
    """The count of one thread position plus a constant (`threadIdx.y`), else None."""
    positions = [s for s in expr.free_symbols if s.name.startswith(THREAD_POSITION_PREFIXES)]
    if len(positions) != 1 or sympy.expand(expr - positions[0]).free_symbols:
        return None
    prefix = "blockDim_" if positions[0].name.startswith("threadIdx_") else "gridDim_"
    return symbol(prefix + positions[0].name.rsplit("_", 1)[-1])


def remainder_share(
    pairs: Iterable[tuple[str, sympy.Expr, sympy.Expr]], inverses: Mapping[sympy.Symbol, sympy.Expr]
) -> sympy.Expr:
    """S50: the share of the threads for which every `position % counter == value` holds,
    the counter one whose mean inverse over its loop is in `inverses` (by the symbol the
    remainder's divisor stands for): on each trip one position in i, at least one of the
    position's E values, so Max(mean of 1/i, 1 / E), exact where i never exceeds E. 1 for
    any other comparison."""
    share: sympy.Expr = sympy.Integer(1)
    for op, left, right in pairs:
        if op != "==":
            continue
        for side, other in ((left, right), (right, left)):
            if not isinstance(side, sympy.Mod) or side.args[1] not in inverses:
                continue
            extent = _extent(side.args[0])
            if extent is None or any(
                s.name.startswith(THREAD_POSITION_PREFIXES) for s in other.free_symbols
            ):
                continue
            share = share * sympy.Max(inverses[side.args[1]], 1 / extent)
            break
    return share


def copies(loop: tree_sitter.Node, name: str) -> list[str]:
    """S50: what the statements of a loop set `name` to, each a name or "" for anything
    else (`int p = i;` gives ["i"]), walked with a stack."""
    out: list[str] = []
    pending = [loop.child_by_field_name("body")]
    while pending:
        node = pending.pop()
        if node is None:
            continue
        if node.type in ("init_declarator", "assignment_expression"):
            target = node.child_by_field_name(
                "declarator" if node.type == "init_declarator" else "left"
            )
            value = node.child_by_field_name("value" if node.type == "init_declarator" else "right")
            if target is not None and target.type == "identifier" and target.text == name.encode():
                plain = (
                    value is not None
                    and value.type == "identifier"
                    and (node.type == "init_declarator" or _operator_type(node) == "=")
                )
                out.append((value.text or b"").decode() if plain and value is not None else "")
        elif node.type in ("update_expression",):
            argument = node.child_by_field_name("argument")
            if argument is not None and argument.text == name.encode():
                out.append("")
        pending.extend(node.named_children)
    return out


def _operator_type(node: tree_sitter.Node) -> str:
    """The node type of an assignment's operator, or "" when it has none."""
    operator = node.child_by_field_name("operator")
    return operator.type if operator is not None else ""
