"""Rendering an AnalysisReport: rich table, JSON, CSV (the feature export)."""

from __future__ import annotations

import csv
import io
import json
import os

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from roofcast.features.vector import SPECIAL_FLOP_WEIGHTS
from roofcast.results import AnalysisReport, KernelResult

_STYLE = {"compute": "bold red", "bandwidth": "bold cyan", "unknown": "yellow"}


def _short(value: float | str) -> str:
    if isinstance(value, str):
        return value if len(value) <= 18 else value[:17] + "…"
    if value == 0:
        return "0"
    if abs(value) >= 1e5 or abs(value) < 1e-2:
        return f"{value:.2e}"
    return f"{value:.4g}"


#: Narrower than this, the table's reason column would be cut to a few letters (a pipe or a
#: file gets 80 columns unless COLUMNS says otherwise), so each kernel gets a short block.
TABLE_MIN_WIDTH = 120


def _title(report: AnalysisReport) -> str:
    bp = report.gpu.balance_points
    return (
        f"{report.gpu.name}: balance SP {bp['sp']:.3g} · DP {bp['dp']:.3g} · "
        f"INT {bp['int']:.3g} ops/byte"
    )


def _caption(report: AnalysisReport) -> str:
    """What the counts mean, and the files whose #if arms hung on undefined macros."""
    caption = "per thread (OpenMP: per iteration); ~ = symbolic, documented defaults applied"
    noted = {k.ir.file: k.ir.undefined_macros for k in report.kernels if k.ir.undefined_macros}
    for file, names in noted.items():
        caption += f"\n{os.path.basename(file)}: #if arms chosen by undefined {', '.join(names)}"
    return caption


def _where(k: KernelResult) -> str:
    cwd = os.getcwd()
    path = os.path.relpath(k.ir.file, cwd) if os.path.isabs(k.ir.file) else k.ir.file
    return f"{path}:{k.ir.line}"


def _bound(k: KernelResult) -> tuple[str, str]:
    """(bound, ' 97%' or '') of a kernel's verdict."""
    bound = k.verdict.bound if k.verdict else "unknown"
    conf = k.verdict.confidence if k.verdict else None
    return bound, (f" {conf:.0%}" if isinstance(conf, float) else "")


def _reason(k: KernelResult, verbose: bool) -> str:
    """The verdict's reason; the symbolic tail (which symbols, which defaults) only when
    verbose, since the counts already carry the ~ mark."""
    reason = k.verdict.reason if k.verdict else ""
    return reason if verbose else reason.split("; symbolic")[0]


def _name(k: KernelResult) -> str:
    return k.ir.name + (" [omp]" if k.ir.language == "openmp" else "")


def render_table(report: AnalysisReport, console: Console, verbose: bool = False) -> None:
    """The wide table on a wide console, else one short block per kernel."""
    if console.width < TABLE_MIN_WIDTH:
        render_blocks(report, console, verbose)
        return
    table = Table(
        title=_title(report),
        title_justify="left",
        caption=_caption(report),
        caption_justify="left",
    )
    table.add_column("kernel", overflow="fold", max_width=28)
    table.add_column("where", overflow="fold", max_width=30)
    for col in ("FLOP sp", "FLOP dp", "INT", "bytes"):
        table.add_column(col, justify="right")
    table.add_column("bound")
    table.add_column("reason", overflow="fold", min_width=24)
    for k in report.kernels:
        r = k.resolved
        mark = "~" if r.defaults else ""
        bound, conf = _bound(k)
        table.add_row(
            _name(k),
            _where(k),
            mark + _short(r.flops["sp"]),
            mark + _short(r.flops["dp"]),
            mark + _short(r.flops["int"]),
            mark + _short(r.bytes),
            f"[{_STYLE[bound]}]{bound}[/]" + conf,
            Text("\n".join([_reason(k, verbose), *_details(k, verbose)])),
        )
    console.print(table)
    for k in report.kernels:
        for note in k.features.notes:
            console.print(f"note: {k.ir.name}:{k.ir.line}: {note}", markup=False)


def _details(k: KernelResult, verbose: bool) -> list[str]:
    """--verbose lines: other predictors' verdicts, symbols and the defaults applied."""
    if not verbose:
        return []
    lines = [f"{name}: {v.bound} ({v.reason})" for name, v in k.extra_verdicts.items()]
    if k.resolved.unbound:
        lines.append("symbols: " + " ".join(sorted(k.resolved.unbound)))
    if k.resolved.defaults:
        lines.append(
            "defaults: " + " ".join(f"{a}={b}" for a, b in k.resolved.defaults_json().items())
        )
    return lines


def render_blocks(report: AnalysisReport, console: Console, verbose: bool = False) -> None:
    """Narrow layout: `name  bound  where`, then the counts and the whole reason, wrapped
    under the kernel, so nothing is cut at 80 columns."""
    console.print(_title(report), markup=False, highlight=False)
    console.print(_caption(report), style="dim", markup=False, highlight=False)
    for k in report.kernels:
        r = k.resolved
        mark = "~" if r.defaults else ""
        bound, conf = _bound(k)
        head = Text()
        head.append(_name(k), style="bold")
        head.append("  ")
        head.append(bound + conf, style=_STYLE[bound])
        head.append("  " + _where(k))
        console.print()
        console.print(head, overflow="fold")
        counts = (
            f"FLOP sp {mark}{_short(r.flops['sp'])} · dp {mark}{_short(r.flops['dp'])} · "
            f"INT {mark}{_short(r.flops['int'])} · bytes {mark}{_short(r.bytes)}"
        )
        for line in (counts, _reason(k, verbose), *_details(k, verbose)):
            console.print(Padding(Text(line, overflow="fold"), (0, 0, 0, 2), expand=False))


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
