"""Scores: label metrics (scikit-learn) and count accuracy (log10 error of launch totals).

Labels are 'compute' / 'bandwidth'. A prediction of 'unknown' (the predictor could not
decide, or the kernel failed to analyze) is a miss: wrong for accuracy and recall, and
kept out of the 2x2 confusion matrix but counted beside it.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import (
    accuracy_score,
    confusion_matrix,
    f1_score,
    matthews_corrcoef,
    recall_score,
)

CLASSES: tuple[str, str] = ("compute", "bandwidth")
#: Measured launch totals we compare against, in the manifest's column names.
COUNT_COLUMNS: tuple[str, ...] = ("sp_flops", "dp_flops", "int_ops", "dram_bytes")


def label_metrics(y_true: Sequence[str], y_pred: Sequence[str]) -> dict:
    """accuracy, balanced accuracy, per-class F1, MCC and confusion for one set of rows.

    Balanced accuracy is the mean recall over the classes present in `y_true` (as
    scikit-learn's balanced_accuracy_score), with 'unknown' predictions counted as misses.
    """
    n = len(y_true)
    confusion = {t: {p: 0 for p in CLASSES} for t in CLASSES}
    out: dict = {"n": n, "accuracy": None, "balanced_accuracy": None,
                 "f1": {c: None for c in CLASSES}, "mcc": None, "confusion": confusion,
                 "unknown": sum(1 for p in y_pred if p not in CLASSES)}
    if n == 0:
        return out
    truth, pred = list(y_true), list(y_pred)
    present = [c for c in CLASSES if c in truth]
    out["accuracy"] = float(accuracy_score(truth, pred))
    out["balanced_accuracy"] = float(
        recall_score(truth, pred, labels=present, average="macro", zero_division=0)
    )
    f1 = f1_score(truth, pred, labels=list(CLASSES), average=None, zero_division=0)
    out["f1"] = {c: float(v) for c, v in zip(CLASSES, f1, strict=True)}
    out["mcc"] = float(matthews_corrcoef(truth, pred)) if len(set(truth) | set(pred)) > 1 \
        else 0.0
    matrix = confusion_matrix(truth, pred, labels=list(CLASSES))
    for i, t in enumerate(CLASSES):
        for j, p in enumerate(CLASSES):
            confusion[t][p] = int(matrix[i, j])
    return out


@dataclass(frozen=True)
class CountPair:
    """A predicted launch total beside the measured one, for one row and one quantity."""

    column: str
    predicted: float
    measured: float
    fully_resolved: bool


def signed_log10_error(predicted: float, measured: float) -> float:
    """log10((p + 1) / (m + 1)): positive when we over-count. +1 keeps zero counts (common:
    no DP work) comparable."""
    return math.log10((max(predicted, 0.0) + 1.0) / (max(measured, 0.0) + 1.0))


def log10_error(predicted: float, measured: float) -> float:
    """|log10((p + 1) / (m + 1))|: +1 keeps zero counts (common: no DP work) comparable."""
    return abs(signed_log10_error(predicted, measured))


#: |log10 error| at or below which a count is "within 2x" (the tolerance absorbs rounding).
WITHIN_2X = math.log10(2.0) + 1e-12


def _summary(pairs: Sequence[CountPair]) -> dict:
    if not pairs:
        return {"n": 0, "male": None, "median_ale": None, "within_2x": None}
    errors = np.array([log10_error(p.predicted, p.measured) for p in pairs])
    return {
        "n": len(pairs),
        "male": float(errors.mean()),
        "median_ale": float(np.median(errors)),
        "within_2x": float((errors <= WITHIN_2X).mean()),
    }


def error_budget(signed_errors: Sequence[float]) -> dict:
    """Where one quantity's error lies, from signed log10 errors (positive = over-count):
    share within 2x, median signed and absolute error, and the shares more than 2x over
    and more than 2x under. A median alone hides whether misses lean one way."""
    if not len(signed_errors):
        return {"n": 0, "within_2x": None, "median_signed": None, "median_abs": None,
                "over_2x": None, "under_2x": None}
    errors = np.asarray(signed_errors, dtype=float)
    return {
        "n": int(errors.size),
        "within_2x": float((np.abs(errors) <= WITHIN_2X).mean()),
        "median_signed": float(np.median(errors)),
        "median_abs": float(np.median(np.abs(errors))),
        "over_2x": float((errors > WITHIN_2X).mean()),
        "under_2x": float((errors < -WITHIN_2X).mean()),
    }


def count_metrics(pairs: Sequence[CountPair]) -> dict:
    """Per quantity: mean absolute log10 error (MALE; its median beside it, as one wild
    count can dominate a mean) and share within 2x, over all rows with a prediction and
    over the rows whose counts were fully resolved."""
    out: dict = {}
    for column in COUNT_COLUMNS:
        mine = [p for p in pairs if p.column == column]
        out[column] = {
            "all": _summary(mine),
            "fully_resolved": _summary([p for p in mine if p.fully_resolved]),
        }
    return out
