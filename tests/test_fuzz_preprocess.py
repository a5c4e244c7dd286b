"""The preprocessor fuzz target (tests/fuzzing/targets.py) on the CI profile's fixed seed.

bench/fuzz.py runs the same target for longer, coverage-guided."""

from __future__ import annotations

from fuzzing.targets import check_preprocess


def test_preprocessor_keeps_lines_and_never_raises():
    check_preprocess()
