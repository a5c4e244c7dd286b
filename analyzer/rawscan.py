"""What a file's raw bytes say before it is parsed: its include names and kernel markers.

Splitting a listing into groups (`partition`) and deciding which listed files to parse
(`discover`) both read every file's bytes, and discovery reads the headers a host file
includes as well. The facts are few and small, so the bytes are read once per analysis
session and the facts kept (not the bytes: a large tree's text would not fit in memory).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from roofcast.analyzer.includes import angle_includes, quoted_includes
from roofcast.analyzer.session import SessionMemo


@dataclass(frozen=True)
class RawFacts:
    readable: bool
    binary: bool  # a NUL byte near the start
    marker: bool  # `__global__`, `__device__` or `#pragma omp target` anywhere
    quoted: tuple[str, ...]  # `#include "..."` names (in comments too: a cheap superset)
    angle: tuple[str, ...]  # `#include <...>` names, likewise


#: a blank or a comment between the words of a directive (comments become blanks in cpp)
_GAP = rb"(?:[ \t]|/\*(?:[^*]|\*(?!/))*\*/)"
_OMP_TARGET = re.compile(rb"#" + _GAP + rb"*pragma" + _GAP + rb"+omp" + _GAP + rb"+target")


def has_marker(data: bytes) -> bool:
    """`__global__`, `__device__` or `#pragma omp target` anywhere (byte searches first: one
    regex over every file of a large tree cost more than all other listing work)."""
    return (
        b"__global__" in data
        or b"__device__" in data
        or (b"target" in data and _OMP_TARGET.search(data) is not None)
    )


_UNREADABLE = RawFacts(False, False, False, (), ())


def _scan(path: str) -> RawFacts:
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return _UNREADABLE
    return RawFacts(
        True,
        b"\0" in data[:8192],
        has_marker(data),
        tuple(quoted_includes(data)),
        tuple(angle_includes(data)),
    )


#: path as given -> its facts, per analysis session (files may change between analyses)
_FACTS: SessionMemo[str, RawFacts] = SessionMemo(_scan)


def raw_facts(path: Path) -> RawFacts:
    """The facts of the file at `path`, its bytes read at most once per session."""
    return _FACTS(os.fspath(path))
