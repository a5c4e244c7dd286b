"""Options shared by verbs (one definition, so a flag means the same everywhere) and their
parsing: GPUs, --define, --undefine, --include-dir, --compile-commands, launch dimensions,
--version."""

from __future__ import annotations

import sys
from enum import Enum
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from roofcast.cli.errors import fail
from roofcast.gpu_specs import GPU, UnknownGPUError, load_gpu

if TYPE_CHECKING:
    from roofcast.analyzer.compdb import CompileDatabase


def gpu_or_fail(name: str) -> GPU:
    try:
        return load_gpu(name)
    except UnknownGPUError as exc:
        fail(str(exc))


def defines_or_fail(items: list[str] | None) -> dict[str, str]:
    """NAME=VALUE pairs; a value that cannot mean anything is a one-line error (exit 2), one
    that binds no size as the user may think a one-line warning (see `check_define`)."""
    from roofcast.analyzer.defines import check_define, parse_define

    out: dict[str, str] = {}
    for item in items or []:
        try:
            name, value = parse_define(item)
            warning = check_define(name, value)
        except ValueError as exc:
            fail(str(exc))
        if warning:
            print(f"roofcast: warning: {warning}", file=sys.stderr)
        out[name] = value
    return out


def undefines_or_fail(items: list[str] | None) -> frozenset[str]:
    """-U NAME: macro names, undefined as with a compiler's -U (a -D of the name is dropped)."""
    for name in items or []:
        if not name.isidentifier():
            fail(f"malformed --undefine '{name}': expected a macro name")
    return frozenset(items or [])


def include_dirs_or_fail(items: list[Path] | None) -> list[Path]:
    """-I DIR: folders searched for quoted includes, after those given as paths."""
    for folder in items or []:
        if not folder.is_dir():
            fail(f"--include-dir {folder}: no such folder")
    return list(items or [])


def dims_or_fail(text: str | None, option: str) -> tuple[int, int, int] | None:
    """`256`, `256,1,1`, `(256, 1, 1)` or `16x16` -> (x, y, z)."""
    if not text:
        return None
    cleaned = text.strip().strip("()").replace("x", ",").replace(" ", "")
    try:
        parts = [int(p) for p in cleaned.split(",") if p]
    except ValueError:
        fail(f"malformed {option} '{text}': expected e.g. 256 or 16,16,1")
    if not 1 <= len(parts) <= 3 or any(p <= 0 for p in parts):
        fail(f"malformed {option} '{text}': expected 1 to 3 positive integers")
    while len(parts) < 3:
        parts.append(1)
    return parts[0], parts[1], parts[2]


def package_version() -> str:
    """The installed distribution's version (one source of truth: pyproject.toml)."""
    try:
        return version("roofcast")
    except PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return "unknown (not installed)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"roofcast {package_version()}")
        raise typer.Exit()


VersionOpt = Annotated[
    bool,
    typer.Option(
        "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
]

# Shared by `evaluate`, `train` and `roofcast llm ...`: same flag, same meaning.
ManifestOpt = Annotated[
    Path, typer.Option("--manifest", "-m", help="CSV with the columns of gpuFLOPBench dev.csv.")
]
SourcesOpt = Annotated[
    Path,
    typer.Option("--sources", "-s", help="Folder with one sub-folder per target (HeCBench src/)."),
]
StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store", help="LLM response store (SQLite); default ~/.cache/roofcast/llm.sqlite."
    ),
]
ReplayOpt = Annotated[
    bool,
    typer.Option(
        "--replay", help="LLM answers from the store only; send nothing (no endpoint needed)."
    ),
]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", "-n", help="Only the first N rows (after sampling).")
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]

# -U / -I beside -D, as compilers have them, in every verb that analyses sources.
GpuOpt = Annotated[
    str, typer.Option("--gpu", "-g", help="Target GPU (`roofcast gpus` lists them).")
]
DefineOpt = Annotated[
    list[str] | None,
    typer.Option("--define", "-D", help="Bind a symbol: NAME=VALUE (repeatable)."),
]
UndefineOpt = Annotated[
    list[str] | None,
    typer.Option("--undefine", "-U", help="Undefine a macro, as cc -U NAME (repeatable)."),
]
IncludeOpt = Annotated[
    list[Path] | None,
    typer.Option("--include-dir", "-I", help="Search DIR for quoted includes (repeatable)."),
]


# Shared by every verb that analyses sources. No short flag: clang-tidy's `-p` is
# `--predictor` here.
class Traffic(str, Enum):
    """Which DRAM bytes the intensities divide by (docs/counting.md, rules T1-T7)."""

    launch = "launch"
    per_thread = "per-thread"


TrafficOpt = Annotated[
    Traffic,
    typer.Option(
        "--traffic",
        help="DRAM bytes the intensities use: launch (sectors, footprints over the grid, L2) "
        "or per-thread (every thread's first touches, no reuse between threads).",
    ),
]

CompileCommandsOpt = Annotated[
    Path | None,
    typer.Option(
        "--compile-commands",
        metavar="PATH",
        help="compile_commands.json, or a folder holding one (clang-tidy's -p): each file "
        "gets its compile command's -D/-U/-I; -D/-U given here win.",
    ),
]


def database_or_fail(path: Path | None) -> CompileDatabase | None:
    """The compile database at `path` (a folder: its compile_commands.json); one that cannot
    be read is a one-line error (exit 2), an entry or flag that fails its checks a one-line
    warning each."""
    if path is None:
        return None
    from roofcast.analyzer.compdb import CompileDatabaseError, load_database

    try:
        database = load_database(path)
    except CompileDatabaseError as exc:
        fail(str(exc))
    database_warnings(database)
    return database


def database_warnings(database: CompileDatabase | None, already: int = 0) -> None:
    """The database's warnings from the `already`-th on, one stderr line each."""
    if database is None:
        return
    for warning in database.warnings[already:]:
        print(f"roofcast: warning: {database.source}: {warning}", file=sys.stderr)


def database_notes(kernels: list, database: CompileDatabase | None) -> None:
    """--verbose: which compile command each analysed file was read with (stderr)."""
    if database is None:
        return
    if database.swap is not None:
        old, new = database.swap
        print(f"roofcast: note: {database.source}: files relocated {old} -> {new}", file=sys.stderr)
    by_entry = {unit.entry: unit for unit in database.units.values()}
    seen: set[str] = set()
    for kernel in kernels:
        ir = kernel.ir
        if ir.file in seen:
            continue
        seen.add(ir.file)
        if ir.compile_unit is None:
            said = "no compile command: the command line's flags only"
        else:
            unit = by_entry.get(ir.compile_unit["entry"])
            said = unit.describe() if unit is not None else f"entry {ir.compile_unit['entry']}"
        print(f"roofcast: note: {ir.file}: {said}", file=sys.stderr)


# --compile: one definition for analyze, evaluate and train.
CompileOpt = Annotated[
    bool,
    typer.Option(
        "--compile",
        help="CUDA: count FLOPs and int ops from the SASS nvcc emits for the GPU's "
        "architecture (nvcc from CUDA_HOME or PATH, nvdisasm from the toolkit or the "
        "`compile` extra); OpenMP target regions from clang's offload code, its device "
        "runtime included (clang++ -fopenmp); a kernel whose file does not compile is "
        "counted from source.",
    ),
]
TargetJobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Processes for the manifest's targets (default: one per CPU; the results are "
        "the same for any number); with --compile, files compiled at once (targets then "
        "run in one process).",
    ),
]


def compiler_or_none(
    enabled: bool,
    gpu: GPU,
    database: CompileDatabase | None,
    defines: dict[str, str] | None = None,
    undefines: frozenset[str] = frozenset(),
    include_dirs: list[Path] | None = None,
    jobs: int = 1,
    verbose: bool = False,
):
    """--compile: the Compiler (analyzer.compile) for the GPU; if nothing can be compiled
    (no nvcc or nvdisasm, an AMD GPU), one warning line and every kernel counted from source."""
    if not enabled:
        return None
    from roofcast.analyzer.compile import Compiler, sm_arch

    compiler = Compiler(
        sm_arch(gpu.compute_capability),
        database,
        defines,
        undefines,
        include_dirs or [],
        jobs=jobs,
    )
    why = compiler.unavailable()
    if why:
        print(f"roofcast: warning: --compile: {why}; counting from source", file=sys.stderr)
    elif verbose:
        print(f"roofcast: note: --compile: {compiler.summary()}", file=sys.stderr)
    return compiler


def compile_files(compiler, files: list[Path], jobs: int, quiet: bool = False) -> None:
    """Compile the CUDA files and those with OpenMP target regions up front, `jobs` at a
    time, with a progress bar on a terminal."""
    if compiler is None:
        return
    from rich.console import Console
    from rich.progress import Progress

    from roofcast.analyzer.ompcompile import offload_for

    console = Console(stderr=True)
    with Progress(console=console, transient=True, disable=quiet or not console.is_terminal) as bar:
        task = bar.add_task("compiling", total=None)
        compiler.prepare(
            files, jobs, lambda done, total: bar.update(task, completed=done, total=total)
        )
        offload_for(compiler).prepare(  # the files with OpenMP target regions (S11)
            files, jobs, lambda done, total: bar.update(task, completed=done, total=total)
        )
