"""`roofcast profile`: ground truth from Nsight Compute, one manifest row per kernel launch."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import asdict
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from roofcast.cli.errors import EXIT_USAGE, fail
from roofcast.cli.outputs import output_file, writing
from roofcast.gpu_specs import GPU, UnknownGPUError, load_gpu
from roofcast.profiling.figures import LaunchFigures, MissingMetricError, launch_figures
from roofcast.profiling.manifest import ManifestRow, build_rows, label_for, to_csv, write_manifest
from roofcast.profiling.ncu import (
    ProfilingError,
    find_ncu,
    import_command,
    profile_command,
    run_import,
    run_profile,
)
from roofcast.profiling.rawcsv import RawCsvError, parse_raw_csv


class ProfileFormat(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


def _ncu_or_placeholder() -> str:
    try:
        return find_ncu()
    except ProfilingError:
        return "ncu"


def _raw_text(
    program: list[str],
    import_path: Path | None,
    kernel: str | None,
    launch_count: int | None,
    strict: bool,
    timeout: float | None,
) -> str:
    if import_path is None:
        return run_profile(
            program, kernel_regex=kernel, launch_count=launch_count, timeout=timeout, strict=strict
        )
    if not import_path.is_file():
        raise ProfilingError(f"no such report: {import_path}", EXIT_USAGE)
    if import_path.suffix == ".ncu-rep":
        return run_import(import_path)
    try:
        return import_path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise ProfilingError(f"cannot read {import_path}: {err.strerror}", EXIT_USAGE) from err


def _default_target(program: list[str], import_path: Path | None) -> str:
    """The program's folder name (HeCBench style: src/<target>/main), or the report's folder."""
    anchor = import_path if import_path is not None else Path(program[0]) if program else None
    return anchor.resolve().parent.name if anchor is not None else ""


def _dims(text: str) -> str:
    """'(256, 1, 1)' -> '256x1x1' to keep the table narrow."""
    return "x".join(part.strip() for part in text.strip("() ").split(",")) if text else "-"


def _table(rows: list[ManifestRow], gpus: dict[str, GPU]) -> Table:
    targets = sorted({r.target for r in rows})
    table = Table(
        title=f"{', '.join(targets)} on {', '.join(g.name for g in gpus.values())}"
        " (AI = ops per DRAM byte)"
    )
    for header in (
        "kernel",
        "grid",
        "block",
        "time us",
        "DRAM MB",
        "sp AI",
        "dp AI",
        "int AI",
        "label",
    ):
        table.add_column(
            header, justify="left" if header in ("kernel", "grid", "block", "label") else "right"
        )
    for row in rows:
        label, why = label_for_row(row, gpus[row.gpu])
        deciding = why.split(" ", 1)[0] if label == "Compute" else ""
        name = (
            row.kernel
            if row.language == "CUDA"
            else f"{row.omp_function.split('(')[0]}:{row.omp_line} (omp)"
        )
        table.add_row(
            name,
            _dims(row.grid),
            _dims(row.block),
            f"{row.xtime_ns / 1e3:.4g}",
            f"{row.dram_bytes / 1e6:.4g}",
            f"{row.sp_ai:.3g}",
            f"{row.dp_ai:.3g}",
            f"{row.int_ai:.3g}",
            f"{row.label} ({deciding})" if deciding else row.label,
        )
    return table


def label_for_row(row: ManifestRow, gpu: GPU) -> tuple[str, str]:
    """Re-derive the label and its reason from a row's measured figures (for display)."""
    figures = LaunchFigures(
        row.xtime_ns, row.dram_bytes, row.sp_flops, row.dp_flops, row.hp_flops, row.int_ops
    )
    return label_for(figures, gpu)


def profile(
    program: Annotated[
        list[str] | None,
        typer.Argument(help="Program and its arguments, after `--` (e.g. -- ./main 1024 10)."),
    ] = None,
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu", "-g", help="GPU spec for balance points; default: the device ncu reports."
        ),
    ] = None,
    kernel: Annotated[
        str | None, typer.Option("--kernel", "-k", help="Only kernels matching this regex.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the manifest CSV here.")
    ] = None,
    import_path: Annotated[
        Path | None,
        typer.Option(
            "--import",
            help="Read an existing report (.ncu-rep, via `ncu --import`) or raw CSV "
            "instead of running a program.",
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option("--target", help="Manifest 'target' (default: the program's folder name)."),
    ] = None,
    exe_args: Annotated[
        str | None,
        typer.Option("--exe-args", help="Manifest 'exe_args' (default: the program's arguments)."),
    ] = None,
    launch_count: Annotated[
        int | None,
        typer.Option(
            "--launch-count", "-c", min=1, help="Profile at most this many launches (ncu -c)."
        ),
    ] = None,
    fmt: Annotated[
        ProfileFormat,
        typer.Option("--format", "-f", help="What to print on stdout: table, csv or json."),
    ] = ProfileFormat.table,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the ncu command and stop.")
    ] = False,
    ignore_exit_code: Annotated[
        bool,
        typer.Option(
            "--ignore-exit-code", help="Keep the launches of a program that exits non-zero."
        ),
    ] = False,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Give up after this many seconds.")
    ] = None,
) -> None:
    """Measure kernels with Nsight Compute and label them compute- or bandwidth-bound."""
    program = list(program or [])
    if import_path is None and not program:
        fail("give a program to profile after `--`, or --import a report")
    if import_path is not None and program:
        fail("give either a program or --import, not both")
    output_file(output)
    if dry_run:
        ncu = _ncu_or_placeholder()
        cmd = (
            import_command(import_path, ncu)
            if import_path is not None
            else profile_command(program, kernel_regex=kernel, launch_count=launch_count, ncu=ncu)
        )
        typer.echo(shlex.join(cmd))
        return
    try:
        override = load_gpu(gpu) if gpu else None
    except UnknownGPUError as err:
        fail(str(err))
    try:
        text = _raw_text(program, import_path, kernel, launch_count, not ignore_exit_code, timeout)
        launches = parse_raw_csv(text)
        rows = build_rows(
            launches,
            target=target if target is not None else _default_target(program, import_path),
            exe_args=exe_args if exe_args is not None else program[1:],
            gpu=override,
        )
    except ProfilingError as err:
        fail(str(err), err.exit_code)
    except (RawCsvError, MissingMetricError) as err:
        fail(f"cannot read the ncu data: {err}")
    _warn_missing(launches)
    if output is not None:
        with writing(output):
            write_manifest(rows, output)
    _print(rows, fmt, output)


def _warn_missing(launches: list) -> None:
    missing = sorted({cls for launch in launches for cls in launch_figures(launch).missing})
    if missing:
        print(
            f"roofcast: warning: no ncu counters for {', '.join(missing)} ops; they read 0 "
            "(profile with `roofcast profile` to collect them)",
            file=sys.stderr,
        )


def _print(rows: list[ManifestRow], fmt: ProfileFormat, output: Path | None) -> None:
    if fmt is ProfileFormat.csv:
        sys.stdout.write(to_csv(rows))
    elif fmt is ProfileFormat.json:
        typer.echo(json.dumps([asdict(r) for r in rows], indent=2, default=str))
    else:
        gpus = {r.gpu: load_gpu(r.gpu) for r in rows}
        console = Console()
        console.print(_table(rows, gpus))
        if output is not None:
            console.print(f"wrote {len(rows)} rows to {output}")


def register(app: typer.Typer) -> None:
    """Add `profile` to the main app."""
    app.command(
        "profile",
        context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
    )(profile)
