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
