"""`roofcast train`: fit the learned baseline from a profiled manifest, reproducibly."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from roofcast.cli.errors import fail
from roofcast.cli.options import (
    CompileCommandsOpt,
    CompileOpt,
    ManifestOpt,
    SourcesOpt,
    TargetJobsOpt,
    database_or_fail,
    gpu_or_fail,
)
from roofcast.cli.outputs import output_file, writing


def train(
    manifest: ManifestOpt,
    sources: SourcesOpt,
    gpu: Annotated[
        str, typer.Option("--gpu", "-g", help="The GPU the manifest was profiled on.")
    ] = "rtx3080",
    seed: Annotated[int, typer.Option(help="Random seed (bagging and subsampling).")] = 0,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Model file (.json.gz); default: the packaged model."),
    ] = None,
    compile_commands: CompileCommandsOpt = None,
    compile_sass: CompileOpt = False,
    jobs: TargetJobsOpt = None,
    cv: Annotated[
        bool, typer.Option("--cv/--no-cv", help="Report family-grouped 5-fold CV first.")
    ] = True,
) -> None:
    """Train the learned baseline: static features -> true intensity per class."""
    from roofcast.evaluation import ManifestError, load_manifest
    from roofcast.evaluation.runner import BuildFlags
    from roofcast.predictors.learned import packaged_model_path
    from roofcast.training.fit import COMPILED_SETTINGS, SETTINGS, build_dataset, save
    from roofcast.training.fit import train as fit

    output_file(output)
    target_gpu = gpu_or_fail(gpu)
    if not sources.is_dir():
        fail(f"{sources}: no such folder")
    try:
        rows = load_manifest(manifest)
    except ManifestError as exc:
        fail(str(exc))
    destination = output or packaged_model_path(compiled=compile_sass)
    if output is None and not os.access(destination.parent, os.W_OK):
        fail(f"{destination.parent} is not writable; pass --output")
    console = Console(stderr=True)
    database = database_or_fail(compile_commands)
    from roofcast.cli.options import compiler_or_none
    from roofcast.scheduler import available_cpus

    compiler = compiler_or_none(compile_sass, target_gpu, database, jobs=jobs or available_cpus())
    build = (
        BuildFlags(database=database, compiler=compiler)
        if database is not None or compiler is not None
        else None
    )
    data = build_dataset(rows, sources, target_gpu, progress=True, build=build, jobs=jobs)
    if len(data.labels) < 20 or len(set(data.groups)) < 5:
        fail(
            f"too little data to train: {len(data.labels)} rows in {len(set(data.groups))} families"
        )
    with console.status("fitting (family-grouped CV first)" if cv else "fitting"):
        settings = COMPILED_SETTINGS if compile_sass else SETTINGS
        model = fit(data, target_gpu, seed, cv, manifest.name, settings)
    with writing(destination):
        save(model, destination)
    if cv:
        _print_cv(model["cross_validation"], console)
    from roofcast.training.fit import report_lines

    for line in report_lines(model):
        console.print(line, highlight=False, markup=False)
    console.print(
        f"trained on {len(data.labels)} rows ({len(data.skipped)} skipped); wrote {destination}"
    )


def _print_cv(cv: dict, console: Console) -> None:
    table = Table(title=f"family-grouped {cv['folds']}-fold CV", title_justify="left")
    for col in ("predictor", "set", "n", "balanced acc.", "accuracy", "MCC"):
        table.add_column(col, justify="right" if col not in ("predictor", "set") else "left")
    for predictor in ("roofline", "learned"):
        for subset in ("all", "CUDA", "OMP", "balanced_340"):
            if subset not in cv[predictor]:
                continue
            m = cv[predictor][subset]
            table.add_row(
                predictor,
                subset,
                str(m["n"]),
                f"{m['balanced_accuracy']:.3f}",
                f"{m['accuracy']:.3f}",
                f"{m['mcc']:.3f}",
            )
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("train")(train)
