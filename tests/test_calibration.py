"""Calibrated confidence: the isotonic map never decreases with distance from the roof, stays
in [0.5, 1], and the reliability table / ECE measure what they claim."""

from __future__ import annotations

import numpy as np
import pytest

from roofcast.predictors.calibration import (
    Calibration,
    cross_fitted_confidence,
    fit_calibration,
    reliability,
)


def _verdicts(n: int = 4000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Gaps whose chance of a right verdict rises from 0.5 at the roof to 1 far from it."""
    rng = np.random.default_rng(seed)
    gap = rng.uniform(-2, 2, n)
    truth = 0.5 + 0.5 * np.minimum(np.abs(gap), 1.0)
    return gap, rng.random(n) < truth


def test_map_is_monotone_bounded_and_round_trips():
    gap, right = _verdicts()
    calibration = fit_calibration(gap, right)
    grid = np.linspace(0, 3, 61)
    conf = calibration.confidence(grid)
    assert np.all(np.diff(conf) >= 0) and conf.min() >= 0.5 and conf.max() <= 1.0
    again = Calibration.from_json(calibration.to_json())
    np.testing.assert_allclose(again.confidence(grid), conf)
    assert calibration.confidence(0.05) < 0.7 and calibration.confidence(1.5) > 0.9


def test_calibrated_confidence_has_small_ece_and_overconfidence_a_large_one():
    gap, right = _verdicts()
    folds = np.arange(len(gap)) % 5
    _, ece = reliability(cross_fitted_confidence(gap, right, folds), right)
    assert ece < 0.03
    rows, overconfident = reliability(np.full(len(gap), 0.99), right)
    assert overconfident == pytest.approx(0.99 - right.mean(), abs=1e-9)
    assert sum(r.n for r in rows) == len(gap)


def test_malformed_breakpoints_are_refused():
    with pytest.raises(ValueError):
        Calibration.from_json({"distance": [0.0, 1.0], "accuracy": [0.6]})
