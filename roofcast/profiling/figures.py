"""Per-launch roofline figures from ncu metrics, in the vocabulary of the Nsight Compute
roofline sections and gpuFLOPBench: FLOPs = add + mul + 2 x fma per precision (thread-level
SASS counters), integer ops = thread-level integer instructions, DRAM bytes read + written.

Counts are taken from `.sum` counters when ncu reported them (`--metrics`), otherwise from
the roofline section's per-cycle rates x SM-subpartition cycles per second x duration, which
is how the gpuFLOPBench figures were computed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from roofcast.profiling.rawcsv import NcuLaunch

_SASS = "smsp__sass_thread_inst_executed_op_{op}_pred_on"
#: ncu instruction prefix per roofline class.
PRECISIONS = {"sp": "f", "dp": "d", "hp": "h"}
INT_METRIC = _SASS.format(op="integer") + ".sum"
DURATION = "gpu__time_duration.sum"
CYCLES_PER_SECOND = "smsp__cycles_elapsed.avg.per_second"


class MissingMetricError(ValueError):
    """A launch lacks a metric the figures need (not profiled with the roofline set)."""


@dataclass(frozen=True)
class LaunchFigures:
    """What one launch did, measured: ops per class, DRAM bytes, duration."""

    duration_ns: float
    dram_bytes: float
    sp_flops: float
    dp_flops: float
    hp_flops: float
    int_ops: float
    #: Classes ncu reported no counter for (their ops read 0); e.g. "int" without --metrics.
    missing: tuple[str, ...] = ()

    def ops(self, cls: str) -> float:
        return {"sp": self.sp_flops, "dp": self.dp_flops, "hp": self.hp_flops,
                "int": self.int_ops}[cls]

    def intensity(self, cls: str) -> float:
        """Ops per DRAM byte; a launch that moved no DRAM bytes but computed is infinitely dense."""
        ops = self.ops(cls)
        if self.dram_bytes > 0:
            return ops / self.dram_bytes
        return math.inf if ops > 0 else 0.0


def _count(launch: NcuLaunch, op: str, cycles: float | None) -> float:
    """Thread instructions of one SASS op: the `.sum` counter, else rate x elapsed cycles."""
    base = _SASS.format(op=op)
    total = launch.metric(base + ".sum")
    if total is not None:
        return total
    rate = launch.metric(base + ".sum.per_cycle_elapsed")
    if rate is not None and cycles is not None:
        return rate * cycles
    return math.nan


def _fma_ops(launch: NcuLaunch, prefix: str, cycles: float | None) -> float:
    """2 x FMA instructions: from the `.sum` counter, else the roofline's derived x2 rate."""
    count = launch.metric(_SASS.format(op=f"{prefix}fma") + ".sum")
    if count is not None:
        return 2 * count
    derived = launch.metric(f"derived__smsp__sass_thread_inst_executed_op_{prefix}fma_pred_on_x2")
    if derived is not None and cycles is not None:
        return derived * cycles
    return 2 * _count(launch, f"{prefix}fma", cycles)


def _flops(launch: NcuLaunch, prefix: str, cycles: float | None) -> float:
    parts = (_count(launch, f"{prefix}add", cycles), _count(launch, f"{prefix}mul", cycles),
             _fma_ops(launch, prefix, cycles))
    known = [p for p in parts if not math.isnan(p)]
    return sum(known) if known else math.nan


def _dram_bytes(launch: NcuLaunch, seconds: float) -> float:
    total = launch.metric("dram__bytes.sum")
    if total is not None:
        return total
    rate = launch.metric("dram__bytes.sum.per_second")
    if rate is not None:
        return rate * seconds
    read, write = launch.metric("dram__bytes_read.sum"), launch.metric("dram__bytes_write.sum")
    if read is not None and write is not None:
        return read + write
    raise MissingMetricError("no DRAM traffic metric (dram__bytes.sum[.per_second])")


def launch_figures(launch: NcuLaunch) -> LaunchFigures:
    """Measured figures of one launch; raises MissingMetricError without duration or DRAM bytes."""
    seconds = launch.metric(DURATION)
    if seconds is None:
        raise MissingMetricError(f"no kernel duration ({DURATION})")
    rate = launch.metric(CYCLES_PER_SECOND)
    cycles = rate * seconds if rate is not None else None
    flops = {cls: _flops(launch, prefix, cycles) for cls, prefix in PRECISIONS.items()}
    if all(math.isnan(v) for v in flops.values()):
        raise MissingMetricError("no floating-point instruction counters (use --set roofline)")
    int_ops = launch.metric(INT_METRIC)
    flops["int"] = int_ops if int_ops is not None else math.nan
    return LaunchFigures(
        duration_ns=seconds * 1e9,
        dram_bytes=_dram_bytes(launch, seconds),
        sp_flops=_zero_if_nan(flops["sp"]),
        dp_flops=_zero_if_nan(flops["dp"]),
        hp_flops=_zero_if_nan(flops["hp"]),
        int_ops=_zero_if_nan(flops["int"]),
        missing=tuple(cls for cls, value in flops.items() if math.isnan(value)),
    )


def _zero_if_nan(value: float) -> float:
    return 0.0 if math.isnan(value) else value
