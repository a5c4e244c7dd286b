"""Read-only helpers over one report dict (the `analyze --format json` contract).

Every workflow output (baseline, SARIF, plot, matrix, hook) reads reports through these, so
they agree on a kernel's identity, its relative path and the intensities its verdict used.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from roofcast.gpu_specs.opclasses import CLASSES


def rel_path(file: str, base_dir: Path | str) -> str:
    """`file` relative to `base_dir` in POSIX form, or absolute when it lies outside."""
    path = Path(file).resolve()
    base = Path(base_dir).resolve()
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def _number(value: object) -> float | None:
    """A resolved count as float; None for symbolic strings and missing values."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def intensities(kernel: Mapping) -> dict[str, float | None]:
    """Ops per DRAM byte per class; None where the count stayed symbolic.

    Reads `arithmetic_intensity`; falls back to flops / bytes when a class is missing there.
    A kernel that moves no global bytes but does work gets `inf`.
    """
    given = kernel.get("arithmetic_intensity") or {}
    flops = kernel.get("flops_per_thread") or {}
    moved = kernel.get("bytes_per_thread") or {}
    load, store = _number(moved.get("load", 0)), _number(moved.get("store", 0))
    total = None if load is None or store is None else load + store
    out: dict[str, float | None] = {}
    for cls in CLASSES:
        if cls in given:
            out[cls] = _number(given[cls])
            continue
        ops = _number(flops.get(cls, 0))
        if ops is None or total is None:
            out[cls] = None
        elif total == 0:
            out[cls] = math.inf if ops > 0 else 0.0
        else:
            out[cls] = ops / total
    return out


def verdict_intensities(kernel: Mapping) -> dict[str, float | None]:
    """The intensities the verdict compared with the balance points (`verdict_intensity`):
    corrected ones for the default predictor, static ones for the rule. Reports written
    before that key existed fall back to the static intensities."""
    used = kernel.get("verdict_intensity")
    if not used:
        return intensities(kernel)
    static = intensities(kernel)
    return {cls: _number(used[cls]) if cls in used else static.get(cls) for cls in CLASSES}


def dominant_class(ai: Mapping[str, float | None], balance: Mapping[str, float]) -> str | None:
    """The class nearest its roof (largest intensity / balance point): the one the verdict
    hinges on. None when no class has a known, positive intensity."""
    best, best_ratio = None, 0.0
    for cls in CLASSES:
        value, knee = ai.get(cls), balance.get(cls)
        if value is None or not knee or value <= 0:
            continue
        ratio = value / knee
        if ratio > best_ratio:
            best, best_ratio = cls, ratio
    return best


@dataclass(frozen=True)
class KernelView:
    """One kernel of a report with its stable key (file + name, not line) and derived facts."""

    key: str
    file: str
    line: int
    name: str
    language: str
    bound: str
    reason: str
    intensity: dict[str, float | None]  # what the verdict used (see `verdict_intensities`)
    dominant: str | None
    raw: Mapping
    predictor: str = ""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def balance_points(report: Mapping) -> dict[str, float]:
    """The report's GPU balance points per class."""
    points = (report.get("gpu") or {}).get("balance_points") or {}
    return {k: float(v) for k, v in points.items() if _number(v) is not None}


def kernel_views(report: Mapping, base_dir: Path | str) -> Iterator[KernelView]:
    """The report's kernels keyed `relpath::name`; a name seen again in the same file (OpenMP
    regions of one function) gets `#2`, `#3`... in source order, so moving lines keeps keys."""
    balance = balance_points(report)
    kernels = sorted(
        report.get("kernels", []),
        key=lambda k: (rel_path(k["file"], base_dir), int(k.get("line") or 0)),
    )
    seen: dict[str, int] = {}
    for k in kernels:
        file = rel_path(k["file"], base_dir)
        key = f"{file}::{k['name']}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = f"{key}#{seen[key]}"
        ai = verdict_intensities(k)
        yield KernelView(
            key=key,
            file=file,
            line=int(k.get("line") or 0),
            name=str(k["name"]),
            language=str(k.get("language", "")),
            bound=str(k.get("bound", "unknown")),
            reason=str(k.get("reason", "")),
            intensity=ai,
            dominant=dominant_class(ai, balance),
            raw=k,
            predictor=str(k.get("predictor") or ""),
        )


def predictor_names(reports: Iterable[Mapping]) -> str:
    """Which predictor(s) gave the reports' verdicts, for the line that names who spoke."""
    names = sorted(
        {
            str(k.get("predictor"))
            for r in reports
            for k in r.get("kernels", [])
            if k.get("predictor")
        }
    )
    return ", ".join(names) or "none"


def bound_text(bound: str | None) -> str:
    """`compute-bound`, `bandwidth-bound`, or `bound unknown` (symbolic counts)."""
    return f"{bound}-bound" if bound in ("compute", "bandwidth") else "bound unknown"


def fmt_ai(value: float | None) -> str:
    """Intensity for one-line messages: 3 significant digits, `?` when symbolic."""
    if value is None:
        return "?"
    if math.isinf(value):
        return "inf"
    return f"{value:.3g}"
