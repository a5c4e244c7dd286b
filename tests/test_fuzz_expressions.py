"""The `#if` and `--define` fuzz targets (tests/fuzzing/targets.py) on the CI profile's
fixed seed, ten times the profile's examples (a run costs milliseconds); bench/fuzz.py runs
them for longer, coverage-guided."""

from __future__ import annotations

from fuzzing.targets import c_conditions, condition_value_holds, hypothesis_test
from hypothesis import example, given, settings


def _many(name: str) -> None:
    settings(max_examples=10 * settings.default.max_examples)(hypothesis_test(name))()


def test_any_condition_text_is_decided_or_undecidable():
    _many("condition")


def test_any_define_argument_parses_or_is_a_usage_error():
    _many("define")


@example(("7 / 2 == 3", 1))  # C divides integers toward zero
@example(("- 7 % 2 == - 1", 1))
@example(("3 > 2 > 1", 0))  # C does not chain comparisons
@example(("1 & 2 == 2", 1))  # == binds tighter than &
@example(("! 0 & (0)", 0))  # ! binds tighter than &
@given(c_conditions())
def test_conditions_follow_c_semantics(condition):
    condition_value_holds(condition)
