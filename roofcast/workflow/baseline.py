"""The committed baseline (`.roofcast-baseline.json`) and the diff the pre-commit hook fails on.

Kernels are keyed by file + name (not line), so moving a kernel down a file is no change;
a verdict flip or an intensity drop beyond a threshold is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from roofcast import __version__
from roofcast.workflow.view import CLASSES, KernelView, bound_text, fmt_ai, kernel_views

DEFAULT_BASELINE = ".roofcast-baseline.json"
BASELINE_FORMAT = 1
DEFAULT_THRESHOLD_PCT = 25.0


class BaselineError(ValueError):
    """A baseline file that is missing, unreadable or lacks a GPU; the message is one line."""


def _round(value: float | None) -> float | str | None:
    if value is None:
        return None
    if value == float("inf"):
        return "inf"
    return round(value, 6)


def _unround(value: object) -> float | None:
    if value == "inf":
        return float("inf")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def entry(view: KernelView) -> dict:
    """What the baseline keeps of one kernel: enough to name it and to diff it."""
    return {
        "file": view.file,
        "name": view.name,
        "line": view.line,
        "bound": view.bound,
        "dominant": view.dominant,
        "intensity": {c: _round(view.intensity.get(c)) for c in CLASSES},
        "predictor": view.predictor,
    }


def empty_baseline() -> dict:
    return {
        "format": BASELINE_FORMAT,
        "generated_by": f"roofcast {__version__}",
        "defines": {},
        "gpus": {},
    }


def load(path: Path) -> dict:
    """Read a baseline file; BaselineError with a one-line reason when it is not usable."""
    if not path.exists():
        raise BaselineError(
            f"no baseline file {path}; create it with `roofcast baseline update PATHS --gpu GPU`"
            " and commit it"
        )
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise BaselineError(f"{path} is not a roofcast baseline (format {BASELINE_FORMAT})")
    return data


def save(data: Mapping, path: Path) -> None:
    """Write sorted, indented JSON so the committed file diffs line by line."""
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", "utf-8")


def _covered(file: str, roots: Iterable[str]) -> bool:
    """True when baseline file `file` lies under one of the analysed paths (relative POSIX)."""
    for root in roots:
        root = root.rstrip("/")
        if root in ("", ".") or file == root or file.startswith(root + "/"):
            return True
    return False


def update(
    data: dict,
    reports: Mapping[str, Mapping],
    base_dir: Path,
    analysed: Iterable[str],
    defines: Mapping[str, str] | None = None,
) -> dict:
    """Replace, per GPU, the entries of files under `analysed` (relative POSIX paths) with the
    kernels of `reports` (GPU key -> report dict); entries elsewhere stay as they were."""
    roots = list(analysed)
    data = dict(data)
    data["generated_by"] = f"roofcast {__version__}"
    data["defines"] = dict(sorted((defines or {}).items()))
    gpus = dict(data.get("gpus", {}))
    for key, report in reports.items():
        old = gpus.get(key, {}).get("kernels", {})
        kept = {k: v for k, v in old.items() if not _covered(v.get("file", ""), roots)}
        kept.update({v.key: entry(v) for v in kernel_views(report, base_dir)})
        gpu = report.get("gpu", {})
        gpus[key] = {
            "name": gpu.get("name", key),
            "balance_points": gpu.get("balance_points", {}),
            "kernels": kept,
        }
    data["gpus"] = gpus
    return data


@dataclass(frozen=True)
class Change:
    """One line of the hook's output: a kernel that flipped, dropped, is new or is gone."""

    kind: str  # "flip" | "drop" | "new" | "removed"
    gpu: str
    key: str
    where: str
    name: str
    message: str

    @property
    def fails(self) -> bool:
        return self.kind in ("flip", "drop")

    def line(self) -> str:
        return f"{self.where}: {self.name} [{self.gpu}] {self.message}"


def _ai_pair(cls: str | None, before: Mapping, after: Mapping[str, float | None]) -> str:
    if cls is None:
        return ""
    return f" ({cls} AI {fmt_ai(_unround(before.get(cls)))} -> {fmt_ai(after.get(cls))})"


def diff(
    baseline_gpu: Mapping,
    report: Mapping,
    base_dir: Path,
    gpu_label: str,
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    files: Iterable[str] | None = None,
) -> list[Change]:
    """Compare a report with one GPU's baseline section.

    flip: bound changed. drop: the intensity of the class the baseline verdict hinged on fell
    by more than `threshold_pct` percent. new / removed: kernels without a counterpart (among
    `files`, when given, so a commit touching one file does not report the others as gone).
    """
    old: Mapping[str, Mapping] = baseline_gpu.get("kernels", {})
    now = {v.key: v for v in kernel_views(report, base_dir)}
    changes: list[Change] = []
    for key, view in now.items():
        before = old.get(key)
        if before is None:
            changes.append(
                Change(
                    "new",
                    gpu_label,
                    key,
                    view.where,
                    view.name,
                    f"new kernel: {bound_text(view.bound)} (not in baseline)",
                )
            )
            continue
        cls = before.get("dominant")
        pair = _ai_pair(cls, before.get("intensity", {}), view.intensity)
        if before.get("bound") != view.bound:
            flip = f"{bound_text(before.get('bound'))} -> {bound_text(view.bound)}{pair}"
            changes.append(Change("flip", gpu_label, key, view.where, view.name, flip))
            continue
        if cls is None:
            continue
        was = _unround(before.get("intensity", {}).get(cls))
        is_ = view.intensity.get(cls)
        if was and is_ is not None and was != float("inf") and was > 0:
            drop = (was - is_) / was * 100.0
            if drop > threshold_pct:
                changes.append(
                    Change(
                        "drop",
                        gpu_label,
                        key,
                        view.where,
                        view.name,
                        f"{cls} intensity fell {drop:.0f}% (> {threshold_pct:g}%): "
                        f"{fmt_ai(was)} -> {fmt_ai(is_)}, still {bound_text(view.bound)}",
                    )
                )
    scope = None if files is None else set(files)
    for key, before in old.items():
        if key in now or (scope is not None and before.get("file") not in scope):
            continue
        where = f"{before.get('file')}:{before.get('line')}"
        changes.append(
            Change(
                "removed",
                gpu_label,
                key,
                where,
                str(before.get("name")),
                "kernel no longer found (in baseline)",
            )
        )
    return changes
