"""The counted kernel IR: what lowering a kernel body produces, as plain data.

Lowering (`features/lowering.py`) walks the parse tree once; what it records here holds no
parse-tree handle, so the two consumers are testable on their own: op counting
(`features/opcount.py`) turns the operations into per-thread counts, and the traffic model
(`features/traffic.py`) turns the accesses into launch DRAM bytes."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import sympy
from roofcast.features.traffic import Access, Dim


@dataclass(frozen=True)
class Loop:
    """One loop of the walk: its trip count (a sympy expression), where it is, and its
    counter (empty for `while`/`do` loops and nests counted flat)."""

    id: int
    trip: sympy.Expr
    line: int
    variable: str = ""


#: (count name, rule id, source line, nest): the nest is the ids of the enclosing loops,
#: outermost first. Count names are the FeatureVector's tally fields, or
#: `special:<kind>.<precision>` for division and special functions (rule F4).
OpKey = tuple[str, str, int, tuple[int, ...]]


@dataclass
class LoweredKernel:
    """Per-thread operations by nest, the loops those nests are made of, and the distinct
    global accesses over the traffic model's dims.

    `ops` maps an OpKey to how many of that operation one pass through its nest's body does
    (a number, or a sympy expression for a share of a block's copy); op counting multiplies
    it by the nest's trip counts."""

    loops: dict[int, Loop] = field(default_factory=dict)
    ops: defaultdict[OpKey, float | sympy.Expr] = field(default_factory=lambda: defaultdict(float))
    accesses: list[Access] = field(default_factory=list)
    dims: list[Dim] = field(default_factory=list)

    _products: dict[tuple[int, ...], sympy.Expr] = field(
        default_factory=dict, repr=False, compare=False
    )

    def add_loop(self, trip: sympy.Expr, line: int, variable: str = "") -> Loop:
        loop = Loop(len(self.loops), trip, line, variable)
        self.loops[loop.id] = loop
        return loop

    def nest_trips(self, nest: tuple[int, ...]) -> sympy.Expr:
        """The product of a nest's trip counts (built once per nest: every count and access
        of the nest shares it)."""
        product = self._products.get(nest)
        if product is None:
            product = sympy.Mul(*(self.loops[loop_id].trip for loop_id in nest))
            self._products[nest] = product
        return product
