"""Pre-commit hook latency: wall time of `roofcast hook` on one kernel file (median of N),
next to `python -c pass`, so the hook's own share is visible.

    python bench/hook_startup.py [FILE] [--repeat 7]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def median_seconds(command: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=ROOT / "kernels/cuda/streaming.cu")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    roofcast = shutil.which("roofcast") or f"{sys.executable} -m roofcast.cli"
    hook = [*roofcast.split(), "hook", "--gpu", "a100", "--fail-on", "never", str(args.file)]
    bare = median_seconds([sys.executable, "-c", "pass"], args.repeat)
    full = median_seconds(hook, args.repeat)
    print(f"python -c pass          median {bare:.3f} s")
    print(f"roofcast hook (1 file)  median {full:.3f} s  ({full / bare:.1f}x a bare interpreter)")


if __name__ == "__main__":
    main()
