"""Analysis speed: kernels/s and the ratio of full analysis time to a bare tree-sitter parse.

    python bench/speed.py PATH [--jobs N] [--repeat 3] [--gpu rtx3080]

"Full analysis" is what `analyze PATH --gpu G` does before printing: expand the folder, split
it into independent groups, discover kernels, count, resolve, and predict with the default
(learned) predictor, in N processes (default: one per available CPU). The bare parse reads
and parses every listed file with tree-sitter and nothing else, once in one process and once
spread over the same N processes, so that the ratio is also given at equal parallelism.
Medians over --repeat runs, all measured in this one process run, each garbage collected
before and after inside its timing; then the peak memory of the analysis, each process count
in a fresh process.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TypeVar

from roofcast.analyzer.parsing import parse
from roofcast.analyzer.partition import independent_groups
from roofcast.analyzer.sources import SourceError, expand_paths, read_source
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.scheduler import available_cpus, batch_groups


def parse_files(files: list[Path]) -> int:
    for path in files:
        try:
            source = read_source(path)
        except SourceError:
            continue
        parse(source.text, source.grammar)
    return len(files)


_R = TypeVar("_R")


def timed(run: Callable[[], _R]) -> tuple[float, _R]:
    """Seconds of `run()`, garbage collected before (no run pays for the one before) and
    after (a run pays for the full collections it put off, as `analyze_paths` does)."""
    gc.collect()
    start = time.perf_counter()
    result = run()
    gc.collect()
    return time.perf_counter() - start, result


def bare_parse(files: list[Path]) -> float:
    return timed(lambda: parse_files(files))[0]


def bare_parse_parallel(groups: list[list[Path]], jobs: int) -> float:
    """The same tasks as the analysis: groups of alike folders, largest first."""
    tasks = [[f for i in batch for f in groups[i]] for batch in batch_groups(groups)]

    def run() -> None:
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(parse_files, sorted(tasks, key=len, reverse=True)))

    return timed(run)[0]


def full_analysis(path: Path, gpu_name: str, jobs: int) -> tuple[float, int]:
    seconds, report = timed(lambda: analyze_paths([path], load_gpu(gpu_name), jobs=jobs))
    return seconds, len(report.kernels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--jobs", type=int, default=available_cpus())
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gpu", default="rtx3080")
    args = parser.parse_args()
    files = expand_paths([args.path])
    groups = independent_groups(files, [args.path])
    serial_parse, parallel_parse, serial, parallel, kernels = [], [], [], [], 0
    for _ in range(args.repeat):
        serial_parse.append(bare_parse(files))
        parallel_parse.append(bare_parse_parallel(groups, args.jobs))
        seconds, kernels = full_analysis(args.path, args.gpu, 1)
        serial.append(seconds)
        seconds, kernels = full_analysis(args.path, args.gpu, args.jobs)
        parallel.append(seconds)
    p1, pn = statistics.median(serial_parse), statistics.median(parallel_parse)
    a1, an = statistics.median(serial), statistics.median(parallel)
    print(f"files {len(files)}  independent groups {len(groups)}  kernels {kernels}")
    print(f"{'':28s}{'1 process':>14s}{f'{args.jobs} processes':>16s}")
    print(f"{'bare tree-sitter parse (s)':28s}{p1:14.2f}{pn:16.2f}")
    print(f"{'full analysis (s)':28s}{a1:14.2f}{an:16.2f}")
    print(f"{'kernels/s':28s}{kernels / a1:14.0f}{kernels / an:16.0f}")
    print(f"{'analysis / bare parse':28s}{a1 / p1:13.2f}x{an / pn:15.2f}x")
    print(f"analysis with {args.jobs} processes / bare parse in 1 process: {an / p1:.2f}x")
    for jobs in sorted({1, args.jobs}):
        own, worker = peak_memory_mib(args.path, args.gpu, jobs)
        where = f", largest worker {worker:.0f} MiB" if jobs > 1 else ""
        print(f"peak memory, analysis in {jobs} process(es): main {own:.0f} MiB{where}")


_MEASURE = """
import resource, sys
from pathlib import Path
from roofcast.gpu_specs import load_gpu
from roofcast.pipeline import analyze_paths
analyze_paths([Path(sys.argv[1])], load_gpu(sys.argv[2]), jobs=int(sys.argv[3]))
mib = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes there, KiB here
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / mib
try:  # Linux carries ru_maxrss over exec (the forking parent's size); VmHWM starts afresh
    with open("/proc/self/status") as status:
        own = next(int(s.split()[1]) for s in status if s.startswith("VmHWM:")) / 1024
except OSError:
    pass
print(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / mib)
"""


def peak_memory_mib(path: Path, gpu: str, jobs: int) -> tuple[float, float]:
    """Peak resident memory of a fresh process running the analysis, and of its largest
    worker (which counts the pages it shares with its parent). Measured apart from this
    process, whose heap already holds the runs above."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), gpu, str(jobs)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[-2]), float(out[-1])


if __name__ == "__main__":
    main()
