"""The learned baseline's inputs: what the kernel does, never which GPU labelled it.

Every feature is a property of the kernel and its launch (counts, intensities, structure,
threads, problem size), except one: working set over the target GPU's L2, the quantity
that decides how many bytes reach DRAM. So the RTX 3080 data can teach any GPU.
"""

from __future__ import annotations

import math
import re

from roofcast.gpu_specs import GPU
from roofcast.results import KernelResult, LaunchContext

EPS_AI = 1e-3  # intensities below this are 'none of that class'

FEATURE_NAMES: tuple[str, ...] = (
    "log_flops_sp",
    "log_flops_dp",
    "log_flops_hp",
    "log_int_ops",
    "log_special",
    "log_load_bytes",
    "log_store_bytes",
    "log_bytes",
    "log_loads",
    "log_stores",
    "log_shared_bytes",
    "log_atomics",
    "log_barriers",
    "log_branches",
    "log_ai_sp",
    "log_ai_dp",
    "log_ai_int",
    "int_share",
    "dp_share",
    "loop_depth",
    "loops",
    "unknown_trip_loops",
    "indirect_accesses",
    "reuse_accesses",
    "distinct_arrays",
    "shared_arrays",
    "device_calls",
    "templated",
    "unparsed_regions",
    "defaults_used",
    "fully_resolved",
    "is_openmp",
    "log_threads",
    "log_block",
    "log_grid",
    "log_arg_max",
    "log_arg_prod",
    "n_args",
    "log_working_set",
    "log_ws_over_l2",
    "log_bytes_private",
    "log_bytes_partial",
    "log_bytes_broadcast",
    "private_share",
    "log_ai_sp_est",
    "log_ai_dp_est",
    "log_ai_int_est",
    "rare_share",
    "shared_over_global",
    "int_per_access",
    "atomics_per_access",
    "log_special_dp",
    # the launch traffic model (features/traffic.py); the intensities above use its bytes,
    # these give the per-thread ones beside them and how sure the model was
    "log_dram_launch",
    "l2_decision",
    "log_waves",
    "affine_share",
    "log_pt_ai_sp",
    "log_pt_ai_dp",
    "log_pt_ai_int",
)

_DECISIONS = {"fits L2": 0.0, "wave fits L2": 1.0, "spills L2": 2.0}


def _log(x: float) -> float:
    return math.log10(1.0 + max(0.0, x))


def _log_ai(x: float) -> float:
    return math.log10(max(x, 0.0) + EPS_AI) if math.isfinite(x) else 3.0


def _args(exe_args: str) -> list[float]:
    values = []
    for token in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE]\d+)?", exe_args or ""):
        try:
            values.append(float(token))
        except ValueError:
            continue
    return [v for v in values if v > 0]


def dram_bytes_estimate(
    private: float,
    partial: float,
    broadcast: float,
    partial_share: float = 8.0,
    broadcast_share: float = 64.0,
) -> float:
    """Bytes per thread that reach DRAM: shared elements are fetched once for many threads."""
    return private + partial / partial_share + broadcast / broadcast_share


def _traffic_features(r) -> dict[str, float]:
    """What the launch traffic model decided, and the per-thread intensities beside it."""
    dram = r.dram
    moved = dram.total if dram is not None else 0.0
    from_index = sum(a.dram_load + a.dram_store for a in dram.arrays if a.exact) if dram else 0.0
    per_thread = {
        c: (r.flops[c] / r.bytes if r.bytes > 0 else (1e3 if r.flops[c] else 0.0))
        for c in ("sp", "dp", "int")
    }
    return {
        "log_dram_launch": _log(moved),
        "l2_decision": _DECISIONS.get(dram.decision, -1.0) if dram is not None else -1.0,
        "log_waves": _log(dram.waves) if dram is not None else 0.0,
        "affine_share": from_index / moved if moved else 0.0,
        "log_pt_ai_sp": _log_ai(per_thread["sp"]),
        "log_pt_ai_dp": _log_ai(per_thread["dp"]),
        "log_pt_ai_int": _log_ai(per_thread["int"]),
    }


def kernel_features(result: KernelResult, gpu: GPU, context: LaunchContext | None) -> list[float]:
    r, fv = result.resolved, result.features
    s = r.structure
    special = sum(r.special.values())
    ops = r.flops["sp"] + r.flops["dp"] + r.flops["hp"] + r.flops["int"]
    ai = r.intensities
    threads = r.threads
    block = grid = 0.0
    if context is not None and context.block:
        block = float(math.prod(context.block))
    if context is not None and context.grid:
        grid = float(math.prod(context.grid))
    if result.ir.language == "cuda" and block and grid:
        threads = block * grid
    args = _args(context.exe_args if context else "")
    working_set = r.bytes * max(threads, 1.0)
    private, partial, broadcast = (
        s.get("bytes_private", 0.0),
        s.get("bytes_partial", 0.0),
        s.get("bytes_broadcast", 0.0),
    )
    dram = dram_bytes_estimate(private, partial, broadcast)
    footprint = s.get("footprint", 0.0)
    values = {
        "log_flops_sp": _log(r.flops["sp"]),
        "log_flops_dp": _log(r.flops["dp"]),
        "log_flops_hp": _log(r.flops["hp"]),
        "log_int_ops": _log(r.flops["int"]),
        "log_special": _log(special),
        "log_load_bytes": _log(r.load_bytes),
        "log_store_bytes": _log(r.store_bytes),
        "log_bytes": _log(r.bytes),
        "log_loads": _log(s.get("loads", 0)),
        "log_stores": _log(s.get("stores", 0)),
        "log_shared_bytes": _log(s.get("shared_load_bytes", 0) + s.get("shared_store_bytes", 0)),
        "log_atomics": _log(s.get("atomics", 0)),
        "log_barriers": _log(s.get("barriers", 0)),
        "log_branches": _log(s.get("branches", 0)),
        "log_ai_sp": _log_ai(ai["sp"]),
        "log_ai_dp": _log_ai(ai["dp"]),
        "log_ai_int": _log_ai(ai["int"]),
        "int_share": r.flops["int"] / ops if ops else 0.0,
        "dp_share": r.flops["dp"] / ops if ops else 0.0,
        "loop_depth": fv.loop_depth,
        "loops": fv.loops,
        "unknown_trip_loops": fv.unknown_trip_loops,
        "indirect_accesses": fv.indirect_accesses,
        "reuse_accesses": fv.reuse_accesses,
        "distinct_arrays": fv.distinct_arrays,
        "shared_arrays": fv.shared_arrays,
        "device_calls": fv.device_calls,
        "templated": float(fv.templated),
        "unparsed_regions": fv.unparsed_regions,
        "defaults_used": len(r.defaults),
        "fully_resolved": float(r.fully_resolved),
        "is_openmp": float(result.ir.language == "openmp"),
        "log_threads": _log(threads),
        "log_block": _log(block),
        "log_grid": _log(grid),
        "log_arg_max": _log(max(args, default=0.0)),
        "log_arg_prod": min(30.0, sum(math.log10(1 + a) for a in args)),
        "n_args": float(len(args)),
        "log_working_set": _log(working_set),
        "log_ws_over_l2": math.log10((working_set + 1.0) / max(gpu.l2_bytes, 1.0)),
        "log_bytes_private": _log(private),
        "log_bytes_partial": _log(partial),
        "log_bytes_broadcast": _log(broadcast),
        "private_share": private / r.bytes if r.bytes else 0.0,
        "log_ai_sp_est": _log_ai(r.flops["sp"] / dram if dram else 1e3),
        "log_ai_dp_est": _log_ai(r.flops["dp"] / dram if dram else (1e3 if r.flops["dp"] else 0)),
        "log_ai_int_est": _log_ai(r.flops["int"] / dram if dram else 1e3),
        "rare_share": s.get("bytes_rare", 0.0) / r.bytes if r.bytes else 0.0,
        "shared_over_global": _log(
            (s.get("shared_load_bytes", 0) + s.get("shared_store_bytes", 0)) / max(r.bytes, 1.0)
        ),
        "int_per_access": _log(r.flops["int"] / max(1.0, s.get("loads", 0) + s.get("stores", 0))),
        "atomics_per_access": _log(
            s.get("atomics", 0) / max(1.0, s.get("loads", 0) + s.get("stores", 0))
        ),
        "log_special_dp": _log(sum(v for k, v in r.special.items() if k.endswith(".dp"))),
        "has_footprint": float(footprint > 0),
        "log_footprint": _log(footprint),
        "log_fp_over_l2": (
            math.log10((footprint + 1.0) / max(gpu.l2_bytes, 1.0)) if footprint else 0.0
        ),
        "log_ai_sp_fp": _log_ai(r.flops["sp"] * threads / footprint) if footprint else -4.0,
        "log_ai_dp_fp": _log_ai(r.flops["dp"] * threads / footprint) if footprint else -4.0,
        "log_ai_int_fp": _log_ai(r.flops["int"] * threads / footprint) if footprint else -4.0,
        **_traffic_features(r),
    }
    return [float(values[name]) for name in FEATURE_NAMES]
