"""What the pre-commit hook prints and whether it fails, from reports already computed.

Kept apart from the CLI so the rules (which kernels are flagged, the wording of each line) are
tested on report dicts without running the analyzer or git.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from roofcast.workflow import baseline as bl
from roofcast.workflow.view import (
    KernelView,
    balance_points,
    bound_text,
    fmt_ai,
    kernel_views,
    predictor_names,
)

FAIL_ON = ("bandwidth", "compute", "change", "never")


@dataclass
class HookOutcome:
    """Lines to print (one per kernel shown) and whether the commit must be stopped."""

    lines: list[str] = field(default_factory=list)
    failed: bool = False
    summary: str = ""


def verdict_text(view: KernelView, balance: Mapping[str, float]) -> str:
    """`bandwidth-bound (sp AI 0.167 < 9.75)`: the verdict with the comparison behind it."""
    cls = view.dominant
    if cls is None or cls not in balance:
        return bound_text(view.bound)
    ai = view.intensity.get(cls)
    op = ">=" if ai is not None and ai >= balance[cls] else "<"
    return f"{bound_text(view.bound)} ({cls} AI {fmt_ai(ai)} {op} {balance[cls]:.3g})"


def check_verdicts(reports: Mapping[str, Mapping], fail_on: str, base_dir: Path) -> HookOutcome:
    """--fail-on bandwidth|compute|never: one line per kernel, flagged ones fail the hook."""
    out = HookOutcome()
    total = flagged = 0
    for label, report in reports.items():
        balance = balance_points(report)
        for view in kernel_views(report, base_dir):
            total += 1
            hit = view.bound == fail_on
            flagged += hit
            mark = "  <- fails (--fail-on " + fail_on + ")" if hit else ""
            out.lines.append(
                f"{view.where}: {view.name} [{label}] {verdict_text(view, balance)}{mark}"
            )
    out.failed = flagged > 0
    gpus = ", ".join(reports)
    spoke = f" (predictor: {predictor_names(reports.values())})"
    if fail_on == "never":
        out.summary = f"roofcast: {total} kernel verdicts on {gpus}{spoke}"
    else:
        out.summary = (
            f"roofcast: {flagged} of {total} kernel verdicts {fail_on}-bound on {gpus}{spoke}"
        )
    return out


def check_changes(
    reports: Mapping[str, Mapping],
    gpu_keys: Mapping[str, str],
    baseline: Mapping,
    base_dir: Path,
    threshold_pct: float,
    files: Iterable[str],
    baseline_name: str,
) -> HookOutcome:
    """--fail-on change: only kernels that flipped, dropped, appeared or vanished get a line;
    flips and drops fail. `gpu_keys` maps each printed GPU label to its baseline key."""
    out = HookOutcome()
    scope = list(files)
    total = changed = 0
    for label, report in reports.items():
        section = baseline.get("gpus", {}).get(gpu_keys[label])
        if section is None:
            raise bl.BaselineError(
                f"{baseline_name} has no entry for GPU '{label}'; run "
                f"`roofcast baseline update PATHS --gpu {label}` and commit it"
            )
        changes = bl.diff(section, report, base_dir, label, threshold_pct, scope)
        total += len(report.get("kernels", []))
        for change in changes:
            mark = "  <- fails (--fail-on change)" if change.fails else ""
            out.lines.append(change.line() + mark)
            changed += change.fails
    out.failed = changed > 0
    out.summary = (
        f"roofcast: {changed} of {total} kernel verdicts changed against "
        f"{baseline_name} (predictor: {predictor_names(reports.values())})"
    )
    if out.failed:
        out.summary += "; if intended, run `roofcast baseline update` and commit the baseline"
    return out
