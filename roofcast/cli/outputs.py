"""Where verbs write: one rule for every output path, checked before the work starts.

A verb that runs for minutes (evaluate, train, an LLM campaign) must not end in a traceback
because its `--output` named a folder or a folder that does not exist. The rule, the same
for every verb: a file output must not be an existing folder, and the folder that holds it
must exist (a typo never creates a tree of folders). A folder output (`evaluate --report`)
may be created, but its parent must exist. Anything else is one line and exit 2.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from roofcast.cli.errors import fail


def _check_parent(path: Path, option: str) -> None:
    parent = path.parent
    if parent.is_dir():
        if not os.access(parent, os.W_OK):
            fail(f"{option} {path}: folder {parent} is not writable")
        return
    if parent.exists():
        fail(f"{option} {path}: {parent} is not a folder")
    fail(f"{option} {path}: no such folder {parent} (create it first)")


def output_file(path: Path | None, option: str = "--output") -> Path | None:
    """`path` if a file can be written there; else one line and exit 2. None passes."""
    if path is None:
        return None
    if path.is_dir():
        fail(f"{option} {path}: is a folder; give a file name")
    if path.exists() and not os.access(path, os.W_OK):
        fail(f"{option} {path}: file is not writable")
    _check_parent(path, option)
    return path


def output_folder(path: Path | None, option: str) -> Path | None:
    """`path` if it is a folder or can be made one (its parent exists); else exit 2."""
    if path is None:
        return None
    if path.exists() and not path.is_dir():
        fail(f"{option} {path}: is a file; give a folder")
    if not path.exists():
        _check_parent(path, option)
    return path


@contextmanager
def writing(path: Path, option: str = "--output") -> Iterator[Path]:
    """Turn an OSError while writing `path` (disk full, a race) into one line and exit 2."""
    try:
        yield path
    except OSError as exc:
        fail(f"{option} {path}: cannot write: {exc.strerror or exc}")


def write_text(path: Path, text: str, option: str = "--output") -> None:
    """Write `text` to a checked output path, with the one-line error on failure."""
    with writing(path, option):
        path.write_text(text, encoding="utf-8")
