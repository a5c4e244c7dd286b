"""Compile mode: a thread position divided by a constant, compared with a bound
(docs/counting.md S44).

A kernel that gives several threads one item (`i = id / 36; if (i < n)`: 36 threads per
site) compares the quotient with the item count. Over the launch the quotient takes each
value c times, so `id / c < n` holds for the positions below c x n: a share as S16's
`id < c * n`, not every thread.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy

#: (its value at position 0, how many values) of an enumerated value, or None (S16's)
Enumerate = Callable[[sympy.Expr], "tuple[sympy.Expr, sympy.Expr] | None"]


def divided(
    expr: sympy.Expr, enumerated: Enumerate
) -> tuple[tuple[sympy.Expr, sympy.Expr], int] | None:
    """S44: ((first, count) of the dividend, the divisor c) of a value that is an S16
    enumerated value over a constant integer c >= 2 (`(blockIdx.x * blockDim.x +
    threadIdx.x) / 36`); None for any other value."""
    numerator, denominator = sympy.fraction(sympy.together(expr))
    if not denominator.is_Integer or denominator < 2:
        return None
    counted = enumerated(sympy.expand(numerator))
    if counted is None:
        return None
    return counted, int(denominator)


def kept_below(op: str, bound: sympy.Expr, first: sympy.Expr, divisor: int) -> sympy.Expr:
    """S44: how many of the dividend's values from `first` on make `dividend / divisor OP
    bound` hold, for C's integer division of non-negative values: `q < R` is `d < c R`,
    `q <= R` is `d < c (R + 1)`."""
    top = bound + 1 if op == "<=" else bound
    return divisor * top - first


def multiplied(
    expr: sympy.Expr, enumerated: Enumerate
) -> tuple[tuple[sympy.Expr, sympy.Expr], int, sympy.Expr] | None:
    """S52: ((first, count) of y, the factor c, the offset k) of a value `c * y + k` whose
    y is an S16 enumerated value and c a constant integer >= 2 (`16 * threadIdx.x - 1`:
    every 16th value); None for any other value."""
    offset, rest = sympy.expand(expr).as_coeff_Add()
    factor, inner = sympy.factor_terms(rest).as_coeff_Mul()
    if not factor.is_Integer or factor < 2:
        return None
    counted = enumerated(sympy.expand(inner))
    if counted is None:
        return None
    return counted, int(factor), offset


def kept_scaled(
    op: str, bound: sympy.Expr, first: sympy.Expr, factor: int, offset: sympy.Expr
) -> sympy.Expr:
    """S52: how many of y's values from `first` on make `factor * y + offset OP bound`
    hold: `c y + k < R` is `y < (R - k) / c`, the values below its ceiling; `<=` keeps
    those up to its floor."""
    top = (bound - offset) / factor - first
    return sympy.floor(top) + 1 if op == "<=" else sympy.ceiling(top)


def below_floor(expr: sympy.Expr, op: str, bound: sympy.Expr) -> sympy.Expr:
    """S52: `max(a, x) < R` with a constant `a` below R is `x < R` (`max(0, tid * 16 -
    1)`, a clamp that never decides); the value unchanged otherwise."""
    if not isinstance(expr, sympy.Max):
        return expr
    kept = []
    for arg in expr.args:
        margin = bound - arg
        holds = margin.is_positive if op == "<" else margin.is_nonnegative
        if not (arg.is_number and holds):
            kept.append(arg)
    if len(kept) == len(expr.args) or not kept:
        return expr
    return kept[0] if len(kept) == 1 else sympy.Max(*kept)
