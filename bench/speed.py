"""Analysis speed: kernels/s and the ratio of full analysis time to a bare tree-sitter parse.

    python bench/speed.py PATH [--repeat 3] [--limit-folders N]

Both timings cover the same files in the same process; medians over --repeat runs.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from roofcast.analyzer import discover
from roofcast.analyzer.parsing import parse
from roofcast.analyzer.sources import SourceError, expand_paths, read_source
from roofcast.features import count_features
from roofcast.features.resolve import resolve_counts


def bare_parse(files: list[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        try:
            source = read_source(path)
        except SourceError:
            continue
        parse(source.text, source.grammar)
    return time.perf_counter() - start


def full_analysis(roots: list[Path]) -> tuple[float, int]:
    start = time.perf_counter()
    kernels = 0
    for root in roots:
        for ir in discover([root]).kernels:
            resolve_counts(count_features(ir, {}))
            kernels += 1
    return time.perf_counter() - start, kernels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit-folders", type=int, default=0)
    args = parser.parse_args()
    roots = sorted(p for p in args.path.iterdir() if p.is_dir()) or [args.path]
    if args.limit_folders:
        roots = roots[: args.limit_folders]
    files = expand_paths(roots)
    parse_times, analysis_times, kernels = [], [], 0
    for _ in range(args.repeat):
        parse_times.append(bare_parse(files))
        seconds, kernels = full_analysis(roots)
        analysis_times.append(seconds)
    p, a = statistics.median(parse_times), statistics.median(analysis_times)
    print(f"folders {len(roots)}  files {len(files)}  kernels {kernels}")
    print(f"bare tree-sitter parse  median {p:.2f} s")
    print(f"full analysis           median {a:.2f} s  ({kernels / a:.0f} kernels/s)")
    print(f"ratio analysis / parse  {a / p:.2f}x")


if __name__ == "__main__":
    main()
