"""`evaluate --report DIR`: Markdown + HTML summary, confusion matrices and a roofline scatter.

Files written: report.md, report.html, confusion.png, roofline.png, predictions.csv (one
line per manifest row, for error analysis), summary.json (the same object as --format json).
"""
from __future__ import annotations

import csv
import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.metrics import ConfusionMatrixDisplay  # noqa: E402

from roofcast.evaluation.counts import predicted_intensity  # noqa: E402
from roofcast.evaluation.metrics import CLASSES  # noqa: E402
from roofcast.evaluation.tables import (  # noqa: E402
    COUNT_HEAD,
    METRIC_HEAD,
    count_rows,
    fmt,
    metric_rows,
)

if TYPE_CHECKING:
    from roofcast.evaluation.runner import EvaluationResult

#: Intensities of 0 are drawn at this floor so they stay on a log axis.
AI_FLOOR = 1e-4
#: Infinite intensities (operations, no bytes) are drawn at this ceiling.
AI_CEILING = 1e4
_CLASS_TITLES = {"sp": "FP32", "dp": "FP64", "int": "INT"}
_COLOURS = {"compute": "#c0392b", "bandwidth": "#2471a3"}
_CSS = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;"
        "text-align:right}img{max-width:100%}")


def _confusion_png(summary: dict, path: Path) -> None:
    panels = [("all", summary)] + list(summary["by_language"].items())
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8))
    axes = np.atleast_1d(axes)
    for ax, (title, part) in zip(axes, panels, strict=True):
        matrix = np.array([[part["confusion"][t][p] for p in CLASSES] for t in CLASSES])
        ConfusionMatrixDisplay(matrix, display_labels=list(CLASSES)).plot(
            ax=ax, colorbar=False, cmap="Blues", values_format="d"
        )
        bal = part["balanced_accuracy"]
        hidden = f"\n{part['unknown']} predicted unknown (not shown)" if part["unknown"] else ""
        ax.set_title(f"{title}: n={part['n']}, bal. acc {fmt(bal, 2)}{hidden}", fontsize=10)
        ax.set_xlabel("predicted")
        ax.set_ylabel("measured (ncu)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _roofline_png(result: EvaluationResult, path: Path) -> int:
    """Predicted vs measured intensity per class; returns the number of points drawn."""
    balance = result.gpu.balance_points
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    drawn = 0
    for ax, cls in zip(axes, ("sp", "dp", "int"), strict=True):
        for label in CLASSES:
            xs, ys = [], []
            for o in result.outcomes:
                if o.result is None or o.row.label != label:
                    continue
                measured = o.row.measured.get(f"{cls}_ai")
                predicted = predicted_intensity(o.result).get(cls)
                if measured is None or predicted is None:
                    continue
                xs.append(min(max(measured, AI_FLOOR), AI_CEILING))
                ys.append(min(max(predicted, AI_FLOOR), AI_CEILING))
            drawn += len(xs)
            ax.scatter(xs, ys, s=12, alpha=0.55, c=_COLOURS[label],
                       label=f"measured {label} ({len(xs)})", edgecolors="none")
        ax.set_xscale("log")
        ax.set_yscale("log")
        lo, hi = AI_FLOOR / 2, AI_CEILING * 2
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls=":", label="predicted = measured")
        title = f"{_CLASS_TITLES[cls]} intensity"
        if cls in balance:
            b = balance[cls]
            ax.axvline(b, color="black", lw=0.8, ls="--")
            ax.axhline(b, color="black", lw=0.8, ls="--", label="balance point")
            title += f" (balance {b:.3g} ops/B)"
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("measured ops / DRAM byte (ncu)")
        ax.set_ylabel(f"predicted ops / byte ({result.predictor})")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9,
               frameon=False)
    fig.suptitle(f"Predicted vs measured arithmetic intensity on {result.gpu.name}; zeros drawn "
                 f"at {AI_FLOOR:g}, infinite at {AI_CEILING:g}", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn


def _predictions_csv(result: EvaluationResult, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["row", "target", "language", "kernel", "label", "predicted",
                         "matched_file", "matched_line", "note", "reason", "error",
                         "pred_sp_ai", "pred_dp_ai", "pred_int_ai",
                         "sp_ai", "dp_ai", "int_ai"])
        for o in result.outcomes:
            ai = predicted_intensity(o.result) if o.result is not None else {}
            k = o.match.kernel
            writer.writerow([
                o.row.index, o.row.target, o.row.language, o.row.key, o.row.label,
                o.predicted or "", k.file if k else "", k.line if k else "", o.match.note,
                o.match.reason, o.error,
                *(ai.get(c, "") for c in ("sp", "dp", "int")),
                *(o.row.measured.get(f"{c}_ai", "") for c in ("sp", "dp", "int")),
            ])


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows]
    return "\n".join(out) + "</table>"


def write_report(result: EvaluationResult, out_dir: Path | str, summary: dict | None = None
                 ) -> list[Path]:
    """Write the report files into `out_dir` (created); returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = summary or result.to_json()
    files = {name: out / name for name in ("report.md", "report.html", "confusion.png",
                                           "roofline.png", "predictions.csv", "summary.json")}
    _confusion_png(summary, files["confusion.png"])
    points = _roofline_png(result, files["roofline.png"])
    _predictions_csv(result, files["predictions.csv"])
    files["summary.json"].write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    title = f"roofcast evaluation: {result.predictor} on {result.gpu.name}"
    unmatched = summary["unmatched"]
    failures = summary["failures"]
    intro = (f"{summary['n']} of {summary['rows']} manifest rows matched a kernel "
             f"(coverage {fmt(summary['coverage'])}); {len(failures)} failed to analyze "
             f"and count as misses; {summary['seconds']} s.")
    md = [f"# {title}", "", intro, "", "## Labels", "",
          _md_table(METRIC_HEAD, metric_rows(summary)), "",
          "![confusion matrices](confusion.png)", "",
          "## Arithmetic intensity", "",
          f"{points} points; dashed lines: the GPU's balance points. A kernel is measured "
          "compute-bound when any of its class points lies right of that class's line; the "
          "roofline rule predicts compute-bound when any lies above it.", "",
          "![roofline scatter](roofline.png)", "",
          "## Count accuracy (launch totals)", "",
          "MALE = mean |log10((predicted + 1) / (measured + 1))|; fr = kernels whose counts "
          "were fully resolved (no defaults).", "",
          _md_table(COUNT_HEAD, count_rows(summary)), ""]
    if unmatched:
        md += [f"## Unmatched rows ({len(unmatched)})", ""]
        md += [f"- `{u['kernel']}`: {u['reason']}" for u in unmatched]
        md.append("")
    if failures:
        md += [f"## Failed to analyze ({len(failures)})", ""]
        md += [f"- `{f['kernel']}`: {f['error']}" for f in failures]
        md.append("")
    files["report.md"].write_text("\n".join(md), encoding="utf-8")
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p>",
        "<h2>Labels</h2>", _html_table(METRIC_HEAD, metric_rows(summary)),
        "<p><img src='confusion.png' alt='confusion matrices'></p>",
        "<h2>Arithmetic intensity</h2><p><img src='roofline.png' alt='roofline scatter'></p>",
        "<h2>Count accuracy (launch totals)</h2>", _html_table(COUNT_HEAD, count_rows(summary)),
    ]
    if unmatched:
        parts.append(f"<h2>Unmatched rows ({len(unmatched)})</h2><ul>")
        parts += [f"<li><code>{html.escape(u['kernel'])}</code>: {html.escape(u['reason'])}"
                  "</li>" for u in unmatched]
        parts.append("</ul>")
    if failures:
        parts.append(f"<h2>Failed to analyze ({len(failures)})</h2><ul>")
        parts += [f"<li><code>{html.escape(f['kernel'])}</code>: {html.escape(f['error'])}"
                  "</li>" for f in failures]
        parts.append("</ul>")
    parts.append("</body></html>")
    files["report.html"].write_text("\n".join(parts), encoding="utf-8")
    return list(files.values())

