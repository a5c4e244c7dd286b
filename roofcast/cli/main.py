"""roofcast: static roofline verdicts for CUDA and OpenMP-offload kernels."""

from __future__ import annotations

import typer

from roofcast.cli import (
    analyze_cmd,
    evaluate_cmd,
    explain_cmd,
    gpus_cmd,
    llm_cmd,
    profile_cmd,
    train_cmd,
    workflow_cmd,
)
from roofcast.cli.options import VersionOpt

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help=__doc__,
)


@app.callback()
def _root(version: VersionOpt = False) -> None:
    """roofcast: static roofline verdicts for CUDA and OpenMP-offload kernels."""


for _module in (
    analyze_cmd,
    explain_cmd,
    gpus_cmd,
    evaluate_cmd,
    train_cmd,
    llm_cmd,
    workflow_cmd,
    profile_cmd,
):
    _module.register(app)

#: The `analyze` console script: a one-command app, so its usage line reads
#: `analyze [OPTIONS] PATHS...` (the same function as `roofcast analyze`).
analyze_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
analyze_app.command()(analyze_cmd.analyze)


def analyze_entry() -> None:
    """The `analyze` console script."""
    analyze_app(prog_name="analyze")
