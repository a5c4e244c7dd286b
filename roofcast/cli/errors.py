"""One-line errors: every expected failure becomes `roofcast: error: ...` and a non-zero exit."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

#: Exit codes scripts can rely on.
EXIT_OK = 0
EXIT_FAIL_ON = 1  # a --fail-on condition was met (pre-commit, evaluate thresholds)
EXIT_USAGE = 2  # bad input: paths, GPU names, --define, manifests
EXIT_RUNTIME = 3  # a tool or endpoint outside roofcast failed (ncu, LLM server)


class RoofcastError(Exception):
    """An expected failure with a message fit for one line on stderr."""

    exit_code = EXIT_USAGE


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one clear line on stderr and exit; never a traceback."""
    print(f"roofcast: error: {message}", file=sys.stderr)
    raise typer.Exit(code)
