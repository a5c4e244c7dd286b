"""Score predictors against profiled ground truth (a manifest CSV in gpuFLOPBench's layout).

    rows = load_manifest("dev.csv")
    result = evaluate(rows, "HeCBench/src", load_gpu("rtx3080"), get_predictor("roofline"))
    result.to_json()  # the `roofcast evaluate --format json` object

`iter_row_results` / `analyze_rows` give the per-row (row, KernelResult | None) pairs with
the same matching, for training and the LLM scenarios.
"""
from roofcast.evaluation.manifest import ManifestError, ManifestRow, load_manifest
from roofcast.evaluation.matching import Match, SourceIndex
from roofcast.evaluation.runner import (
    EvaluationResult,
    RowOutcome,
    analyze_rows,
    evaluate,
    iter_row_results,
    launch_context,
)
from roofcast.evaluation.sampling import balanced_sample

__all__ = [
    "EvaluationResult", "ManifestError", "ManifestRow", "Match", "RowOutcome", "SourceIndex",
    "analyze_rows", "balanced_sample", "evaluate", "iter_row_results", "launch_context",
    "load_manifest",
]
