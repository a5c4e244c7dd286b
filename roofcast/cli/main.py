"""roofcast: static roofline verdicts for CUDA and OpenMP-offload kernels."""

from __future__ import annotations

import sys

import typer

from roofcast.cli import (
    analyze_cmd,
    evaluate_cmd,
    gpus_cmd,
    llm_cmd,
    profile_cmd,
    train_cmd,
    workflow_cmd,
)

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help=__doc__,
)
for _module in (analyze_cmd, gpus_cmd, evaluate_cmd, train_cmd, llm_cmd, workflow_cmd, profile_cmd):
    _module.register(app)


def analyze_entry() -> None:
    """The `analyze` console script: the same command as `roofcast analyze`."""
    sys.argv[1:1] = ["analyze"]
    app(prog_name="analyze")
