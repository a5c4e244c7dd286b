"""Confidence that means what it says: P(verdict right | distance from the balance point).

A verdict's distance from its balance point (decades between the corrected intensity and the
roof) is mapped to the share of verdicts that were right at that distance on held-out
families, by isotonic regression (further from the roof is never less sure). The map ships
as breakpoints in the model's JSON and is applied with `numpy.interp`: no scikit-learn at
prediction time. The reliability table and expected calibration error (ECE) say how well
stated confidence matched observed accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Confidence bins of the reliability table (a verdict is never less than 50% sure).
BIN_EDGES: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class Calibration:
    """Piecewise-linear map from |gap| (decades) to P(right), non-decreasing."""

    distance: tuple[float, ...]
    accuracy: tuple[float, ...]

    def confidence(self, gap: np.ndarray | float) -> np.ndarray:
        """P(right) at each |gap|; held at the ends, never below one half."""
        value = np.interp(np.abs(gap), self.distance, self.accuracy)
        return np.clip(value, 0.5, 1.0)

    def to_json(self) -> dict:
        return {"distance": list(self.distance), "accuracy": list(self.accuracy)}

    @classmethod
    def from_json(cls, data: dict) -> Calibration:
        distance = tuple(float(v) for v in data["distance"])
        accuracy = tuple(float(v) for v in data["accuracy"])
        if not distance or len(distance) != len(accuracy):
            raise ValueError("calibration breakpoints are malformed; retrain")
        return cls(distance, accuracy)


def fit_calibration(gap: np.ndarray, right: np.ndarray) -> Calibration:
    """Isotonic fit of right (0/1) on |gap|: the shipped map (scikit-learn at training only)."""
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=0.5, y_max=1.0, increasing=True, out_of_bounds="clip")
    iso.fit(np.abs(gap), right.astype(float))
    return Calibration(
        tuple(float(f"{v:.6g}") for v in iso.X_thresholds_),
        tuple(float(f"{v:.6g}") for v in iso.y_thresholds_),
    )


def cross_fitted_confidence(gap: np.ndarray, right: np.ndarray, fold_of: np.ndarray) -> np.ndarray:
    """Each fold's confidences from a map fitted on the other folds, so the reliability
    table scores calibration on families the map never saw."""
    out = np.zeros(len(gap))
    for fold in np.unique(fold_of):
        test = fold_of == fold
        out[test] = fit_calibration(gap[~test], right[~test]).confidence(gap[test])
    return out


@dataclass(frozen=True)
class ReliabilityRow:
    low: float
    high: float
    n: int
    confidence: float  # mean stated confidence in the bin
    accuracy: float  # share of verdicts in the bin that were right


def reliability(
    confidence: np.ndarray, right: np.ndarray, edges: Sequence[float] = BIN_EDGES
) -> tuple[list[ReliabilityRow], float]:
    """Rows of the reliability table and the ECE (bin-size-weighted |confidence - accuracy|)."""
    rows, ece, total = [], 0.0, len(confidence)
    for i, (low, high) in enumerate(zip(edges, edges[1:], strict=False)):
        last = i == len(edges) - 2
        inside = (confidence >= low) & ((confidence <= high) if last else (confidence < high))
        n = int(inside.sum())
        if not n:
            rows.append(ReliabilityRow(low, high, 0, float("nan"), float("nan")))
            continue
        mean_conf, acc = float(confidence[inside].mean()), float(right[inside].mean())
        rows.append(ReliabilityRow(low, high, n, mean_conf, acc))
        ece += n / max(total, 1) * abs(mean_conf - acc)
    return rows, ece
