"""Coverage-guided fuzzing of the preprocessor, `#if` evaluation and `--define` parsing.

    python bench/fuzz.py [TARGET ...] [--seconds 60] [--engine atheris|random] [--out DIR]

TARGETs are those of tests/fuzzing/targets.py (default: all). Each runs in its own process:
under Atheris (`pip install atheris`), libFuzzer mutates bytes that Hypothesis decodes into
a structured input (see that module for why this pairing), with coverage taken from the
roofcast modules under test only; `--engine random` (or no Atheris) feeds random bytes
instead, without coverage guidance. A failure does not stop the run: each distinct one
(exception type and message head, where it was raised) is kept with its first input,
written to --out. Inputs of known issues are skipped (`known_issue` there).

Printed per target: examples run, distinct failures, seconds, and libFuzzer's final edge
coverage (`cov`) and features (`ft`) where Atheris ran; a libFuzzer timeout (an input
running past 10 s) or crash is reported as a failure too.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import re
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

#: the modules whose edges guide the search (a prefix matches submodules); when
#: features/cexpr.py lands it is covered by the `roofcast.features` prefix
INSTRUMENTED = ["roofcast.analyzer.preprocess", "roofcast.features", "fuzzing"]
HANG_SECONDS = 10


def _failure_key(exc: BaseException) -> str:
    """Where and how a failure happened: its type, first message line and innermost frame
    in roofcast or the targets, so that one bug found many times counts once."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if "roofcast" in f.filename
        or "/analyzer/" in f.filename
        or "/features/" in f.filename
        or "fuzzing" in f.filename
    ]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    head = (str(exc).splitlines() or [""])[0]
    if isinstance(exc, AssertionError):
        head = head.split(":")[0]  # a property's message starts with what broke, then the input
    head = re.sub(r"\d+(\.\d+)?", "#", head)[:80]  # numbers vary between inputs of one bug
    return f"{type(exc).__name__} at {where}: {head}"


def child(name: str, seconds: float, engine: str, out: Path, seed: int) -> None:
    """Fuzz one target in this process; stats go to out/<name>.json, also while running."""
    from hypothesis import HealthCheck, settings

    if engine == "atheris":
        import atheris

        with atheris.instrument_imports(include=INSTRUMENTED):
            from fuzzing.targets import TARGETS, hypothesis_test
    else:
        from fuzzing.targets import TARGETS, hypothesis_test

    prop = TARGETS[name][0]
    last: list[tuple] = []

    @functools.wraps(prop)  # Hypothesis reads the property's parameters through this
    def recording(*args: object, **kwargs: object) -> None:
        last[:] = [(*args, *kwargs.values())]
        prop(*args, **kwargs)

    test = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))(
        hypothesis_test(name, recording)
    )
    stats = {"target": name, "engine": engine, "runs": 0, "failures": {}, "seconds": 0.0}
    start = time.monotonic()
    stats_path = out / f"{name}.json"
    last_dump = [start]

    def dump() -> None:
        stats["seconds"] = round(time.monotonic() - start, 1)
        stats_path.write_text(json.dumps(stats, indent=1), encoding="utf-8")

    def one_input(data: bytes) -> None:
        stats["runs"] += 1
        try:
            test.hypothesis.fuzz_one_input(data)
        except Exception as exc:  # noqa: BLE001 - every failure is a finding to record
            key = _failure_key(exc)
            if key not in stats["failures"]:
                stats["failures"][key] = {
                    "input": repr(last[0] if last else data)[:2000],
                    "count": 0,
                }
                (out / f"{name}-{len(stats['failures'])}.bin").write_bytes(data)
            stats["failures"][key]["count"] += 1
        now = time.monotonic()
        if now - last_dump[0] > 2:
            last_dump[0] = now
            dump()
        if now - start > seconds:
            dump()
            sys.stdout.flush()
            os._exit(0)

    if engine == "atheris":
        atheris.Setup(
            [
                sys.argv[0],
                f"-max_total_time={int(seconds) + 30}",
                f"-timeout={HANG_SECONDS}",
                "-rss_limit_mb=4096",
                f"-seed={seed}",
                f"-artifact_prefix={out}/{name}-",
                "-print_final_stats=1",
            ],
            one_input,
        )
        atheris.Fuzz()
    rng = random.Random(seed)
    while True:
        one_input(rng.randbytes(rng.randint(0, 4096)))


def parent(names: list[str], seconds: float, engine: str, out: Path, seed: int) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in names:
        stats_path = out / f"{name}.json"
        stats_path.unlink(missing_ok=True)
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                name,
                "--seconds",
                str(seconds),
                "--engine",
                engine,
                "--out",
                str(out),
                "--seed",
                str(seed),
            ],
            capture_output=True,
            text=True,
            timeout=seconds + 120,
        )
        log = proc.stdout + proc.stderr
        (out / f"{name}.log").write_text(log, encoding="utf-8")
        stats = (
            json.loads(stats_path.read_text())
            if stats_path.exists()
            else {"runs": 0, "failures": {}, "seconds": 0.0}
        )
        crash = re.search(r"ERROR: libFuzzer: (\S+)", log)
        if crash or proc.returncode not in (0, None):
            what = crash.group(1) if crash else f"exit {proc.returncode}"
            stats["failures"][f"libFuzzer {what}"] = {"input": f"see {out}/{name}-*", "count": 1}
        coverage = re.findall(r"cov: (\d+) ft: (\d+)", log)
        stats["cov"], stats["ft"] = coverage[-1] if coverage else ("-", "-")
        rows.append((name, stats))
    print(f"{'target':<16} {'runs':>9} {'failures':>8} {'seconds':>8} {'cov':>6} {'ft':>6}")
    for name, s in rows:
        print(
            f"{name:<16} {s['runs']:>9} {len(s['failures']):>8} {s['seconds']:>8} "
            f"{s['cov']:>6} {s['ft']:>6}"
        )
    for name, s in rows:
        for key, info in s["failures"].items():
            print(f"\n[{name}] {key} (x{info['count']})\n  first input: {info['input'][:400]}")
    return 1 if any(s["failures"] for _, s in rows) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", help="names in fuzzing.targets (default: all)")
    parser.add_argument("--seconds", type=float, default=60.0, help="per target")
    try:
        import atheris  # noqa: F401

        default_engine = "atheris"
    except ImportError:
        default_engine = "random"
    parser.add_argument("--engine", choices=["atheris", "random"], default=default_engine)
    parser.add_argument("--out", type=Path, default=REPO / "out" / "fuzz")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # before importing the targets: Atheris instruments them as they load
        child(args.child, args.seconds, args.engine, args.out, args.seed)
        return 0
    from fuzzing.targets import TARGETS

    unknown = set(args.targets) - set(TARGETS)
    if unknown:
        parser.error(f"unknown target(s): {', '.join(sorted(unknown))}")
    return parent(args.targets or list(TARGETS), args.seconds, args.engine, args.out, args.seed)


if __name__ == "__main__":
    sys.exit(main())
