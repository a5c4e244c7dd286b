"""Rows of the metric and count tables, shared by the terminal table and the report."""
from __future__ import annotations

from roofcast.evaluation.metrics import COUNT_COLUMNS


def fmt(value: object, digits: int = 3) -> str:
    """A table cell: '-' for None, fixed digits for floats."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def metric_rows(summary: dict) -> list[list[str]]:
    parts = [("all", summary)] + list(summary["by_language"].items())
    rows = []
    for name, part in parts:
        rows.append([
            name, str(part["n"]), fmt(part["coverage"]), fmt(part["accuracy"]),
            fmt(part["balanced_accuracy"]), fmt(part["f1"]["compute"]),
            fmt(part["f1"]["bandwidth"]), fmt(part["mcc"]), str(part["unknown"]),
        ])
    return rows


METRIC_HEAD = ["set", "n", "coverage", "accuracy", "balanced acc.", "F1 compute",
                "F1 bandwidth", "MCC", "unknown"]
COUNT_HEAD = ["quantity", "n", "MALE", "within 2x", "n (fully resolved)", "MALE (f.r.)",
               "within 2x (f.r.)"]


def count_rows(summary: dict) -> list[list[str]]:
    rows = []
    for column in COUNT_COLUMNS:
        a = summary["counts"][column]["all"]
        f = summary["counts"][column]["fully_resolved"]
        rows.append([column, str(a["n"]), fmt(a["male"]), fmt(a["within_2x"]), str(f["n"]),
                     fmt(f["male"]), fmt(f["within_2x"])])
    return rows
