"""`roofcast evaluate`: score a predictor against profiled ground truth (a manifest CSV)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.console import Console

from roofcast.cli.errors import EXIT_RUNTIME, fail
from roofcast.cli.options import (
    CompileCommandsOpt,
    CompileOpt,
    IncludeOpt,
    LimitOpt,
    ManifestOpt,
    QuietOpt,
    ReplayOpt,
    SourcesOpt,
    StoreOpt,
    TargetJobsOpt,
    Traffic,
    TrafficOpt,
    UndefineOpt,
)
from roofcast.cli.outputs import output_file, output_folder, write_text, writing

if TYPE_CHECKING:
    from roofcast.llm.predictor import LLMPredictor
    from roofcast.predictors.base import Predictor


class EvalFormat(str, Enum):
    table = "table"
    json = "json"


def _pairs(items: Sequence[str] | None, what: str) -> dict[str, str]:
    """['N=4096'] -> {'N': '4096'}; a malformed item is a one-line usage error."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            fail(f"malformed {what} '{item}': expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def load_predictor(name: str | None, options: dict[str, str]) -> Predictor:
    """The named predictor (or the default: the best offline one); unknown -> one line."""
    from roofcast.registry import default_predictor, get_predictor

    try:
        if name is None and not options:
            return default_predictor()
        return get_predictor(name, **options)  # type: ignore[arg-type]
    except ImportError as exc:
        fail(f"predictor {name or 'default'!r} is not available here ({exc})")
    except (KeyError, ValueError, TypeError, LookupError, OSError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        fail(f"predictor {name or 'default'!r}: {message}")


def _print_table(summary: dict, console: Console) -> None:
    from rich.table import Table

    from roofcast.evaluation.tables import COUNT_HEAD, METRIC_HEAD, count_rows, metric_rows

    table = Table(
        title=f"{summary['predictor']} on {summary['gpu']}: labels "
        f"({summary['n']}/{summary['rows']} rows matched)"
    )
    for head in METRIC_HEAD:
        table.add_column(head, justify="left" if head == "set" else "right")
    for row in metric_rows(summary):
        table.add_row(*row)
    console.print(table)
    c = summary["confusion"]
    console.print(
        f"confusion (measured -> predicted): compute -> compute {c['compute']['compute']}, "
        f"-> bandwidth {c['compute']['bandwidth']}; bandwidth -> compute "
        f"{c['bandwidth']['compute']}, -> bandwidth {c['bandwidth']['bandwidth']}"
    )
    counts = Table(
        title="count accuracy of launch totals (MALE = mean |log10 error|, fr = fully resolved)"
    )
    for head in COUNT_HEAD:
        counts.add_column(
            head, justify="left" if head == "quantity" else "right", no_wrap=head == "quantity"
        )
    for row in count_rows(summary):
        counts.add_row(*row)
    console.print(counts)
    unmatched = summary["unmatched"]
    if unmatched:
        console.print(f"[bold]{len(unmatched)} unmatched row(s)[/] (count against coverage):")
        for item in unmatched[:15]:
            console.print(f"  {item['kernel']}: {item['reason']}", markup=False)
        if len(unmatched) > 15:
            console.print(f"  ... {len(unmatched) - 15} more (see --format json)")
    if summary["failures"]:
        console.print(
            f"[bold]{len(summary['failures'])} kernel(s) failed to analyze[/] (scored as misses)"
        )
    console.print(f"{summary['seconds']} s; --format json lists everything")


def evaluate(
    manifest: ManifestOpt,
    sources: SourcesOpt,
    gpu: Annotated[str, typer.Option("--gpu", "-g", help="GPU the labels were measured on.")],
    predictor: Annotated[
        str | None,
        typer.Option(
            "--predictor", "-p", help="roofline, baseline or llm (default: best offline)."
        ),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Predictor option KEY=VALUE (repeatable)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="LLM model id (--predictor llm; 'local' = roofcast llm serve)."
        ),
    ] = None,
    scenario: Annotated[
        str | None,
        typer.Option(
            "--scenario", help="LLM scenario: profile, zero-shot, few-shot, fine-tuned, hybrid."
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (--predictor llm).")
    ] = None,
    store: StoreOpt = None,
    replay: ReplayOpt = False,
    define: Annotated[
        list[str] | None,
        typer.Option("--define", "-D", help="Bind a symbol for every kernel, NAME=VALUE."),
    ] = None,
    undefine: UndefineOpt = None,
    include_dir: IncludeOpt = None,
    compile_commands: CompileCommandsOpt = None,
    traffic: TrafficOpt = Traffic.launch,
    compile_sass: CompileOpt = False,
    jobs: TargetJobsOpt = None,
    limit: LimitOpt = None,
    balanced: Annotated[
        bool,
        typer.Option(
            "--balanced", help="Equal compute/bandwidth rows per language (paper: 85 each)."
        ),
    ] = False,
    per_class: Annotated[
        int, typer.Option("--per-class", help="Rows per class per language with --balanced.")
    ] = 85,
    seed: Annotated[int, typer.Option("--seed", help="Seed of --balanced sampling.")] = 0,
    fmt: Annotated[
        EvalFormat, typer.Option("--format", "-f", help="table or json.")
    ] = EvalFormat.table,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the table or JSON to this file instead of stdout."
        ),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report", help="Write report.md/.html with PNG plots into this folder (created)."
        ),
    ] = None,
    kernel_timeout: Annotated[
        float,
        typer.Option("--kernel-timeout", help="Seconds per kernel before it is scored as a miss."),
    ] = 20.0,
    quiet: QuietOpt = False,
) -> None:
    """Score a predictor against profiled labels and counts (e.g. gpuFLOPBench dev.csv)."""
    from roofcast.evaluation.manifest import ManifestError, load_manifest
    from roofcast.evaluation.runner import evaluate as run_evaluation
    from roofcast.evaluation.sampling import balanced_sample
    from roofcast.gpu_specs import UnknownGPUError, load_gpu

    _no_option_as_output(output)
    output_file(output)
    output_folder(report, "--report")
    output_file(store, "--store")
    if limit is not None and limit < 1:
        fail("--limit must be at least 1")
    if per_class < 1:
        fail("--per-class must be at least 1")
    if not sources.is_dir():
        fail(f"--sources {sources}: no such folder")
    try:
        target_gpu = load_gpu(gpu)
    except UnknownGPUError as exc:
        fail(str(exc))
    try:
        rows = load_manifest(manifest)
    except ManifestError as exc:
        fail(str(exc))
    from roofcast.cli.options import (
        compiler_or_none,
        database_or_fail,
        database_warnings,
        defines_or_fail,
        include_dirs_or_fail,
        undefines_or_fail,
    )
    from roofcast.evaluation.matching import SourceIndex

    defines = defines_or_fail(define)
    undefines = undefines_or_fail(undefine)
    include_dirs = include_dirs_or_fail(include_dir)
    database = database_or_fail(compile_commands)
    options: dict[str, Any] = _pairs(option, "--option")
    for key, value in (
        ("model", model),
        ("scenario", scenario),
        ("base_url", base_url),
        ("store", None if store is None else str(store)),
    ):
        if value is not None:
            options[key] = value
    if replay:
        options["replay"] = True
    if (store is not None or replay) and predictor not in (None, "llm"):
        fail("--store and --replay apply to --predictor llm")
    if options and predictor is None:
        predictor = "llm"
    chosen = load_predictor(predictor, options)
    if predictor == "llm":
        from roofcast.llm.client import EndpointError

        try:
            cast("LLMPredictor", chosen).check()  # a dead endpoint fails once, here, in one line
        except EndpointError as exc:
            fail(str(exc), EXIT_RUNTIME)
        kernel_timeout = max(kernel_timeout, 600.0)  # the limit is for counting, not the model
    if balanced:
        rows = balanced_sample(rows, per_class=per_class, seed=seed)
    if limit is not None:
        rows = rows[:limit]
    index = SourceIndex(
        sources, defines, undefines=undefines, include_dirs=include_dirs, database=database
    )
    database_warnings(index.database, len(database.warnings) if database else 0)
    from roofcast.evaluation.runner import BuildFlags
    from roofcast.scheduler import available_cpus

    compiler = compiler_or_none(
        compile_sass,
        target_gpu,
        index.database,
        defines,
        undefines,
        include_dirs,
        jobs or available_cpus(),
    )
    result = run_evaluation(
        rows,
        index,
        target_gpu,
        chosen,
        progress=not quiet,
        kernel_timeout=kernel_timeout,
        build=BuildFlags(traffic=traffic.value, compiler=compiler),
        jobs=jobs,
    )
    summary_traffic = traffic.value
    summary = result.to_json()
    summary["traffic"] = summary_traffic
    if compiler is not None:
        summary.update(compile_summary(result.outcomes))
    if index.database is not None:
        summary["compile_commands"] = index.database.to_json()
    if balanced:
        summary["sampling"] = {"balanced": True, "per_class": per_class, "seed": seed}
    if report is not None:
        from roofcast.evaluation.report import write_report

        with writing(report, "--report"):
            write_report(result, report, summary)
    if output is None:
        if fmt is EvalFormat.json:
            typer.echo(json.dumps(summary, indent=2))
        else:
            _print_table(summary, Console(emoji=False, highlight=False))
    elif fmt is EvalFormat.json:
        write_text(output, json.dumps(summary, indent=2) + "\n")
    else:
        with writing(output), output.open("w", encoding="utf-8") as handle:
            _print_table(summary, Console(file=handle, width=160, emoji=False, highlight=False))


def compile_summary(outcomes: Sequence) -> dict:
    """--compile: `compiled_share` (matched rows counted from SASS / matched rows with
    counts) and why the others were counted from source, tallied."""
    from collections import Counter

    counted = [o.result.features for o in outcomes if o.matched and o.result is not None]
    sass = sum(1 for f in counted if f.counted_from == "sass")
    reasons = Counter(_reason_kind(f.counted_why) for f in counted if f.counted_from != "sass")
    return {
        "compiled_share": round(sass / len(counted), 4) if counted else 0.0,
        "compile_fallbacks": dict(reasons.most_common()),
    }


def _reason_kind(why: str) -> str:
    """A fallback reason without its file-specific tail, for tallying."""
    return re.sub(r"\S+\.(cu|cuh|h|hpp)\b", "FILE", why)[:120]


def _no_option_as_output(output: Path | None) -> None:
    """`-o KEY=VALUE` was --option before -o meant --output in every verb: say so rather
    than write a file named `model=gpt-4.1`."""
    if output is not None and re.fullmatch(r"[A-Za-z_][\w-]*=[^/]*", str(output)):
        fail(f"-o/--output {output}: looks like a predictor option; use -O/--option KEY=VALUE")


def register(app: typer.Typer) -> None:
    """Add `evaluate` to the main app."""
    app.command("evaluate")(evaluate)
