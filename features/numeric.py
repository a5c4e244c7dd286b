"""Evaluate a count expression at numbers, exactly, without building sympy objects.

Substituting numbers into sympy expressions re-runs sympy's simplification at every node
(ceilings of rationals cost milliseconds); resolution only needs the number. Integers and
rationals stay exact (Python int / Fraction), so ceilings and floors agree with sympy's.
Anything outside the arithmetic that counting produces raises `NotNumeric`, and the caller
falls back to sympy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction

import sympy

Number = int | float | Fraction


class NotNumeric(Exception):
    """The expression holds something this evaluator does not handle (or an unbound name)."""


def evaluate(expr: sympy.Basic, values: Mapping[str, Number]) -> Number:
    if expr.is_Integer:
        return int(expr)
    if expr.is_Rational:
        return Fraction(int(expr.p), int(expr.q))
    if expr.is_Float:
        return float(expr)
    if expr.is_Symbol:
        try:
            return values[expr.name]
        except KeyError:
            raise NotNumeric(expr.name) from None
    args = [evaluate(arg, values) for arg in expr.args]
    if expr.is_Add:
        return sum(args[1:], args[0])
    if expr.is_Mul:
        out = args[0]
        for arg in args[1:]:
            out = out * arg
        return out
    if expr.is_Pow:
        return _power(*args)
    handler = _FUNCTIONS.get(type(expr).__name__)
    if handler is None:
        raise NotNumeric(type(expr).__name__)
    return handler(*args)


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(exponent, int):
        if exponent < 0 and base == 0:
            raise NotNumeric("division by zero")
        if exponent < 0 and not isinstance(base, float):
            return 1 / Fraction(base) ** -exponent  # exact, like sympy's Rational
        return base**exponent
    if base < 0:
        raise NotNumeric("complex power")
    return float(base) ** float(exponent)


def _log(x: Number, base: Number | None = None) -> float:
    if x <= 0 or (base is not None and base <= 0):
        raise NotNumeric("log of a non-positive number")
    return math.log(x) if base is None else math.log(x) / math.log(base)


def _snapped(x: Number) -> Number:
    """A float within rounding error of an integer is that integer: log(8) * (1/log(2)) is 3
    to sympy and 2.9999999999999996 in floating point; a floor must not drop a loop trip."""
    if isinstance(x, float) and math.isfinite(x):
        nearest = round(x)
        if abs(x - nearest) <= 1e-9 * max(1.0, abs(x)):
            return nearest
    return x


_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "ceiling": lambda x: math.ceil(_snapped(x)),
    "floor": lambda x: math.floor(_snapped(x)),
    "Mod": lambda a, b: (
        math.fmod(a, b) if isinstance(a, float) or isinstance(b, float) else _c_remainder(a, b)
    ),
    "Max": max,
    "Min": min,
    "log": _log,
    "Abs": abs,
}


def _c_remainder(a: Number, b: Number) -> Number:
    """C's `%`: the remainder takes the dividend's sign (sympy's Mod takes the divisor's)."""
    if b == 0:
        raise NotNumeric("division by zero")
    r = (a if a >= 0 else -a) % (b if b >= 0 else -b)
    return -r if a < 0 else r
