"""Op counting: the lowered kernel's operations totalled into per-thread counts.

A count is the sum over nests of (operations per pass) x (the nest's trip counts). It knows
no parse tree and no rule but the arithmetic: every decision of what to count was made by
lowering, so what this module does can be checked on an IR built by hand."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import sympy
from roofcast.features.lowered import LoweredKernel, OpKey

#: counts by nest, for one count name (or one (line, name))
Tally = dict[tuple[int, ...], float | sympy.Expr]

SPECIAL_PREFIX = "special:"


class OpCounter:
    """Totals of one lowered kernel."""

    def __init__(self, lowered: LoweredKernel) -> None:
        self.lowered = lowered
        self.nest_trips = lowered.nest_trips

    def total(self, tally: Tally) -> sympy.Expr:
        """Sum over nests of count x the nest's trips (one sympy Add, not a chain)."""
        terms = []
        whole = 0  # integer counts in nests of integer trips: summed exactly, without sympy
        for nest, count in tally.items():
            if count == 0:
                continue
            trips = self.nest_trips(nest)
            if isinstance(count, sympy.Basic) and not count.is_Number:
                terms.append(sympy.Mul(count, trips))  # a share of a block's copy: bytes/blockDim
                continue
            integral = float(count).is_integer()
            if integral and isinstance(trips, sympy.Integer):
                whole += int(count) * int(trips)
                continue
            number = sympy.Integer(int(count)) if integral else sympy.Float(count)
            terms.append(sympy.Mul(number, trips))  # what `*` calls, without its wrappers
        if whole:
            terms.append(sympy.Integer(whole))
        return sympy.Add(*terms) if terms else sympy.Integer(0)

    def per_thread(self) -> dict[str, sympy.Expr]:
        """Each count name's per-thread total (special functions under `special:k.p`)."""
        return {name: self.total(tally) for name, tally in _group(self.lowered.ops, _name)}

    def by_line(self) -> dict[tuple[int, str], sympy.Expr]:
        """Each (source line, count name)'s per-thread total."""
        return {key: self.total(tally) for key, tally in _group(self.lowered.ops, _line_name)}

    def line_rules(self) -> dict[tuple[int, str], tuple[str, ...]]:
        """The rules that produced each (source line, count name)."""
        found: dict[tuple[int, str], set[str]] = defaultdict(set)
        for (name, rule, line, _), count in self.lowered.ops.items():
            if count != 0:
                found[(line, name)].add(rule)
        return {key: tuple(sorted(rules)) for key, rules in found.items()}

    def line_nests(self) -> dict[int, list[str]]:
        """The trip-count products of the loop nests each source line counts under."""
        nests: dict[int, set[str]] = defaultdict(set)
        for _, _, line, nest in self.lowered.ops:
            found = nests[line]  # a line counted outside any loop has an empty list
            if nest:
                found.add(str(self.nest_trips(nest)))
        return {line: sorted(found) for line, found in nests.items()}


def special_kind(name: str) -> tuple[str, str] | None:
    """`special:div.sp` -> ("div", "sp"); None for other count names."""
    if not name.startswith(SPECIAL_PREFIX):
        return None
    kind, _, precision = name[len(SPECIAL_PREFIX) :].partition(".")
    return kind, precision


def _name(key: OpKey) -> str:
    return key[0]


def _line_name(key: OpKey) -> tuple[int, str]:
    return key[2], key[0]


def _group(
    ops: Mapping[OpKey, float | sympy.Expr], by: Callable[[OpKey], Hashable]
) -> Iterable[tuple[Any, Tally]]:
    """The ops' counts summed per nest within each group `by(key)`."""
    grouped: dict[Hashable, Tally] = defaultdict(lambda: defaultdict(float))
    for key, count in ops.items():
        grouped[by(key)][key[3]] += count
    return grouped.items()
