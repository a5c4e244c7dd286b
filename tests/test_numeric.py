"""The numeric evaluator used by resolution must give sympy's numbers, exactly."""

from __future__ import annotations

import random

import pytest
import sympy
from roofcast.features.numeric import NotNumeric, evaluate
from roofcast.features.symbolic import symbol

N, B, G = symbol("n"), symbol("blockDim_x"), symbol("gridDim_x")


def _random_count(rng: random.Random, depth: int = 0) -> sympy.Expr:
    """Expressions of the shapes counting builds: sums of products of trip counts."""
    leaves = [N, B, G, sympy.Integer(rng.randint(0, 9)), sympy.Rational(rng.randint(1, 7), 3)]
    if depth > 2:
        return rng.choice(leaves)
    a, b = _random_count(rng, depth + 1), _random_count(rng, depth + 1)
    shape = rng.choice(["add", "mul", "ceil", "floor", "max", "log", "leaf"])
    return {
        "add": lambda: a + b,
        "mul": lambda: a * b,
        "ceil": lambda: sympy.ceiling((a - b) / B),
        "floor": lambda: sympy.floor(a / 4),
        "max": lambda: sympy.Max(a - b, 0),
        "log": lambda: sympy.floor(sympy.log(N) / sympy.log(2)) + 1,
        "leaf": lambda: rng.choice(leaves),
    }[shape]()


def test_evaluation_equals_sympy_substitution_on_random_counts():
    rng = random.Random(0)
    checked = 0
    for _ in range(400):
        expr = _random_count(rng)
        values = {
            "n": rng.choice([1, 7, 1000, 1024, 4096]),
            "blockDim_x": rng.choice([1, 3, 256]),
            "gridDim_x": rng.choice([1, 80, 1024]),
        }
        exact = expr.xreplace({symbol(k): sympy.Integer(v) for k, v in values.items()})
        assert float(evaluate(expr, values)) == pytest.approx(float(exact), rel=1e-12), expr
        checked += 1
    assert checked == 400


def test_floor_of_a_log_ratio_is_not_lost_to_rounding():
    # log(8) * (1/log(2)), sympy's form of the ratio, is 2.9999999999999996 in floating point
    trips = sympy.floor(sympy.log(symbol("t")) / sympy.log(2)) + 1
    assert evaluate(trips, {"t": 8.0}) == 4
    assert evaluate(trips, {"t": 128}) == 8


def test_unbound_names_and_unknown_functions_are_refused():
    with pytest.raises(NotNumeric):
        evaluate(N + 1, {})
    with pytest.raises(NotNumeric):
        evaluate(sympy.gamma(N), {"n": 3})


@pytest.mark.rule("T11")
def test_a_remainder_evaluates_as_c_does():
    """`a % b` kept symbolic (T11) takes the dividend's sign, as C's `%` does, where sympy's
    Mod would take the divisor's."""
    rem = sympy.Mod(N, B)
    assert evaluate(rem, {"n": 1000, "blockDim_x": 256}) == 1000 % 256
    assert evaluate(rem, {"n": -7, "blockDim_x": 3}) == -1
    assert evaluate(rem, {"n": 7, "blockDim_x": -3}) == 1
    with pytest.raises(NotNumeric):
        evaluate(rem, {"n": 7, "blockDim_x": 0})
