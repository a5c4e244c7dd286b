"""Rendering an AnalysisReport: rich table, JSON, CSV (the feature export)."""

from __future__ import annotations

import csv
import io
import json
import os

from rich.console import Console
from rich.table import Table

from roofcast.features.vector import SPECIAL_FLOP_WEIGHTS
from roofcast.pipeline import AnalysisReport

_STYLE = {"compute": "bold red", "bandwidth": "bold cyan", "unknown": "yellow"}


def _short(value: float | str) -> str:
    if isinstance(value, str):
        return value if len(value) <= 18 else value[:17] + "…"
    if value == 0:
        return "0"
    if abs(value) >= 1e5 or abs(value) < 1e-2:
        return f"{value:.2e}"
    return f"{value:.4g}"


def render_table(report: AnalysisReport, console: Console) -> None:
    bp = report.gpu.balance_points
    caption = "per thread (OpenMP: per iteration); ~ = symbolic, documented defaults applied"
    noted = {k.ir.file: k.ir.undefined_macros for k in report.kernels if k.ir.undefined_macros}
    for file, names in noted.items():
        caption += f"\n{os.path.basename(file)}: #if arms chosen by undefined {', '.join(names)}"
    table = Table(
        title=f"{report.gpu.name}: balance SP {bp['sp']:.3g} · DP {bp['dp']:.3g} · "
        f"INT {bp['int']:.3g} ops/byte",
        title_justify="left",
        caption=caption,
        caption_justify="left",
    )
    table.add_column("kernel", overflow="fold", max_width=28)
    table.add_column("where", overflow="fold", max_width=30)
    for col in ("FLOP sp", "FLOP dp", "INT", "bytes"):
        table.add_column(col, justify="right")
    table.add_column("bound")
    table.add_column("reason", overflow="fold", min_width=24)
    cwd = os.getcwd()
    for k in report.kernels:
        r = k.resolved
        mark = "~" if r.defaults else ""
        path = os.path.relpath(k.ir.file, cwd) if os.path.isabs(k.ir.file) else k.ir.file
        bound = k.verdict.bound if k.verdict else "unknown"
        conf = k.verdict.confidence if k.verdict else None
        table.add_row(
            k.ir.name + (" [omp]" if k.ir.language == "openmp" else ""),
            f"{path}:{k.ir.line}",
            mark + _short(r.flops["sp"]),
            mark + _short(r.flops["dp"]),
            mark + _short(r.flops["int"]),
            mark + _short(r.bytes),
            f"[{_STYLE[bound]}]{bound}[/]" + (f" {conf:.0%}" if isinstance(conf, float) else ""),
            (k.verdict.reason if k.verdict else "").split("; symbolic")[0],
        )
    console.print(table)
    for k in report.kernels:
        for note in k.features.notes:
            console.print(f"note: {k.ir.name}:{k.ir.line}: {note}", markup=False)


def render_json(report: AnalysisReport) -> str:
    return json.dumps(report.to_json(), indent=2)


SPECIAL_COLUMNS = [f"{kind}.{prec}" for kind in SPECIAL_FLOP_WEIGHTS for prec in ("hp", "sp", "dp")]
CSV_FIXED = [
    "name",
    "file",
    "line",
    "language",
    "signature",
    "bound",
    "reason",
    "predictor",
    "confidence",
    "threads",
]


def csv_rows(report: AnalysisReport) -> list[dict[str, object]]:
    rows = []
    for k in report.to_json()["kernels"]:
        row: dict[str, object] = {c: k.get(c) for c in CSV_FIXED}
        for cls, v in k["flops_per_thread"].items():
            row[f"flops_{cls}"] = v
        for kind, v in k["bytes_per_thread"].items():
            row[f"bytes_{kind}"] = v
        for cls, v in k["arithmetic_intensity"].items():
            row[f"ai_{cls}"] = v
        for kind in SPECIAL_COLUMNS:
            row[f"special_{kind}"] = k["special_per_thread"].get(kind, 0)
        for name, v in k["features"].items():
            row[name] = v
        row["symbols"] = " ".join(k["symbols"])
        row["defaults"] = " ".join(f"{a}={b}" for a, b in k["defaults_applied"].items())
        rows.append(row)
    return rows


def render_csv(report: AnalysisReport) -> str:
    rows = csv_rows(report)
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, restval=0, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
