"""Report dicts in the `analyze --format json` contract, built from per-thread counts, for the
workflow tests that must not depend on the analyzer. A helper module (not collected: its name
does not start with `test_`); each verdict is the real roofline rule's on the counts."""

from __future__ import annotations

from pathlib import Path

from roofcast.gpu_specs import GPU, load_gpu

from roofcast.predictors.roofline import roofline_verdict

CLASSES = ("sp", "dp", "hp", "int")


def kernel(
    name: str, file: str, line: int, load: float, store: float, gpu: GPU, **ops: float
) -> dict:
    """One kernel dict; its verdict is the analytic rule's (`roofline_verdict`) on `gpu`."""
    flops = {c: ops.get(c, 0) for c in CLASSES}
    moved = load + store
    ai = {c: (flops[c] / moved if moved else 0.0) for c in CLASSES}
    verdict = roofline_verdict(ai, gpu, moves_bytes=moved > 0)
    return {
        "name": name,
        "file": file,
        "line": line,
        "language": "cuda",
        "flops_per_thread": flops,
        "bytes_per_thread": {"load": load, "store": store},
        "arithmetic_intensity": ai,
        "bound": verdict.bound,
        "reason": verdict.reason,
        "predictor": verdict.predictor,
        "symbols": [],
    }


def report(gpu_name: str, specs: list[tuple], root: Path) -> dict:
    """specs: (name, file under root, line, load, store, {class: ops}) -> report for a GPU."""
    gpu = load_gpu(gpu_name)
    return {
        "schema_version": 1,
        "gpu": {
            "name": gpu.name,
            "key": gpu.key,
            "balance_points": gpu.to_json()["balance_points"],
        },
        "kernels": [
            kernel(n, str(root / f), ln, ld, st, gpu, **ops) for n, f, ln, ld, st, ops in specs
        ],
        "problems": [],
    }


#: saxpy (bandwidth everywhere), a DP-heavy kernel (1 DP FLOP per byte: compute-bound on an
#: RTX 3080 whose DP balance is 0.515, bandwidth-bound on an A100 or H100), and an SP GEMM tile
#: (compute-bound everywhere).
SPECS = [
    ("saxpy", "src/blas.cu", 10, 8, 4, {"sp": 2, "int": 3}),
    ("dp_poly", "src/poly.cu", 5, 16, 8, {"dp": 24, "int": 4}),
    ("sgemm_tile", "src/blas.cu", 30, 64, 4, {"sp": 4096, "int": 40}),
]
