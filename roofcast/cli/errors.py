"""One-line errors: every expected failure becomes `roofcast: error: ...` and a non-zero exit.

The error type and the exit codes are `roofcast.errors` (any layer raises them); this module
is the CLI's side: printing the line and leaving with the code."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from roofcast.errors import EXIT_FAIL_ON, EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, RoofcastError

__all__ = ["EXIT_FAIL_ON", "EXIT_OK", "EXIT_RUNTIME", "EXIT_USAGE", "RoofcastError", "fail"]


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one clear line on stderr and exit; never a traceback."""
    print(f"roofcast: error: {message}", file=sys.stderr)
    raise typer.Exit(code)
