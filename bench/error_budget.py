"""Where do our launch totals go wrong against Nsight Compute's, and what does each cost?

Runs the matching and analysis of `roofcast evaluate` (roofline predictor) once, then prints

- per quantity (DRAM bytes, int ops, SP/DP/HP FLOPs, arithmetic intensity per class) and per
  language (CUDA, OMP, all): the share within 2x, the median signed and absolute log10
  error, and the shares more than 2x over and more than 2x under;
- the ORACLE table: the analytic roofline rule's balanced accuracy when the measured bytes,
  int ops or FLOPs (and each pair of them) replace ours.

The AI error of a class is the FLOP (op) error minus the byte error: log10 of
((ops + 1) / (bytes + 1)) predicted over the same measured, the +1 of the count errors.

    python bench/error_budget.py MANIFEST SOURCES [--gpu rtx3080] [--json]
        [--compile-commands compile_commands.json] [--jobs N] [--compile [--compiled-only]]

With --compile, CUDA kernels' and OpenMP regions' FLOPs and int ops come from their SASS
(docs/counting.md S0-S13); the JSON gains `compiled_share` and the issue's targets over CUDA
rows: int ops within 2x, non-zero SP FLOPs within 10%; --compiled-only keeps the rows counted
from SASS.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table
from roofcast.analyzer.compdb import CompileDatabaseError, load_database

from roofcast.evaluation.counts import count_pairs
from roofcast.evaluation.manifest import ManifestError, load_manifest
from roofcast.evaluation.metrics import error_budget, signed_log10_error
from roofcast.evaluation.oracle import oracle_accuracy, substitution_sets
from roofcast.evaluation.runner import BuildFlags, RowOutcome, analyze_rows
from roofcast.evaluation.tables import fmt
from roofcast.predictors.roofline import RooflinePredictor

#: Count quantities (measured column names) in the order printed.
COUNTS: tuple[str, ...] = ("dram_bytes", "int_ops", "sp_flops", "dp_flops", "hp_flops")
#: Intensity quantities -> the op column they divide by DRAM bytes.
INTENSITIES: dict[str, str] = {
    "sp_ai": "sp_flops",
    "dp_ai": "dp_flops",
    "hp_ai": "hp_flops",
    "int_ai": "int_ops",
}
LANGUAGES: tuple[str, ...] = ("CUDA", "OMP", "all")


def row_errors(outcome: RowOutcome) -> dict[str, float]:
    """Signed log10 errors (positive = we over-count) of one row, by quantity."""
    signed = {p.column: signed_log10_error(p.predicted, p.measured) for p in count_pairs(outcome)}
    out = {q: signed[q] for q in COUNTS if q in signed}
    if "dram_bytes" in signed:
        for ai, ops in INTENSITIES.items():
            if ops in signed:
                out[ai] = signed[ops] - signed["dram_bytes"]
    return out


def budget(outcomes: Sequence[RowOutcome]) -> dict[str, dict[str, dict]]:
    """quantity -> language (CUDA, OMP, all) -> `error_budget` summary. Quantities with no
    measured column in the manifest (HP FLOPs in gpuFLOPBench) are left out."""
    errors = [(o.row.language, row_errors(o)) for o in outcomes]
    out: dict[str, dict[str, dict]] = {}
    for quantity in (*COUNTS, *INTENSITIES):
        if not any(quantity in e for _, e in errors):
            continue
        out[quantity] = {
            language: error_budget(
                [e[quantity] for lang, e in errors if quantity in e and language in (lang, "all")]
            )
            for language in LANGUAGES
        }
    return out


def oracle(outcomes: Sequence[RowOutcome], gpu) -> dict[str, dict[str, float | None]]:
    """substitution name ('as is', 'bytes', 'bytes+int', ...) -> language -> balanced
    accuracy of the roofline rule."""
    out: dict[str, dict[str, float | None]] = {}
    for chosen in substitution_sets():
        name = "+".join(chosen) or "as is"
        out[name] = {
            language: oracle_accuracy(
                [o for o in outcomes if language in (o.row.language, "all")], gpu, chosen
            )
            for language in LANGUAGES
        }
    return out


#: kernels at least this long show the profiling machine's DRAM floor plainly
FLOOR_MIN_SECONDS = 0.05


def background_floor(outcomes: Sequence[RowOutcome]) -> dict[str, float]:
    """The DRAM traffic the ground-truth machine shows under any kernel, from the measured
    rows alone: the lowest measured DRAM rate (bytes / kernel time) among kernels running at
    least FLOOR_MIN_SECONDS. On gpuFLOPBench's RTX 3080 long compute kernels that touch a few
    MB read as 1.1-1.3 GB/s whatever they do: traffic that is not the kernel's (a desktop
    card's display scan-out, say), which no count of the kernel's own accesses predicts."""
    rates = [
        o.row.measured["dram_bytes"] / (o.row.measured["xtime_ns"] * 1e-9)
        for o in outcomes
        if o.row.measured.get("xtime_ns", 0) >= FLOOR_MIN_SECONDS * 1e9
        and "dram_bytes" in o.row.measured
    ]
    return {"bytes_per_s": min(rates) if rates else 0.0, "kernels": len(rates)}


def at_floor(outcome: RowOutcome, bytes_per_s: float) -> bool:
    """Whether a row's measured DRAM bytes are within 2x of the floor over its run: ncu's
    figure there is mostly the floor's, not the kernel's."""
    seconds = outcome.row.measured.get("xtime_ns", 0.0) * 1e-9
    return outcome.row.measured.get("dram_bytes", 0.0) <= 2 * bytes_per_s * seconds


def floor_split(outcomes: Sequence[RowOutcome], bytes_per_s: float) -> dict[str, dict]:
    """DRAM bytes' error budget apart for rows above the floor and rows at it."""
    out: dict[str, dict] = {}
    for part, keep in (("above floor", False), ("at floor", True)):
        chosen = [o for o in outcomes if at_floor(o, bytes_per_s) == keep]
        out[part] = budget(chosen).get("dram_bytes", {})
    return out


def _from_sass(outcome: RowOutcome) -> bool:
    result = outcome.result
    return result is not None and result.features.counted_from == "sass"


def compiled_share(outcomes: Sequence[RowOutcome]) -> float:
    """Matched rows with counts that were counted from SASS, as a fraction of those rows."""
    counted = [o for o in outcomes if o.matched and o.result is not None]
    return round(sum(map(_from_sass, counted)) / len(counted), 4) if counted else 0.0


def targets(outcomes: Sequence[RowOutcome]) -> dict[str, dict[str, float | int]]:
    """The issue's count targets over CUDA rows: int ops within 2x; non-zero measured SP
    FLOPs within 10%."""
    ints: list[bool] = []
    sps: list[bool] = []
    for outcome in outcomes:
        if outcome.row.language != "CUDA":
            continue
        for pair in count_pairs(outcome):
            if pair.column == "int_ops":
                ints.append(abs(signed_log10_error(pair.predicted, pair.measured)) <= 0.30103)
            if pair.column == "sp_flops" and pair.measured > 0:
                sps.append(abs(pair.predicted - pair.measured) <= 0.1 * pair.measured)
    return {
        "int_within_2x": {"n": len(ints), "share": round(sum(ints) / len(ints), 4) if ints else 0},
        "sp_nonzero_within_10pct": {
            "n": len(sps),
            "share": round(sum(sps) / len(sps), 4) if sps else 0,
        },
    }


def _error_table(title: str, first: str, parts: dict[str, dict[str, dict]]) -> Table:
    """One row per (part, language) of `error_budget` summaries: share within 2x, median
    signed and absolute log10 error, over and under shares."""
    table = Table(title=title)
    heads = (first, "lang", "n", "in 2x", "med signed", "med |err|", ">2x over", ">2x under")
    for head in heads:
        table.add_column(
            head, justify="left" if head in (first, "lang") else "right", no_wrap=head == first
        )
    for part, by_language in parts.items():
        for language, s in by_language.items():
            table.add_row(
                part if language == LANGUAGES[0] else "",
                language,
                str(s["n"]),
                *(
                    fmt(s[key], 2)
                    for key in ("within_2x", "median_signed", "median_abs", "over_2x", "under_2x")
                ),
            )
        table.add_section()
    return table


def _print(budget_: dict, oracle_: dict, rows: int, matched: int) -> None:
    console = Console(emoji=False, highlight=False)
    title = (
        f"launch totals vs Nsight Compute ({matched}/{rows} rows matched; "
        "log10 errors, + = over-count)"
    )
    console.print(_error_table(title, "quantity", budget_))
    table = Table(
        title="ORACLE: roofline rule's balanced accuracy with measured totals substituted for ours"
    )
    table.add_column("measured", justify="left")
    for language in LANGUAGES:
        table.add_column(language, justify="right")
    for name, by_language in oracle_.items():
        table.add_row(name, *(fmt(by_language[lang], 3) for lang in LANGUAGES))
    console.print(table)


def _print_floor(floor: dict[str, float], split: dict[str, dict]) -> None:
    title = (
        f"DRAM bytes above and at the machine's floor ({floor['bytes_per_s'] / 1e9:.2f} "
        f"GB/s, the lowest rate of {floor['kernels']:.0f} kernels of 50 ms or more)"
    )
    Console(emoji=False, highlight=False).print(_error_table(title, "rows", split))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifest", type=Path, help="CSV with the columns of gpuFLOPBench dev.csv")
    parser.add_argument("sources", type=Path, help="folder with one sub-folder per target")
    parser.add_argument("--gpu", default="rtx3080", help="GPU the manifest was measured on")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--compile-commands",
        type=Path,
        help="compile_commands.json (or its folder): each file with its build's flags",
    )
    parser.add_argument("--compile", action="store_true", help="count CUDA kernels from SASS")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="processes for the targets (the tables are the same for any); with --compile, "
        "files compiled at once",
    )
    parser.add_argument(
        "--compiled-only", action="store_true", help="only rows counted from SASS (--compile)"
    )
    args = parser.parse_args(argv)
    from roofcast.gpu_specs import load_gpu

    try:
        rows = load_manifest(args.manifest)
        gpu = load_gpu(args.gpu)
    except (ManifestError, KeyError, ValueError, OSError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        print(f"error_budget: {message}", file=sys.stderr)
        return 2
    if not args.sources.is_dir():
        print(f"error_budget: sources {args.sources}: not a folder", file=sys.stderr)
        return 2
    build = None
    if args.compile_commands is not None:
        try:
            build = BuildFlags(database=load_database(args.compile_commands))
        except CompileDatabaseError as exc:
            print(f"error_budget: {exc}", file=sys.stderr)
            return 2
    compiler = None
    if args.compile:
        from roofcast.analyzer.compile import Compiler, sm_arch

        database = build.database if build is not None else None
        compiler = Compiler(sm_arch(gpu.compute_capability), database, jobs=max(1, args.jobs))
    outcomes = analyze_rows(
        rows, args.sources, gpu, RooflinePredictor(), build=build, compiler=compiler, jobs=args.jobs
    )
    share = compiled_share(outcomes) if compiler is not None else None
    if args.compiled_only:
        outcomes = [o for o in outcomes if _from_sass(o)]
    budget_, oracle_ = budget(outcomes), oracle(outcomes, gpu)
    matched = sum(o.matched for o in outcomes)
    floor = background_floor(outcomes)
    split = floor_split(outcomes, floor["bytes_per_s"])
    if args.json:
        out = {"rows": len(rows), "matched": matched, "budget": budget_, "oracle": oracle_}
        out["dram_floor"] = {**floor, "split": split}
        out["targets"] = targets(outcomes)
        if share is not None:
            out["compiled_share"] = share
            out["targets_compiled_rows"] = targets([o for o in outcomes if _from_sass(o)])
        print(json.dumps(out, indent=1))
    else:
        _print(budget_, oracle_, len(rows), matched)
        _print_floor(floor, split)
    return 0


if __name__ == "__main__":
    sys.exit(main())
