"""Turn row outcomes into the `evaluate` JSON contract (schema_version 1)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from roofcast.evaluation.counts import count_pairs
from roofcast.evaluation.metrics import count_metrics, label_metrics

if TYPE_CHECKING:
    from roofcast.evaluation.runner import EvaluationResult, RowOutcome

SCHEMA_VERSION = 1
LANGUAGES = ("CUDA", "OMP")


def _labels(outcomes: Sequence[RowOutcome]) -> dict:
    matched = [o for o in outcomes if o.matched]
    scores = label_metrics([o.row.label for o in matched], [o.predicted or "unknown"
                                                             for o in matched])
    total = len(outcomes)
    return {
        "rows": total,
        "n": len(matched),
        "coverage": len(matched) / total if total else None,
        **{k: v for k, v in scores.items() if k != "n"},
    }


def score(result: EvaluationResult) -> dict:
    """The JSON object `roofcast evaluate --format json` prints."""
    outcomes = result.outcomes
    overall = _labels(outcomes)
    by_language = {}
    for language in LANGUAGES:
        mine = [o for o in outcomes if o.row.language == language]
        if mine:
            by_language[language] = _labels(mine)
    pairs = [p for o in outcomes for p in count_pairs(o)]
    return {
        "schema_version": SCHEMA_VERSION,
        "predictor": result.predictor,
        "gpu": result.gpu.key,
        "rows": overall["rows"],
        "n": overall["n"],
        "coverage": overall["coverage"],
        "accuracy": overall["accuracy"],
        "balanced_accuracy": overall["balanced_accuracy"],
        "f1": overall["f1"],
        "mcc": overall["mcc"],
        "confusion": overall["confusion"],
        "unknown": overall["unknown"],
        "by_language": by_language,
        "counts": count_metrics(pairs),
        "unmatched": [
            {"row": o.row.index, "target": o.row.target, "language": o.row.language,
             "kernel": o.row.key, "reason": o.match.reason}
            for o in outcomes if not o.matched
        ],
        "failures": [
            {"row": o.row.index, "target": o.row.target, "kernel": o.row.key, "error": o.error}
            for o in outcomes if o.matched and o.error
        ],
        "match_notes": [
            {"row": o.row.index, "kernel": o.row.key, "note": o.match.note}
            for o in outcomes if o.matched and o.match.note
        ],
        "seconds": round(result.seconds, 2),
    }
