"""Reading kernel files: expand folders, refuse binary or non-UTF-8 input with one clear line."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from roofcast.analyzer.session import SessionMemo

CUDA_SUFFIXES = frozenset({".cu", ".cuh"})
CPP_SUFFIXES = frozenset({".cpp", ".cc", ".cxx", ".c", ".c++"})
HEADER_SUFFIXES = frozenset({".h", ".hpp", ".hh", ".hxx", ".inl"})
KERNEL_SUFFIXES = CUDA_SUFFIXES | CPP_SUFFIXES | HEADER_SUFFIXES


_CUDA_MARKERS = ("__global__", "__device__", "<<<")


class SourceError(Exception):
    """A path that cannot be analysed at all (missing, unreadable, binary, not UTF-8)."""


@dataclass(frozen=True)
class SourceFile:
    path: Path
    text: str
    warning: str = ""

    @cached_property
    def grammar(self) -> str:
        """CUDA files and headers use the CUDA grammar (a C++ superset); C/C++ files the C++ one.
        Kept once found: a marker search is a scan of the whole text."""
        text = self.text
        if self.path.suffix.lower() in CPP_SUFFIXES and not any(m in text for m in _CUDA_MARKERS):
            return "cpp"
        return "cuda"  # also .cpp files holding CUDA code (kernels included into a .cu)


def _resolve(path: Path) -> Path:
    """`path.resolve()`, cheaper: the folder is resolved once for all its files (memoised
    with them, below); only a file that is itself a link costs a full resolution. String
    operations, not pathlib's: this runs for every listed file before any parallel work."""
    folder, name = os.path.split(os.fspath(path))
    if name in ("", ".", ".."):
        return path.resolve()
    candidate = os.path.join(_resolved_folder(folder), name)
    return Path(os.path.realpath(candidate) if os.path.islink(candidate) else candidate)


#: memoised per analysis session: discovery asks for the same paths thousands of times and
#: each answer costs system calls, but files and links may change between analyses
resolved: SessionMemo[Path, Path] = SessionMemo(_resolve)
_resolved_folder: SessionMemo[str, str] = SessionMemo(lambda folder: str(Path(folder).resolve()))


def _existing_file(text: str) -> Path | None:
    return resolved(Path(text)) if os.path.isfile(text) else None


#: `resolved(Path(text))` if `text` names a regular file (links followed), else None;
#: memoised like `resolved`: a folder's files include the same headers again and again
existing_file: SessionMemo[str, Path | None] = SessionMemo(_existing_file)


def expand_paths(paths: Iterable[Path], unlistable: list[Path] | None = None) -> list[Path]:
    """Files as given (any suffix) plus kernel-suffixed files under folders, sorted, unique.
    Folders that cannot be listed are skipped and appended to `unlistable` (for a warning)."""
    out: list[Path] = []
    for path in paths:
        if not path.exists():
            raise SourceError(f"{path}: no such file or directory")
        if path.is_dir():
            found: list[str] = []
            failed: list[str] = []
            _kernel_files(str(path), found, failed)
            if unlistable is not None:
                unlistable.extend(map(Path, sorted(failed)))
            found.sort(key=lambda name: name.split(os.sep))  # as Paths sort: part by part
            out.extend(map(Path, found))
        else:
            out.append(path)
    seen: set[Path] = set()
    unique = []
    for p in out:
        key = resolved(p)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def _kernel_files(folder: str, found: list[str], failed: list[str]) -> None:
    """Kernel-suffixed files under `folder`, hidden ones and hidden folders left out; links
    to files count, links to folders are not followed (as `Path.rglob`). One `scandir` per
    folder: its entries know their type without a `stat` each."""
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except OSError:
        failed.append(folder)
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if not entry.is_symlink():
                _kernel_files(entry.path, found, failed)
        elif os.path.splitext(entry.name)[1].lower() in KERNEL_SUFFIXES and entry.is_file():
            found.append(entry.path)


def read_source(path: Path) -> SourceFile:
    """Read one file as UTF-8 text; binary or undecodable content is a SourceError."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if b"\0" in data[:8192]:
        raise SourceError(f"{path}: binary file, not source code")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")  # same line count, one newline convention
    try:
        return SourceFile(path=path, text=data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    # A stray Latin-1 byte in a comment is common in real code; mostly-foreign bytes are not source.
    if bad > max(2, len(data) // 200):
        raise SourceError(f"{path}: not UTF-8 text (first bad byte at offset {first_bad})")
    return SourceFile(path=path, text=text, warning=f"{bad} non-UTF-8 byte(s) replaced")
