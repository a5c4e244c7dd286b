"""What rule M10 (types from clang) costs and changes over a manifest's kernels.

Counts the manifest's rows twice with the compile database, libclang off
(ROOFCAST_LIBCLANG=off) then on, and prints:

- the wall time of each count, and so the time libclang adds (on its cache as it is: run
  with XDG_CACHE_HOME pointing at an empty folder for a cold run);
- per distinct translation unit of the matched kernels: parse success (a unit libclang
  parsed, even with errors in it, counts as parsed), the median and 90th percentile seconds
  of a fresh parse (over `--sample` units) and of a read from the cache;
- how many matched kernels clang changed: a template parameter bound by the unit's
  instance, or a declaration typed otherwise than the text says (their M10 notes).

    python bench/clang_types.py MANIFEST SOURCES --compile-commands compile_commands.json
        [--gpu rtx3080] [--sample 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

from roofcast.analyzer.compdb import CompileDatabaseError, load_database

from roofcast.evaluation.manifest import ManifestError, load_manifest
from roofcast.evaluation.runner import BuildFlags, analyze_rows


def _count(rows, sources: Path, gpu, database, libclang: bool) -> tuple[float, list]:
    """(seconds, outcomes) of counting the rows, libclang on or off."""
    os.environ["ROOFCAST_LIBCLANG"] = "on" if libclang else "off"
    start = time.perf_counter()
    outcomes = analyze_rows(rows, sources, gpu, None, build=BuildFlags(database=database))
    return time.perf_counter() - start, outcomes


def _quantiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return {"n": len(values), "median": statistics.median(values), "p90": p90}


def _noted(result, prefix: str) -> bool:
    return any(note.startswith(prefix) for note in result.features.notes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("sources", type=Path)
    parser.add_argument("--compile-commands", type=Path, required=True)
    parser.add_argument("--gpu", default="rtx3080")
    parser.add_argument("--sample", type=int, default=20, help="units parsed afresh, timed")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from roofcast.analyzer import clangast
    from roofcast.gpu_specs import load_gpu

    try:
        rows = load_manifest(args.manifest)
        database = load_database(args.compile_commands)
        gpu = load_gpu(args.gpu)
    except (ManifestError, CompileDatabaseError, KeyError, ValueError, OSError) as exc:
        print(f"clang_types: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    reason = clangast.disabled_reason()
    if reason is not None:
        print(f"clang_types: {reason}", file=sys.stderr)
        return 2
    off_s, _ = _count(rows, args.sources, gpu, database, libclang=False)
    on_s, outcomes = _count(rows, args.sources, gpu, database, libclang=True)

    kernels = {o.result.ir.id: o.result for o in outcomes if o.result is not None}
    changed = {k for k, r in kernels.items() if _noted(r, "types from clang [M10]")}
    failed = {k for k, r in kernels.items() if _noted(r, "types guessed from the text [M10]")}
    units = {r.ir.unit for r in kernels.values() if r.ir.unit is not None}
    by_language = {"CUDA": [0, 0], "OMP": [0, 0]}
    cached: list[float] = []
    for unit in units:
        start = time.perf_counter()
        types = clangast.unit_types(unit)  # from the cache the counting filled
        cached.append(time.perf_counter() - start)
        tally = by_language["CUDA" if unit.cuda else "OMP"]
        tally[0] += 1
        tally[1] += types.parsed
    fresh: list[float] = []
    for unit in random.Random(0).sample(sorted(units, key=str), min(args.sample, len(units))):
        resources = clangast.resource_dir()
        cuda = clangast._cuda_path() if unit.cuda else None
        start = time.perf_counter()
        try:
            clangast._parse(unit, clangast.clang_arguments(unit, resources, cuda))
        except Exception as exc:  # noqa: BLE001 - unit_types turns it into a note; say it here
            print(f"clang_types: {unit.file}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        fresh.append(time.perf_counter() - start)
    report = {
        "rows": len(rows),
        "kernels": len(kernels),
        "kernels_changed": len(changed),
        "kernels_unparsed": len(failed),
        "units": {k: {"n": n, "parsed": p} for k, (n, p) in by_language.items()},
        "parse_rate": sum(p for _, p in by_language.values()) / max(1, len(units)),
        "count_seconds": {"libclang_off": off_s, "libclang_on": on_s, "added": on_s - off_s},
        "parse_seconds_fresh": _quantiles(fresh),
        "parse_seconds_cached": _quantiles(cached),
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"rows {report['rows']}, matched kernels {report['kernels']}")
    print(f"kernels clang changed: {len(changed)}; whose unit did not parse: {len(failed)}")
    for language, (n, parsed) in by_language.items():
        print(f"units {language}: {parsed}/{n} parsed")
    print(f"count time: off {off_s:.1f} s, on {on_s:.1f} s, added {on_s - off_s:.1f} s")
    for name in ("parse_seconds_fresh", "parse_seconds_cached"):
        q = report[name]
        if q["n"]:
            print(f"{name}: median {q['median']:.4f} s, p90 {q['p90']:.4f} s over {q['n']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
