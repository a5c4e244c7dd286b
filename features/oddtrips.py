"""Rule S54: a loop the compiler unrolled c times whose odd trips run one straight copy
after it (S29) runs floor(T / c) times and its copy (T mod c) times, when T is one exact
trip count every thread shares (a kernel argument, `order`). S29's T / c and dropped copy
are right on average over many trips but not for a small T: at T = 1 the unrolled body
never runs and the copy runs once. A T that is a share, an average or a ceiling over the
launch (grid-stride trips) is no thread's exact count, so S29 stands there."""

from __future__ import annotations

import sympy
from roofcast.features.symbolic import LAUNCH_PREFIXES


def exact_trip(trip: sympy.Expr) -> bool:
    """Whether `trip` is an integer polynomial in values all threads share (no launch
    extents, positions, ceilings, maxima or fractions)."""
    symbols = trip.free_symbols
    if any(s.name.startswith(LAUNCH_PREFIXES) for s in symbols):
        return False
    if not symbols:
        return isinstance(trip, sympy.Integer)
    if not trip.is_polynomial(*symbols):
        return False
    return all(c.is_Integer for c in sympy.Poly(trip, *symbols).coeffs())


def main_trips(trip: sympy.Expr, copies: int) -> sympy.Expr:
    """The source trips the unrolled loop covers: c * floor(T / c) (S5 divides by c)."""
    return copies * sympy.floor(trip / copies)


def odd_runs(trip: sympy.Expr, copies: int) -> sympy.Expr:
    """How often the straight copy after the loop runs: T mod c."""
    return sympy.Mod(trip, copies)
