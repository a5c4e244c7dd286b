"""The preprocessor fuzz target (tests/fuzzing/targets.py) on the CI profile's fixed seed,
ten times the profile's examples (a run costs milliseconds). bench/fuzz.py runs the same
target for longer, coverage-guided."""

from __future__ import annotations

from fuzzing.targets import hypothesis_test
from hypothesis import settings


def test_preprocessor_keeps_lines_and_never_raises():
    settings(max_examples=10 * settings.default.max_examples)(hypothesis_test("preprocess"))()
