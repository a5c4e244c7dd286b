"""Analysis time of one generated .cu file against its number of kernels.

    python bench/generated_file.py [--sizes 1000,4000,16000] [--gpu a100] [--profile N]

Writes, into a temporary folder outside the repository, one file of N small `__global__`
kernels (varied: loads, stores, a loop, a call to a `__device__` helper), each launched from
a host function, and runs the whole `analyze` job on it in this one process (`analyze_paths`
with one job, then the JSON report, as `analyze FILE --gpu G --format json` does). Prints, per
size, the wall seconds, the seconds per kernel, and the per-kernel cost of the largest size
over that of the smallest: about 1 when the analysis is linear in the file's size. Asserts
nothing. `--profile N` profiles the analysis of N kernels instead (cProfile, top functions).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import tempfile
import time
from pathlib import Path

from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths

_OPS = ("+", "-", "*")
_TYPES = ("float", "double", "int")


def _kernel(i: int) -> str:
    """Kernel i, its helper and its host launcher; the shape varies with i."""
    t = _TYPES[i % len(_TYPES)]
    op = _OPS[i % len(_OPS)]
    trips = 4 + i % 13
    body = [
        f"__device__ {t} helper_{i}({t} x, {t} y) {{ return x {op} y * ({t}){i % 7 + 1}; }}",
        "",
        f"__global__ void kernel_{i}(const {t}* __restrict__ a, {t}* out, int n)",
        "{",
        "    int idx = blockIdx.x * blockDim.x + threadIdx.x;",
        "    if (idx >= n) return;",
        f"    {t} acc = a[idx];",
        f"    for (int k = 0; k < {trips}; ++k) {{",
        f"        acc = helper_{i}(acc, a[(idx + k) % n]);",
        "    }",
    ]
    if i % 2:
        body.append(f"    out[idx] = acc {op} a[idx];")
    else:
        body += ["    if (acc > 0) {", "        out[idx] = acc;", "    }"]
    if i % 5 == 0:
        body.append(f"    out[(idx + 1) % n] += ({t}){trips};")
    body += [
        "}",
        "",
        f"void launch_{i}(const {t}* a, {t}* out, int n)",
        "{",
        f"    kernel_{i}<<<(n + 255) / 256, 256>>>(a, out, n);",
        "}",
        "",
    ]
    return "\n".join(body)


def generated_source(kernels: int) -> str:
    return "#include <cuda_runtime.h>\n\n" + "\n".join(_kernel(i) for i in range(kernels))


def write_file(folder: Path, kernels: int) -> Path:
    path = folder / f"generated_{kernels}.cu"
    path.write_text(generated_source(kernels))
    return path


def analyse(path: Path, gpu_name: str) -> int:
    """The `analyze FILE --gpu G --format json` job; returns the number of kernels reported."""
    report = analyze_paths([path], load_gpu(gpu_name), jobs=1)
    json.dumps(report.to_json())
    return len(report.kernels)


def timed(path: Path, gpu_name: str) -> tuple[float, int]:
    gc.collect()
    start = time.perf_counter()
    found = analyse(path, gpu_name)
    return time.perf_counter() - start, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="1000,4000,16000",
        help="comma-separated kernel counts (default: 1000,4000,16000)",
    )
    parser.add_argument("--gpu", default="a100")
    parser.add_argument("--profile", type=int, metavar="N", help="profile N kernels instead")
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes: not a comma-separated list of integers: {args.sizes!r}")
    if not sizes or min(sizes) < 1:
        parser.error("--sizes: give at least one positive kernel count")
    with tempfile.TemporaryDirectory(prefix="roofcast-generated-") as tmp:
        folder = Path(tmp)
        analyse(write_file(folder, 10), args.gpu)  # warm-up: imports, GPU specs, the model
        if args.profile:
            path = write_file(folder, args.profile)
            profile = cProfile.Profile()
            profile.runcall(analyse, path, args.gpu)
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
            return
        per_kernel: dict[int, float] = {}
        print(f"{'kernels':>8} {'bytes':>10} {'wall s':>8} {'ms/kernel':>10} {'reported':>9}")
        for n in sizes:
            path = write_file(folder, n)
            seconds, found = timed(path, args.gpu)
            per_kernel[n] = seconds / n
            print(
                f"{n:>8} {path.stat().st_size:>10} {seconds:>8.2f} "
                f"{1000 * per_kernel[n]:>10.3f} {found:>9}"
            )
    if len(sizes) > 1:
        small, large = min(sizes), max(sizes)
        ratio = per_kernel[large] / per_kernel[small]
        print(f"per-kernel({large}) / per-kernel({small}) = {ratio:.2f}")


if __name__ == "__main__":
    main()
