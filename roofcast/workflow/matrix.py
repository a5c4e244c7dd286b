"""Verdict of every kernel on every chosen GPU, and where it flips between GPUs.

A DP-heavy kernel is the classic flip: the RTX 3080's FP64 balance point is 0.515 FLOP/B, an
A100's about 6, so the same kernel is compute-bound on one and bandwidth-bound on the other.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from roofcast.workflow.view import fmt_ai, kernel_views, predictor_names


@dataclass
class Row:
    """One kernel across GPUs: GPU key -> (bound, dominant class, its intensity)."""

    key: str
    file: str
    line: int
    name: str
    verdicts: dict[str, str] = field(default_factory=dict)
    classes: dict[str, str | None] = field(default_factory=dict)
    intensity: dict[str, float | None] = field(default_factory=dict)

    @property
    def flips(self) -> bool:
        """True when the kernel is compute-bound on one GPU and bandwidth-bound on another."""
        return len({v for v in self.verdicts.values() if v != "unknown"}) > 1


@dataclass
class Matrix:
    gpus: list[dict]
    rows: list[Row]

    @property
    def flipped(self) -> list[Row]:
        return [r for r in self.rows if r.flips]


def build(
    reports: Sequence[Mapping], base_dir: Path | str, labels: Sequence[str] | None = None
) -> Matrix:
    """Join one report per GPU by kernel key (file + name); order follows the first report.
    Columns are named by `labels` (the names the user typed) or else by GPU key."""
    rows: dict[str, Row] = {}
    gpus = []
    for i, report in enumerate(reports):
        gpu = report.get("gpu") or {}
        spec_key = str(gpu.get("key") or gpu.get("name"))
        gkey = labels[i] if labels else spec_key
        gpus.append(
            {
                "key": gkey,
                "spec": spec_key,
                "name": gpu.get("name", spec_key),
                "balance_points": dict(gpu.get("balance_points") or {}),
                "predictor": predictor_names([report]),
            }
        )
        for v in kernel_views(report, base_dir):
            row = rows.setdefault(v.key, Row(v.key, v.file, v.line, v.name))
            row.verdicts[gkey] = v.bound
            row.classes[gkey] = v.dominant
            row.intensity[gkey] = v.intensity.get(v.dominant) if v.dominant else None
    return Matrix(gpus=gpus, rows=list(rows.values()))


def to_json(m: Matrix) -> dict:
    return {
        "gpus": m.gpus,
        "kernels": [
            {
                "name": r.name,
                "file": r.file,
                "line": r.line,
                "flips": r.flips,
                "verdicts": {
                    g["key"]: {
                        "bound": r.verdicts.get(g["key"], "missing"),
                        "dominant_class": r.classes.get(g["key"]),
                        "intensity": _json_number(r.intensity.get(g["key"])),
                    }
                    for g in m.gpus
                },
            }
            for r in m.rows
        ],
        "flipped": [r.key for r in m.flipped],
    }


def _json_number(value: float | None) -> float | str | None:
    if value is None:
        return None
    return "inf" if value == float("inf") else round(value, 6)


def to_csv(m: Matrix) -> str:
    """One row per kernel: file, line, name, one verdict column per GPU, flips."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    keys = [g["key"] for g in m.gpus]
    writer.writerow(["file", "line", "kernel", *keys, "flips"])
    for r in m.rows:
        writer.writerow(
            [
                r.file,
                r.line,
                r.name,
                *(r.verdicts.get(k, "missing") for k in keys),
                "yes" if r.flips else "no",
            ]
        )
    return buf.getvalue()


_STYLE = {"compute": "bold red", "bandwidth": "bold blue", "unknown": "dim"}


def _common_dir(files: Sequence[str]) -> str:
    """The folder all kernel files share (shown once in the title instead of on every row)."""
    parts = [f.split("/")[:-1] for f in files]
    if not parts:
        return ""
    common = []
    for names in zip(*parts, strict=False):
        if len(set(names)) != 1:
            break
        common.append(names[0])
    return "/".join(common) + "/" if common else ""


def to_table(m: Matrix, only_flips: bool = False):
    """A rich Table: verdict per GPU (with the deciding class and intensity), flips marked."""
    from rich import box
    from rich.table import Table

    rows = m.flipped if only_flips else m.rows
    prefix = _common_dir([r.file for r in m.rows])
    where = f" under {prefix}" if prefix else ""
    spoke = ", ".join(sorted({g.get("predictor", "none") for g in m.gpus}))
    table = Table(
        title=f"{len(m.rows)} kernels{where} on {len(m.gpus)} GPUs: "
        f"{len(m.flipped)} flip (predictor: {spoke})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("kernel", no_wrap=True)
    table.add_column("file:line", style="dim", overflow="fold", min_width=10)
    for g in m.gpus:
        bp = g["balance_points"]
        sub = " ".join(f"{c} {bp[c]:.3g}" for c in ("sp", "dp", "int") if c in bp)
        table.add_column(f"{g['key']}\n[dim]{sub}[/dim]")
    table.add_column("flip", no_wrap=True)
    for r in rows:
        cells = []
        for g in m.gpus:
            bound = r.verdicts.get(g["key"], "missing")
            cls = r.classes.get(g["key"])
            detail = f" [dim]{cls} {fmt_ai(r.intensity.get(g['key']))}[/dim]" if cls else ""
            cells.append(f"[{_STYLE.get(bound, 'dim')}]{bound}[/]{detail}")
        flip = "[bold yellow]FLIP[/]" if r.flips else ""
        table.add_row(
            r.name,
            f"{r.file.removeprefix(prefix)}:{r.line}",
            *cells,
            flip,
            style="on grey23" if r.flips else None,
        )
    return table
