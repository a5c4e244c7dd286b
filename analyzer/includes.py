"""Which file a quoted `#include "name"` means, without the compiler's -I flags.

Next to the includer first, then under each root; failing both, the listed file of that
name nearest to the includer in the folder tree, then by name (ties: listing order).
Nearest rather than first found: one program's `#include "common.h"` does not pick another
program's header when several are analysed together, and the answer does not depend on the
order files happen to be read in.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from roofcast.analyzer.sources import KERNEL_SUFFIXES, existing_file, resolved

_INCLUDABLE = KERNEL_SUFFIXES | {""}
_QUOTED_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*"([^"]+)"')
_ANGLE_INCLUDE = re.compile(rb"#[ \t]*include[ \t]*<([^>\n]+)>")


def quoted_includes(data: bytes) -> list[str]:
    """Every `#include "..."` name in raw file bytes (also in comments: a cheap superset)."""
    return [m.decode("utf-8", "replace") for m in _QUOTED_INCLUDE.findall(data)]


def angle_includes(data: bytes) -> list[str]:
    """Every `#include <...>` name in raw file bytes (a cheap superset, as `quoted_includes`)."""
    return [m.decode("utf-8", "replace") for m in _ANGLE_INCLUDE.findall(data)]


def resolve_angle_include(include: str, folders: Sequence[Path]) -> Path | None:
    """The resolved path `#include <include>` reads from a compile command's -I `folders`
    (in order), or None: the project's own headers reached as a build reaches them."""
    for folder in folders:
        candidate = os.path.join(folder, include)
        if _suffix(candidate).lower() in _INCLUDABLE:
            found = existing_file(candidate)
            if found is not None:
                return found
    return None


def resolve_include(
    origin: Path, include: str, roots: Sequence[Path], by_name: Mapping[str, list[Path]]
) -> Path | None:
    """The resolved path `origin`'s `#include "include"` reads, or None when none is found."""
    folders: tuple[str | os.PathLike[str], ...] = (os.path.dirname(origin), *roots)
    for folder in folders:
        candidate = os.path.join(folder, include)
        if _suffix(candidate).lower() in _INCLUDABLE:
            found = existing_file(candidate)
            if found is not None:
                return found
    same_name = by_name.get(Path(include).name)
    if not same_name:
        return None
    where = resolved(origin).parts
    return max(same_name, key=lambda path: _closeness(path.parts, where))


def _suffix(path: str) -> str:
    """`Path(path).suffix`, without building the Path (this runs for every include)."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def files_by_name(files: Sequence[Path]) -> dict[str, list[Path]]:
    """Resolved listed files by base name, in listing order: the fallback's candidates."""
    out: dict[str, list[Path]] = {}
    for path in files:
        key = resolved(path)
        out.setdefault(key.name, []).append(key)
    return out


def _closeness(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[int, int]:
    """Folders in common between a candidate's parts `a` and the includer's `b`, then
    characters in common in the first folder that differs: `prog-hip/x.cu` reaching for the
    `-I../prog-cuda` header picks `prog-cuda/`, not another program's file of that name."""
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    if shared >= min(len(a), len(b)):
        return shared, 0
    x, y = a[shared], b[shared]
    chars = 0
    for cx, cy in zip(x, y, strict=False):
        if cx != cy:
            break
        chars += 1
    return shared, chars
