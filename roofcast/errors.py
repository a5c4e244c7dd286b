"""Errors any layer may raise, and the exit codes they stand for.

They live below the CLI so that a manifest reader or a profiler wrapper can say "bad input"
without importing the command line (and typer); the CLI turns them into one line on stderr
and the exit code (`roofcast.cli.errors.fail`)."""

from __future__ import annotations

#: Exit codes scripts can rely on.
EXIT_OK = 0
EXIT_FAIL_ON = 1  # a --fail-on condition was met (pre-commit, evaluate thresholds)
EXIT_USAGE = 2  # bad input: paths, GPU names, --define, manifests
EXIT_RUNTIME = 3  # a tool or endpoint outside roofcast failed (ncu, LLM server)


class RoofcastError(Exception):
    """An expected failure with a message fit for one line on stderr."""

    exit_code = EXIT_USAGE
