"""`analyze PATHS --gpu GPU`: every kernel's counts, intensity and bound, with the reason."""

from __future__ import annotations

import re
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

from roofcast.cli.errors import EXIT_RUNTIME, EXIT_USAGE, fail
from roofcast.cli.options import (
    CompileCommandsOpt,
    CompileOpt,
    DefineOpt,
    GpuOpt,
    IncludeOpt,
    Traffic,
    TrafficOpt,
    UndefineOpt,
    VersionOpt,
    database_notes,
    database_or_fail,
    database_warnings,
    defines_or_fail,
    dims_or_fail,
    gpu_or_fail,
    include_dirs_or_fail,
    undefines_or_fail,
)
from roofcast.cli.outputs import output_file, write_text, writing


class Format(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    sarif = "sarif"


def analyze(
    paths: Annotated[
        list[Path],
        typer.Argument(metavar="PATHS", help="Kernel files or folders (.cu .cuh .cpp .c .h ...)."),
    ],
    gpu: GpuOpt = "a100",
    define: DefineOpt = None,
    undefine: UndefineOpt = None,
    include_dir: IncludeOpt = None,
    compile_commands: CompileCommandsOpt = None,
    traffic: TrafficOpt = Traffic.launch,
    compile_sass: CompileOpt = False,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    predictor: Annotated[
        str | None,
        typer.Option(
            "--predictor", "-p", help="roofline | baseline | llm (default: best offline)."
        ),
    ] = None,
    block: Annotated[str | None, typer.Option(help="Launch block size, e.g. 256 or 16,16.")] = None,
    grid: Annotated[str | None, typer.Option(help="Launch grid size, e.g. 4096 or 64,64.")] = None,
    kernel: Annotated[
        str | None,
        typer.Option("--kernel", "-k", help="Only kernels whose name matches this regex."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (its folder must exist)."),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Table: whole reasons, symbols, defaults, other verdicts; stderr: the "
            "compile command each file was read with.",
        ),
    ] = False,
    llm: Annotated[
        str | None, typer.Option(help="Also ask this LLM (model name, or 'local').")
    ] = None,
    scenario: Annotated[str, typer.Option(help="LLM scenario when --llm is given.")] = "hybrid",
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Processes for independent groups of files (default: one per CPU).",
        ),
    ] = None,
    version: VersionOpt = False,
) -> None:
    """Analyze kernels statically and say whether each is compute- or bandwidth-bound."""
    from roofcast.analyzer import SourceError
    from roofcast.pipeline import analyze_paths
    from roofcast.registry import get_predictor
    from roofcast.results import LaunchContext

    output_file(output)
    target = gpu_or_fail(gpu)
    defines = defines_or_fail(define)
    undefines = undefines_or_fail(undefine)
    include_dirs = include_dirs_or_fail(include_dir)
    database = database_or_fail(compile_commands)
    context = LaunchContext(block=dims_or_fail(block, "--block"), grid=dims_or_fail(grid, "--grid"))
    try:
        pattern = re.compile(kernel) if kernel else None
    except re.error as exc:
        fail(f"bad --kernel regex '{kernel}': {exc}")
    try:
        chosen = get_predictor(predictor) if predictor else None
    except (ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    compiler = _compiler(
        compile_sass, target, database, defines, undefines, include_dirs, jobs, verbose, paths
    )
    try:
        with _GroupProgress() as progress:
            report = analyze_paths(
                paths,
                target,
                defines,
                chosen,
                context,
                jobs,
                progress.update,
                undefines=undefines,
                include_dirs=include_dirs,
                database=database,
                traffic=traffic.value,
                compiler=compiler,
            )
    except SourceError as exc:
        fail(str(exc))
    database_warnings(report.database, len(database.warnings) if database else 0)
    for problem in report.problems:
        print(
            f"roofcast: {'error' if problem.fatal else 'warning'}: {problem.file}: "
            f"{problem.message.removeprefix(problem.file + ': ')}",
            file=sys.stderr,
        )
    if pattern is not None:
        report.kernels = [k for k in report.kernels if pattern.search(k.ir.name)]
    _warn_kernels(report)
    if verbose:
        database_notes(report.kernels, report.database)
    if not report.kernels:
        if any(p.fatal for p in report.problems):
            raise typer.Exit(EXIT_USAGE)
        fail(f"no kernels found in {', '.join(str(p) for p in paths)}", EXIT_USAGE)
    if llm:
        _add_llm(report, llm, scenario, target, context)
    text = _render(report, fmt, output, verbose)
    if text is not None:
        if output:
            write_text(output, text)
        else:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if any(p.fatal for p in report.problems):
        raise typer.Exit(EXIT_USAGE)  # results were printed; the run still reports bad input


def _compiler(enabled, target, database, defines, undefines, include_dirs, jobs, verbose, paths):
    """--compile: the compiler, with the listed CUDA files compiled up front (in parallel)."""
    from roofcast.analyzer import SourceError
    from roofcast.analyzer.sources import expand_paths
    from roofcast.cli.options import compile_files, compiler_or_none
    from roofcast.scheduler import available_cpus

    workers = jobs or available_cpus()
    compiler = compiler_or_none(
        enabled, target, database, defines, undefines, include_dirs, workers, verbose
    )
    if compiler is not None and not compiler.unavailable():
        try:
            files = expand_paths(paths)
        except SourceError:
            return compiler  # said by analyze_paths, with the usual exit
        if database is not None:
            compiler.database = database.relocate(files)
        compile_files(compiler, files, workers)
    return compiler


def _warn_kernels(report) -> None:
    """One stderr line per clamped count, and per file whose undefined macros chose an arm."""
    files_noted: set[str] = set()
    for k in report.kernels:
        for warning in k.resolved.warnings():
            print(
                f"roofcast: warning: {k.ir.file}:{k.ir.line} {k.ir.name}: {warning}",
                file=sys.stderr,
            )
        if k.ir.undefined_macros and k.ir.file not in files_noted:
            files_noted.add(k.ir.file)
            print(
                f"roofcast: note: {k.ir.file}: undefined, so chose an #if arm: "
                f"{', '.join(k.ir.undefined_macros)} (-D to define)",
                file=sys.stderr,
            )


class _GroupProgress:
    """A transient bar on a terminal's stderr while groups of files are analysed (none when
    stderr is a pipe, or for a single group). Refreshed by hand: no thread runs while the
    process pool forks its workers."""

    def __init__(self) -> None:
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> _GroupProgress:
        return self

    def update(self, done: int, total: int) -> None:
        if total < 2 or not sys.stderr.isatty():
            return
        if self.bar is None:
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), auto_refresh=False, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("analysing file groups", total=total)
        self.bar.update(cast("TaskID", self.task), completed=done)  # set with the bar
        self.bar.refresh()

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _render(report, fmt: Format, output: Path | None, verbose: bool) -> str | None:
    from roofcast.cli import render

    if fmt is Format.json:
        return render.render_json(report)
    if fmt is Format.csv:
        return render.render_csv(report)
    if fmt is Format.sarif:
        import json

        from roofcast.workflow.sarif import report_to_sarif

        return json.dumps(report_to_sarif(report.to_json(), Path.cwd()), indent=2)
    if output:
        with writing(output), output.open("w", encoding="utf-8") as handle:
            render.render_table(report, Console(file=handle, width=160), verbose)
        return None
    render.render_table(report, Console(), verbose)
    return None


def _add_llm(report, model: str, scenario: str, gpu, context) -> None:
    """The LLM's verdict beside the static one, a few requests in flight."""
    try:
        from roofcast.llm.client import EndpointError
        from roofcast.llm.predictor import LLMPredictor
        from roofcast.llm.store import StoreError
    except ImportError as exc:
        fail(f"the LLM predictor is not available in this installation ({exc})")
    try:
        predictor = LLMPredictor(model=model, scenario=scenario, concurrency=4)
        predictor.check()
        verdicts = predictor.predict([(k, context) for k in report.kernels], gpu)
    except ValueError as exc:  # configuration: no key, unknown scenario or option
        fail(str(exc))
    except (EndpointError, StoreError) as exc:
        fail(str(exc), EXIT_RUNTIME)
    for result, verdict in zip(report.kernels, verdicts, strict=True):
        result.extra_verdicts["llm"] = verdict


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze)
