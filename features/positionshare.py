"""Compile mode: thread shares of positions the compiler divides or tiles (docs/counting.md
S48, S49).

S16 reads a comparison of a thread position with a value no position changes. Two more
shapes of a position appear in guards:

- a quotient compared for equality (`wid = tid / 32; if (wid == 0)`): C's integer
  division maps c consecutive positions onto each quotient, so the arm runs for c threads
  per value of the positions, not one (S48);
- a tile's position (`h = blockIdx.z / G * 16 + threadIdx.y`, `w = blockIdx.z % G * 16 +
  threadIdx.x`) compared with a bound: the block's quotient (remainder) by G picks a tile
  of as many positions as the block has threads along that axis, so the tiles cover
  0 .. tiles x tile - 1 once each, and a bound inside the last tile keeps that many of
  them (S49).
"""

from __future__ import annotations

import sympy
from roofcast.features.symbolic import LAUNCH_PREFIXES, THREAD_POSITION_PREFIXES, symbol


def _positions(expr: sympy.Expr) -> set[sympy.Symbol]:
    return {s for s in expr.free_symbols if s.name.startswith(THREAD_POSITION_PREFIXES)}


def _extent(position: sympy.Symbol) -> sympy.Symbol:
    prefix = "blockDim_" if position.name.startswith("threadIdx_") else "gridDim_"
    return symbol(prefix + position.name.rsplit("_", 1)[-1])


def quotient_share(expr: sympy.Expr) -> sympy.Expr | None:
    """S48: the share of the threads for which `expr == value` holds, when `expr` is a
    sum of thread positions with integer coefficients, one of them 1, over a constant
    integer c >= 2 (`(threadIdx.y * 8 + threadIdx.x) / 32`): c consecutive sums share each
    quotient, so c of the positions' combinations, at most all of them. As S16 has it for
    `==`, the sum takes each value once over the positions it names. None for any other
    value."""
    numerator, denominator = sympy.fraction(sympy.together(expr))
    if not denominator.is_Integer or denominator < 2:
        return None
    numerator = sympy.expand(numerator)
    positions = _positions(numerator)
    if not positions or not all(s.name.startswith(LAUNCH_PREFIXES) for s in numerator.free_symbols):
        return None
    if not numerator.is_polynomial(*positions):
        return None
    poly = sympy.Poly(numerator, *positions)
    units = False
    for monom, coeff in poly.terms():
        if not any(monom):
            continue
        if sum(monom) != 1:
            return None
        units = units or coeff == 1
    if not units:
        return None
    extents = sympy.Mul(*(_extent(p) for p in sorted(positions, key=lambda s: s.name)))
    return sympy.Min(denominator, extents) / extents


def tiled(expr: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr] | None:
    """S49: (its value at position 0, how many values) of a tile's position: a tile
    size T (a constant integer) times a block position's quotient `b / G` (gridDim / G
    tiles) or remainder `b % G` (G tiles) by a value G no position changes, plus one thread
    position, plus a constant. The tile is taken to be the block's extent along that
    thread position (what tiling with T threads per axis means), so the values are
    0 .. tiles x T - 1 once each. None for any other value."""
    expr = sympy.expand(expr)
    positions = _positions(expr)
    threads = [p for p in positions if p.name.startswith("threadIdx_")]
    blocks = [p for p in positions if p.name.startswith("blockIdx_")]
    if len(threads) != 1 or len(blocks) != 1 or len(positions) != 2:
        return None
    (thread,), (block,) = threads, blocks
    rest = sympy.expand(expr - thread)
    if thread in rest.free_symbols:
        return None
    first = rest.subs(block, 0)
    if _positions(first):
        return None
    size, quotient = sympy.expand(rest - first).as_coeff_Mul()
    if not size.is_Integer or size < 2:
        return None
    if isinstance(quotient, sympy.Mod) and quotient.args[0] == block:
        divisor = quotient.args[1]
    else:
        divisor = sympy.simplify(block / quotient)
        if divisor.is_number or sympy.simplify(block / divisor) != quotient:
            return None
    if _positions(divisor):
        return None
    # C's `/` and `%` of an int position take an int G: a value bound without truncating
    # (the host's `(w + 15) / 16`) is rounded down as C has it
    whole = sympy.floor(divisor, evaluate=False)
    tiles = whole if isinstance(quotient, sympy.Mod) else _extent(block) / whole
    if _positions(tiles):
        return None
    return first, size * tiles
