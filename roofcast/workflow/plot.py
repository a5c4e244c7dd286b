"""Roofline picture of one GPU with a report's kernels placed at the intensity their verdict used.

Each class (fp32, fp64, fp16, int32) gets its own ceiling; all share the DRAM bandwidth slope;
the knee of each is its balance point. A kernel sits on the roof of its dominant class (the
class nearest its roof), so left of that class's knee means bandwidth-bound.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from roofcast.gpu_specs import GPU
from roofcast.workflow.view import CLASSES, KernelView, fmt_ai, kernel_views, predictor_names

FORMATS = (".png", ".svg", ".html", ".pdf")
COLORS = {"sp": "#1f77b4", "dp": "#d62728", "hp": "#2ca02c", "int": "#9467bd"}
LABELS = {"sp": "FP32", "dp": "FP64", "hp": "FP16", "int": "INT32"}
MARKERS = {"compute": "s", "bandwidth": "o", "unknown": "X"}
MAX_NAMES = 3


@dataclass
class _Point:
    """Kernels that land on the same spot share one marker and one label."""

    cls: str
    ai: float
    bound: str
    names: list[str]

    @property
    def label(self) -> str:
        shown = ", ".join(self.names[:MAX_NAMES])
        more = len(self.names) - MAX_NAMES
        return f"{shown} +{more}" if more > 0 else shown


def _points(views: Sequence[KernelView], x_max: float) -> tuple[list[_Point], list[str]]:
    """Group kernels by (class, bound, intensity to 2 significant digits); list the unplaced."""
    groups: dict[tuple[str, str, str], _Point] = {}
    unplaced = []
    for v in views:
        ai = v.intensity.get(v.dominant) if v.dominant else None
        if ai is None or v.dominant is None:
            unplaced.append(v.name)
            continue
        ai = min(ai, x_max) if math.isinf(ai) else ai
        key = (v.dominant, v.bound, f"{ai:.2g}")
        if key in groups:
            groups[key].names.append(v.name)
        else:
            groups[key] = _Point(v.dominant, ai, v.bound, [v.name])
    return sorted(groups.values(), key=lambda p: p.ai), unplaced


def _ceilings(peaks: Mapping[str, float]) -> list[list[str]]:
    """Classes grouped by equal peak (FP16 = FP32 on GeForce cards): one ceiling, one label."""
    groups: list[list[str]] = []
    for cls in CLASSES:
        if cls not in peaks:
            continue
        same = next(
            (g for g in groups if math.isclose(peaks[g[0]], peaks[cls], rel_tol=1e-6)), None
        )
        if same is None:
            groups.append([cls])
        else:
            same.append(cls)
    return groups


def _axis_range(values: Sequence[float], knees: Sequence[float]) -> tuple[float, float]:
    finite = [v for v in (*values, *knees) if v > 0 and not math.isinf(v)]
    lo = min(finite) if finite else 0.01
    hi = max(finite) if finite else 100.0
    return 10 ** math.floor(math.log10(lo / 3)), 10 ** math.ceil(math.log10(hi * 3))


def _candidates() -> list[tuple[float, float]]:
    """Label offsets in points, nearest first; perpendicular to the bandwidth slope first
    (down-right and up-left are where the roofline leaves empty room)."""
    dirs = [(1, -1), (-1, 1), (1, 0), (0, -1), (-1, 0), (0, 1), (1, -0.4), (-0.4, 1)]
    return [(dx * r, dy * r) for r in range(10, 150, 8) for dx, dy in dirs]


def _text_box(text: Text, renderer) -> Bbox:
    """Extent of an annotation's text alone (its leader line would always hit its marker)."""
    if hasattr(text, "update_positions"):
        text.update_positions(renderer)
    return Text.get_window_extent(text, renderer)


def _place_labels(fig: Figure, ax, points: list[_Point], ys: list[float], avoid: list) -> None:
    """Greedy label placement in display space: the nearest candidate offset whose box overlaps
    neither a placed label, a marker, an `avoid` artist nor the axes edge (keeps 30+ kernels
    legible without extra dependencies)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # run the layout once, then freeze it so measured positions stay true
    fig.set_layout_engine("none")
    renderer = canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    taken: list[Bbox] = [
        _text_box(a, renderer) if isinstance(a, Text) else a.get_window_extent(renderer)
        for a in avoid
    ]
    for p, y in zip(points, ys, strict=True):
        cx, cy = ax.transData.transform((p.ai, y))
        taken.append(Bbox.from_extents(cx - 6, cy - 6, cx + 6, cy + 6))
    for p, y in zip(points, ys, strict=True):
        text = ax.annotate(
            p.label,
            (p.ai, y),
            xytext=(0, 0),
            textcoords="offset points",
            fontsize=8,
            color=COLORS[p.cls],
            zorder=6,
            arrowprops={
                "arrowstyle": "-",
                "color": COLORS[p.cls],
                "lw": 0.6,
                "alpha": 0.7,
                "shrinkA": 0,
                "shrinkB": 4,
            },
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
        )
        best = None
        for dx, dy in _candidates():
            text.set_position((dx, dy))
            text.set_horizontalalignment("left" if dx >= 0 else "right")
            text.set_verticalalignment("top" if dy < 0 else "bottom" if dy > 0 else "center")
            box = _text_box(text, renderer).padded(2)  # text only, not its leader
            inside = frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1)
            if inside and not any(box.overlaps(t) for t in taken):
                best = box
                break
        if best is None:  # crowded: fall back to straight right of the marker
            text.set_position((8, 0))
            text.set_horizontalalignment("left")
            text.set_verticalalignment("center")
            best = _text_box(text, renderer)
        taken.append(best)


def figure(
    report: Mapping, gpu: GPU, base_dir: Path | str = ".", title: str | None = None
) -> Figure:
    """Build the roofline figure of `gpu` with the kernels of `report` (analysed for it)."""
    balance = gpu.balance_points
    peaks = gpu.peaks
    bandwidth = gpu.bandwidth_bytes
    views = list(kernel_views(report, base_dir))
    x_lo, x_hi = _axis_range(
        [v.intensity[v.dominant] or 0 for v in views if v.dominant], list(balance.values())
    )
    scale = 1e12
    points, unplaced = _points(views, x_hi)
    crowded = len(points) > 15  # more room for labels, not bigger type
    fig = Figure(figsize=(13, 8.5) if crowded else (10, 6.4), dpi=110, layout="constrained")
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    top_knee = max(balance.values(), default=x_hi)
    ax.plot(
        [x_lo, top_knee],
        [bandwidth * x_lo / scale, bandwidth * top_knee / scale],
        color="0.25",
        lw=2.2,
        label=f"DRAM bandwidth {bandwidth / 1e9:,.0f} GB/s",
    )
    ax.plot(
        [top_knee, x_hi],
        [bandwidth * top_knee / scale, bandwidth * x_hi / scale],
        color="0.25",
        lw=1,
        ls=":",
    )
    avoid: list[Artist] = []
    for group in _ceilings(peaks):
        cls = group[0]
        knee, peak = balance[cls], peaks[cls] / scale
        names = "/".join(LABELS[c] for c in group)
        ax.plot(
            [knee, x_hi],
            [peak, peak],
            color=COLORS[cls],
            lw=2.2,
            label=f"{names} peak {peak:.3g} T/s",
        )
        for i, other in enumerate(group[1:], start=1):  # shared ceiling: striped in both colours
            ax.plot(
                [knee, x_hi],
                [peak, peak],
                color=COLORS[other],
                lw=2.2,
                dashes=(4, 4 * len(group) - 4),
                dash_capstyle="butt",
                gapcolor=None,
                zorder=2 + i,
            )
        ax.plot([knee], [peak], marker="o", ms=7, color=COLORS[cls], mec="black", zorder=7)
        ax.axvline(knee, color=COLORS[cls], lw=0.7, ls="--", alpha=0.45)
        avoid.append(
            ax.annotate(
                f"{names} balance {knee:.3g}",
                (knee, peak),
                xytext=(6, 4),
                textcoords="offset points",
                fontsize=8,
                fontweight="bold",
                color=COLORS[cls],
                zorder=7,
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8},
            )
        )
    ys = [min(peaks[p.cls], bandwidth * p.ai) / scale for p in points]
    for p, y in zip(points, ys, strict=True):
        ax.plot(
            [p.ai],
            [y],
            ls="none",
            marker=MARKERS.get(p.bound, "X"),
            ms=8,
            mfc=COLORS[p.cls] if p.bound == "compute" else "white",
            mec=COLORS[p.cls],
            mew=1.8,
            zorder=5,
        )
    y_top = max(peaks.values(), default=bandwidth * x_hi) / scale
    ax.set_xlim(x_lo, x_hi)
    y_lo = min(ys, default=bandwidth * x_lo / scale) / 4
    ax.set_ylim(max(bandwidth * x_lo / scale, y_lo), y_top * 4)
    ax.set_xlabel("Arithmetic intensity (operations per DRAM byte)")
    ax.set_ylabel("Attainable performance (T ops/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(
        title
        or f"Roofline: {gpu.name}, {len(views)} kernels (verdicts: {predictor_names([report])})"
    )
    handles, _ = ax.get_legend_handles_labels()
    handles += [
        Line2D([], [], ls="none", marker="s", mfc="0.3", mec="0.3", label="compute-bound kernel"),
        Line2D(
            [],
            [],
            ls="none",
            marker="o",
            mfc="white",
            mec="0.3",
            mew=1.8,
            label="bandwidth-bound kernel",
        ),
    ]
    avoid.append(ax.legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.9))
    _place_labels(fig, ax, points, ys, avoid)
    if unplaced:
        fig.text(
            0.01,
            0.005,
            "not placed (no intensity counted): " + ", ".join(unplaced),
            fontsize=7,
            color="0.4",
        )
    return fig


def save(fig: Figure, out: Path) -> None:
    """Write PNG, SVG, PDF, or HTML (a page with the SVG embedded as a base64 <img>)."""
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"cannot write '{out.name}': use one of {', '.join(FORMATS)}")
    if suffix != ".html":
        fig.savefig(out, dpi=110)
        return
    buf = io.BytesIO()
    fig.savefig(buf, format="svg")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    title = html.escape(fig.axes[0].get_title() if fig.axes else "roofline")
    out.write_text(
        '<!doctype html>\n<html><head><meta charset="utf-8">'
        f'<title>{title}</title></head>\n<body style="margin:0">'
        f'<img alt="{title}" style="max-width:100%" '
        f'src="data:image/svg+xml;base64,{data}"></body></html>\n',
        "utf-8",
    )


def kernel_table(report: Mapping, base_dir: Path | str = ".") -> list[str]:
    """One line per kernel as placed on the plot (printed by `roofcast plot`)."""
    lines = []
    for v in kernel_views(report, base_dir):
        cls = v.dominant
        ai = fmt_ai(v.intensity.get(cls)) if cls else "?"
        lines.append(f"{v.where}: {v.name}: {v.bound}-bound ({cls or '-'} AI {ai})")
    return lines
