"""Predicted launch totals (per-thread counts x threads) beside the measured ones.

The analyzer counts per CUDA thread or per OpenMP iteration; ncu measures the whole launch.
Threads are the row's block x grid product for CUDA; for OpenMP the region's iteration
count when the analyzer resolved it (one iteration = one unit of counted work), else the
row's block x grid. DRAM bytes are predicted as global load + store bytes x threads: an
upper bound where caches catch reuse, which is what the comparison shows.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING

from roofcast.evaluation.metrics import CountPair

if TYPE_CHECKING:
    from roofcast.evaluation.runner import RowOutcome
    from roofcast.results import KernelResult


def _number(value: object) -> float | None:
    """A finite float, or None for symbolic / missing values."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def per_thread(result: KernelResult) -> dict[str, float | None]:
    """Per-thread (per-iteration) sp/dp/hp FLOPs (special functions folded in), integer ops
    and global bytes, with the analyzer's defaults applied to unbound symbols."""
    r = result.resolved
    return {
        "sp_flops": _number(r.flops.get("sp")),
        "dp_flops": _number(r.flops.get("dp")),
        "hp_flops": _number(r.flops.get("hp")),
        "int_ops": _number(r.flops.get("int")),
        "dram_bytes": _number(r.dram_bytes_per_thread),
    }


def fully_resolved(result: KernelResult) -> bool:
    """True when no symbol needed a default: the counts are what the source says."""
    return bool(result.resolved.fully_resolved)


def resolved_iterations(result: KernelResult) -> float | None:
    """An OpenMP region's iteration count when it follows from the source and bindings
    alone (no default used), else None."""
    work = getattr(result.features, "work_items", None)
    if work is None or not hasattr(work, "free_symbols"):
        return None
    if {s.name for s in work.free_symbols} & set(result.resolved.defaults):
        return None
    iterations = _number(result.resolved.threads)
    return iterations if iterations and iterations > 0 else None


def launch_threads(outcome: RowOutcome) -> float | None:
    """Units of counted work in the profiled launch: block x grid threads for CUDA; for
    OpenMP the resolved iteration count, else the launch's block x grid threads."""
    row = outcome.row
    if row.language == "OMP" and outcome.result is not None:
        iterations = resolved_iterations(outcome.result)
        if iterations is not None:
            return iterations
    return float(row.threads) if row.threads is not None else None


def launch_totals(outcome: RowOutcome) -> dict[str, float]:
    """Predicted whole-launch totals, by measured-column name (per-thread count x units of
    work); empty when the row was not analyzed or its launch size is unknown."""
    if outcome.result is None:
        return {}
    threads = launch_threads(outcome)
    if threads is None:
        return {}
    out = {}
    for column, value in per_thread(outcome.result).items():
        if value is None:
            continue
        total = value * threads
        if not math.isfinite(total):  # an overflowing count is a miss by a huge factor
            total = sys.float_info.max
        out[column] = total
    return out


def count_pairs(outcome: RowOutcome) -> list[CountPair]:
    """Predicted vs measured totals for one row (none when unmatched or not analyzed)."""
    totals = launch_totals(outcome)
    if not totals:
        return []
    exact = fully_resolved(outcome.result)  # type: ignore[arg-type]
    return [
        CountPair(column, total, outcome.row.measured[column], exact)
        for column, total in totals.items()
        if column in outcome.row.measured
    ]


def predicted_intensity(result: KernelResult) -> dict[str, float]:
    """Arithmetic intensity per class (sp, dp, int) as the predictor saw it: the verdict's
    own figures when it gives numbers (a learned model may correct them), else the static
    counts'. May be inf (ops but no bytes)."""
    out: dict[str, float] = {}
    own = result.verdict.intensities if result.verdict is not None else {}
    static = result.resolved.intensities
    for cls in ("sp", "dp", "int"):
        for source in (own, static):
            try:
                out[cls] = float(source[cls])
                break
            except (KeyError, TypeError, ValueError):
                continue
    return out
