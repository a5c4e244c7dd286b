"""Option parsing shared by verbs: GPUs, --define, --undefine, --include-dir, launch dimensions."""

from __future__ import annotations

import sys
from pathlib import Path

from roofcast.cli.errors import fail
from roofcast.gpu_specs import GPU, UnknownGPUError, load_gpu


def gpu_or_fail(name: str) -> GPU:
    try:
        return load_gpu(name)
    except UnknownGPUError as exc:
        fail(str(exc))


def defines_or_fail(items: list[str] | None) -> dict[str, str]:
    """NAME=VALUE pairs; a value that cannot mean anything is a one-line error (exit 2), one
    that binds no size as the user may think a one-line warning (see `check_define`)."""
    from roofcast.features.resolve import check_define, parse_define

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
