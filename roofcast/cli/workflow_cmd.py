"""Developer-workflow verbs: `hook` (pre-commit), `baseline update`, `plot`, `matrix`.

Heavy modules (the analyzer, matplotlib, rich tables) are imported inside the commands so the
pre-commit hook starts quickly. Every verdict here comes from the default predictor, the same
one `analyze` and `evaluate` use (the rule plus its bounded learned correction, offline): the
hook, the baseline it compares with, the plot and the matrix all agree, and name it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from roofcast.cli.errors import EXIT_FAIL_ON, fail
from roofcast.cli.options import CompileCommandsOpt, IncludeOpt, UndefineOpt
from roofcast.cli.outputs import output_file, write_text, writing
from roofcast.workflow.baseline import DEFAULT_BASELINE, DEFAULT_THRESHOLD_PCT

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU


GpuOpt = Annotated[list[str], typer.Option("--gpu", "-g", help="Target GPU (repeatable).")]
DefineOpt = Annotated[
    list[str] | None,
    typer.Option("--define", "-D", help="Bind a symbol, NAME=VALUE (repeatable)."),
]
BaselineOpt = Annotated[
    Path, typer.Option("--baseline", help="Baseline file (kernel keys are relative to its folder).")
]


class FailOn(str, Enum):
    bandwidth = "bandwidth"
    compute = "compute"
    change = "change"
    never = "never"


class MatrixFormat(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


def parse_defines(items: Sequence[str] | None) -> dict[str, str]:
    """`["N=4096", "T=double"]` -> dict; a malformed item is a one-line usage error."""
    from roofcast.cli.options import defines_or_fail

    return defines_or_fail(list(items or []))


def load_gpus(names: Sequence[str]) -> list[tuple[str, GPU]]:
    """(label as typed, GPU) per --gpu; unknown names fail with the loader's suggestion."""
    from roofcast.cli.options import gpu_or_fail

    if not names:
        fail("give at least one --gpu (see `roofcast gpus`)")
    return [(name, gpu_or_fail(name)) for name in names]


def preprocessing(
    undefine: Sequence[str] | None,
    include_dir: Sequence[Path] | None,
    compile_commands: Path | None = None,
) -> dict:
    """-U, -I and --compile-commands as `analyze_paths` keywords (a one-line error for a bad
    name, folder or database)."""
    from roofcast.cli.options import database_or_fail, include_dirs_or_fail, undefines_or_fail

    return {
        "undefines": undefines_or_fail(list(undefine or [])),
        "include_dirs": include_dirs_or_fail(list(include_dir or [])),
        "database": database_or_fail(compile_commands),
    }


def analyze(
    paths: Sequence[Path], gpu: GPU, defines: dict[str, str], prep: dict | None = None
) -> dict:
    """analyze_paths with the default predictor, as a report dict (JSON contract)."""
    from roofcast.analyzer import SourceError
    from roofcast.pipeline import analyze_paths
    from roofcast.predictors import default_predictor

    try:
        report = analyze_paths(
            list(paths), gpu, defines, predictor=default_predictor(), **(prep or {})
        )
    except SourceError as exc:
        fail(str(exc))
    for problem in report.problems:
        message = problem.message.removeprefix(problem.file + ": ")
        print(f"roofcast: warning: {problem.file}: {message}", file=sys.stderr)
    return report.to_json()


def analyze_each(
    paths: Sequence[Path],
    gpus: Sequence[tuple[str, GPU]],
    defines: dict[str, str],
    prep: dict | None = None,
) -> list[dict]:
    """One report per GPU, with a (transient, stderr) progress bar when there are several."""
    if len(gpus) == 1:
        return [analyze(paths, gpus[0][1], defines, prep)]
    from rich.console import Console
    from rich.progress import Progress

    reports = []
    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("analysing", total=len(gpus))
        for label, gpu in gpus:
            progress.update(task, description=f"analysing for {label}")
            reports.append(analyze(paths, gpu, defines, prep))
            progress.advance(task)
    return reports


def hook(
    files: Annotated[
        list[Path] | None, typer.Argument(help="Staged files (from pre-commit).")
    ] = None,
    gpu: GpuOpt = None,  # type: ignore[assignment]
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="What stops the commit.")
    ] = FailOn.never,
    baseline: BaselineOpt = Path(DEFAULT_BASELINE),
    threshold: Annotated[
        float, typer.Option("--threshold", help="--fail-on change: % intensity drop that fails.")
    ] = DEFAULT_THRESHOLD_PCT,
    define: DefineOpt = None,
    undefine: UndefineOpt = None,
    include_dir: IncludeOpt = None,
    compile_commands: CompileCommandsOpt = None,
) -> None:
    """Pre-commit entry: one line per kernel flagged or changed in FILES; exit 1 to stop."""
    from roofcast.workflow import baseline as bl
    from roofcast.workflow import hook as hk

    gpus = load_gpus(gpu or [])
    if threshold < 0:
        fail("--threshold must be a percentage >= 0")
    base_dir = baseline.resolve().parent
    data = None
    defines = {}
    if fail_on is FailOn.change:
        try:
            data = bl.load(baseline)
        except bl.BaselineError as exc:
            fail(str(exc))
        defines = dict(data.get("defines", {}))
    defines.update(parse_defines(define))
    paths = [f for f in files or [] if f.is_file()]
    if not paths:
        return
    prep = preprocessing(undefine, include_dir, compile_commands)
    reports = {label: analyze(paths, g, defines, prep) for label, g in gpus}
    try:
        if fail_on is FailOn.change:
            from roofcast.workflow.view import rel_path

            assert data is not None  # loaded above for --fail-on change
            outcome = hk.check_changes(
                reports,
                {label: g.key for label, g in gpus},
                data,
                base_dir,
                threshold,
                [rel_path(str(p), base_dir) for p in paths],
                baseline.name,
            )
        else:
            outcome = hk.check_verdicts(reports, fail_on.value, base_dir)
    except bl.BaselineError as exc:
        fail(str(exc))
    for line in outcome.lines:
        print(line)
    if outcome.lines or outcome.failed:
        print(outcome.summary)
    if outcome.failed:
        raise typer.Exit(EXIT_FAIL_ON)


def baseline_update(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders with kernels.")],
    gpu: GpuOpt,
    baseline: BaselineOpt = Path(DEFAULT_BASELINE),
    define: DefineOpt = None,
    undefine: UndefineOpt = None,
    include_dir: IncludeOpt = None,
    compile_commands: CompileCommandsOpt = None,
) -> None:
    """Record every kernel's verdict and intensities per GPU in the baseline file."""
    from roofcast.workflow import baseline as bl
    from roofcast.workflow.view import rel_path

    output_file(baseline, "--baseline")
    gpus = load_gpus(gpu)
    defines = parse_defines(define)
    base_dir = baseline.resolve().parent
    data = bl.empty_baseline()
    if baseline.exists():
        try:
            data = bl.load(baseline)
        except bl.BaselineError as exc:
            fail(str(exc))
    reports = analyze_each(
        paths, gpus, defines, preprocessing(undefine, include_dir, compile_commands)
    )
    by_key = {g.key: r for (_, g), r in zip(gpus, reports, strict=True)}
    data = bl.update(data, by_key, base_dir, [rel_path(str(p), base_dir) for p in paths], defines)
    with writing(baseline, "--baseline"):
        bl.save(data, baseline)
    counts = ", ".join(
        f"{label}: {len(r['kernels'])} kernels" for (label, _), r in zip(gpus, reports, strict=True)
    )
    print(f"roofcast: wrote {baseline} ({counts})")


def plot(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders with kernels.")],
    gpu: Annotated[str, typer.Option("--gpu", "-g", help="Target GPU.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="roofline.png, .svg, .pdf or .html")
    ] = Path("roofline.png"),
    title: Annotated[str | None, typer.Option("--title", help="Figure title.")] = None,
    define: DefineOpt = None,
    undefine: UndefineOpt = None,
    include_dir: IncludeOpt = None,
    compile_commands: CompileCommandsOpt = None,
) -> None:
    """Draw GPU's roofline (one ceiling per class) with each kernel at its intensity."""
    from roofcast.workflow import plot as rp

    if output.suffix.lower() not in rp.FORMATS:
        fail(f"cannot write '{output}': use one of {', '.join(rp.FORMATS)}")
    output_file(output)
    ((label, g),) = load_gpus([gpu])
    report = analyze(
        paths, g, parse_defines(define), preprocessing(undefine, include_dir, compile_commands)
    )
    if not report["kernels"]:
        fail("no kernels found in " + ", ".join(str(p) for p in paths))
    fig = rp.figure(report, g, Path.cwd(), title)
    with writing(output):
        rp.save(fig, output)
    print(f"roofcast: wrote {output} ({len(report['kernels'])} kernels on {g.name})")


def matrix(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders with kernels.")],
    gpu: GpuOpt,
    fmt: Annotated[MatrixFormat, typer.Option("--format", "-f")] = MatrixFormat.table,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    only_flips: Annotated[
        bool, typer.Option("--only-flips", help="Table: only kernels whose verdict flips.")
    ] = False,
    define: DefineOpt = None,
    undefine: UndefineOpt = None,
    include_dir: IncludeOpt = None,
    compile_commands: CompileCommandsOpt = None,
) -> None:
    """Verdict of every kernel on every GPU; rows where the verdict flips are highlighted."""
    from roofcast.workflow import matrix as mx

    output_file(output)
    gpus = load_gpus(gpu)
    reports = analyze_each(
        paths, gpus, parse_defines(define), preprocessing(undefine, include_dir, compile_commands)
    )
    m = mx.build(reports, Path.cwd(), [label for label, _ in gpus])
    if fmt is MatrixFormat.table:
        from rich.console import Console

        if output is None:
            Console().print(mx.to_table(m, only_flips))
            return
        with writing(output), output.open("w", encoding="utf-8") as fh:
            Console(file=fh, width=160, no_color=True).print(mx.to_table(m, only_flips))
        return
    text = mx.to_csv(m) if fmt is MatrixFormat.csv else json.dumps(mx.to_json(m), indent=2) + "\n"
    if output:
        write_text(output, text)
    else:
        sys.stdout.write(text)


def register(app: typer.Typer) -> None:
    """Add `hook`, `baseline update`, `plot` and `matrix` to the main app."""
    app.command("hook")(hook)
    app.command("plot")(plot)
    app.command("matrix")(matrix)
    baseline_app = typer.Typer(
        help="The committed baseline that `hook --fail-on change` uses.", no_args_is_help=True
    )
    baseline_app.command("update")(baseline_update)
    app.add_typer(baseline_app, name="baseline")
