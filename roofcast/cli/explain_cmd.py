"""`roofcast explain FILE[:KERNEL]`: why a kernel gets its verdict, line by line."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from roofcast.cli.errors import fail
from roofcast.cli.options import (
    CompileCommandsOpt,
    CompileOpt,
    DefineOpt,
    GpuOpt,
    IncludeOpt,
    Traffic,
    TrafficOpt,
    UndefineOpt,
    database_or_fail,
    defines_or_fail,
    dims_or_fail,
    gpu_or_fail,
    include_dirs_or_fail,
    undefines_or_fail,
)
from roofcast.cli.outputs import output_file, write_text


class ExplainFormat(str, Enum):
    table = "table"
    json = "json"


def split_target(target: str) -> tuple[Path, str | None]:
    """`file.cu:kernel` -> (file.cu, kernel); a path that exists as given has no kernel."""
    path = Path(target)
    if path.exists() or ":" not in target:
        return path, None
    file, kernel = target.rsplit(":", 1)
    return Path(file), kernel or None


def explain(
    target: Annotated[str, typer.Argument(metavar="FILE[:KERNEL]", help="A kernel's file.")],
    gpu: GpuOpt = "a100",
    define: DefineOpt = None,
    undefine: UndefineOpt = None,
    include_dir: IncludeOpt = None,
    compile_commands: CompileCommandsOpt = None,
    compile_sass: CompileOpt = False,
    traffic: TrafficOpt = Traffic.launch,
    block: Annotated[str | None, typer.Option(help="Launch block size, e.g. 256 or 16,16.")] = None,
    grid: Annotated[str | None, typer.Option(help="Launch grid size, e.g. 4096 or 64,64.")] = None,
    predictor: Annotated[
        str | None,
        typer.Option("--predictor", help="roofline | baseline (default: best offline)."),
    ] = None,
    fmt: Annotated[
        ExplainFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ExplainFormat.table,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (its folder must exist)."),
    ] = None,
) -> None:
    """Explain a verdict: each line's operations and bytes, the rules that counted them, the
    loop trips (with --compile, each line's FLOPs and int ops from its SASS too); each
    array's footprint and DRAM bytes; the L2 decision; the deciding class."""
    from roofcast.analyzer import SourceError
    from roofcast.cli.options import compiler_or_none
    from roofcast.pipeline import analyze_paths
    from roofcast.registry import get_predictor
    from roofcast.results import LaunchContext
    from roofcast.workflow.explain import explain as explain_kernel
    from roofcast.workflow.explain import render

    output_file(output)
    path, name = split_target(target)
    if not path.is_file():
        fail(f"{path}: no such file")
    chosen_gpu = gpu_or_fail(gpu)
    context = LaunchContext(block=dims_or_fail(block, "--block"), grid=dims_or_fail(grid, "--grid"))
    try:
        chosen = get_predictor(predictor) if predictor else None
    except (ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    database = database_or_fail(compile_commands)
    defines = defines_or_fail(define)
    undefines = undefines_or_fail(undefine)
    include_dirs = include_dirs_or_fail(include_dir)
    compiler = compiler_or_none(
        compile_sass, chosen_gpu, database, defines, undefines, include_dirs
    )
    if compiler is not None and database is not None:
        compiler.database = database.relocate([path])  # the file as listed here
    try:
        report = analyze_paths(
            [path],
            chosen_gpu,
            defines,
            chosen,
            context,
            jobs=1,
            undefines=undefines,
            include_dirs=include_dirs,
            database=database,
            traffic=traffic.value,
            by_line=True,
            compiler=compiler,
        )
    except SourceError as exc:
        fail(str(exc))
    fatal = [p for p in report.problems if p.fatal]
    if fatal and not report.kernels:
        fail(f"{fatal[0].file}: {fatal[0].message}")
    kernels = [k for k in report.kernels if name is None or k.ir.name == name]
    if not kernels:
        found = ", ".join(sorted({k.ir.name for k in report.kernels})) or "none"
        fail(f"{path}: no kernel named {name!r} (kernels: {found})")
    data = [explain_kernel(k, chosen_gpu) for k in kernels]
    if fmt is ExplainFormat.json:
        text = json.dumps(data if name is None else data[0], indent=2) + "\n"
    else:
        text = "\n\n".join(render(d) for d in data) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        write_text(output, text)


def register(app: typer.Typer) -> None:
    """Add `explain` to the main app."""
    app.command("explain")(explain)
