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


METRIC_HEAD = ["set", "n", "cover", "acc", "bal acc", "F1 comp", "F1 bw", "MCC", "unknown"]
#: fr = only kernels whose counts were fully resolved (no default values used).
COUNT_HEAD = ["quantity", "n", "MALE", "median", "in 2x", "n fr", "MALE fr", "median fr",
              "in 2x fr"]


def count_rows(summary: dict) -> list[list[str]]:
    rows = []
    for column in COUNT_COLUMNS:
        a = summary["counts"][column]["all"]
        f = summary["counts"][column]["fully_resolved"]
        rows.append([column, str(a["n"]), fmt(a["male"]), fmt(a["median_ale"]),
                     fmt(a["within_2x"]), str(f["n"]), fmt(f["male"]), fmt(f["median_ale"]),
                     fmt(f["within_2x"])])
    return rows
