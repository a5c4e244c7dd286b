"""Rule D43: a host function that launches a kernel once per call, called in a for loop.

gpuFLOPBench profiled a kernel's second launch (rule D34). A launcher called from its
caller's loop (`for (r = 16; r <= 4096; r = r * 2) run(n, r);`) launches for the second time
on that loop's second trip, where the loop's counter has been stepped once; D8 values the
caller at the first trip. This module values the launcher's parameters at the second trip.
"""

from __future__ import annotations

import sympy
import tree_sitter
from roofcast.analyzer.callsites import CallSites
from roofcast.analyzer.hostvalues import (
    _RELATIONS,
    MAX_CALLER_LEVELS,
    HostScope,
    _comparison,
    _step,
    _steps,
    bind_parameters,
    caller_bindings,
    first_call,
)
from roofcast.analyzer.parsing import node_text, operator

_LOOPS = frozenset({"for_statement", "for_range_loop", "while_statement", "do_statement"})


def second_trip_parameters(
    launcher: tree_sitter.Node, calls: CallSites | None
) -> dict[str, sympy.Expr] | None:
    """`launcher`'s parameters as its first caller passes them on the second trip of the
    innermost loop around that call; None where that loop is not a for loop whose steps
    (D24) host code values, or whose condition does not hold on both of its first trips."""
    found = first_call(launcher, calls)
    if found is None:
        return None
    call, grammar, caller = found
    loop = _innermost_loop(call, caller)
    if loop is None or loop.type != "for_statement":
        return None
    outer = caller_bindings(caller, calls, MAX_CALLER_LEVELS - 1, placeholders=True, members=True)
    scope = HostScope(caller, grammar, outer, placeholders=True, library=calls, shared=False)
    values = _second_trip(scope, loop)
    if not values:
        return None
    scope.trip_values = (loop.id, values)
    return bind_parameters(launcher, call, scope)


def _innermost_loop(node: tree_sitter.Node, func: tree_sitter.Node) -> tree_sitter.Node | None:
    """The innermost loop of `func` that holds `node` (a walk up the parents)."""
    parent = node.parent
    while parent is not None and parent.id != func.id:
        if parent.type in _LOOPS:
            return parent
        parent = parent.parent
    return None


def _second_trip(scope: HostScope, loop: tree_sitter.Node) -> dict[str, sympy.Expr] | None:
    """The loop's stepped names at the start of its second trip: each first-trip value
    (D8) stepped once; None unless each is a whole number, and the loop's condition, a
    stepped name against a whole number, holds on the first trip and on the second."""
    condition = _comparison(loop.child_by_field_name("condition"))
    if condition is None:
        return None
    at = condition.start_byte
    first: dict[str, int] = {}
    amounts: list[tuple[str, str, int]] = []
    for name, how, step in _steps(loop):
        if name not in first:
            start = scope.name_value(name, at)
            if start is None or not start.is_Integer:
                return None
            first[name] = int(start)
        amount = scope.value(step, at)
        if amount is None or not amount.is_Integer:
            return None
        amounts.append((name, how, int(amount)))
    left = condition.child_by_field_name("left")
    right = condition.child_by_field_name("right")
    if left is None or right is None or node_text(left) not in first:
        return None
    bound = scope.value(right, at)
    if bound is None or not bound.is_Integer:
        return None
    second = dict(first)
    for name, how, amount in amounts:
        second[name] = _step(second[name], how, amount)
    relation = _RELATIONS[operator(condition)]
    counter = node_text(left)
    if not (relation(first[counter], int(bound)) and relation(second[counter], int(bound))):
        return None
    return {name: sympy.Integer(value) for name, value in second.items()}
