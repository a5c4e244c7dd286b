"""On-disk cache of what libclang said of a unit (`clangast.UnitTypes`).

Parsing a unit costs clang a compile's front end (its CUDA wrapper headers alone are most of
it), once per unit and run; the result is small. An entry is keyed by a hash of the
libclang version, the arguments and the unit's own file, and keeps the size and mtime of
every file the parse included: an entry whose files changed since is parsed again. Under
roofcast's cache folder (`XDG_CACHE_HOME`), written to a temporary name and renamed, so
concurrent runs never read half an entry; a cache that cannot be read or written is no
cache (never an error).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from roofcast.analyzer.clangast import ClangType, Declarations, Instance, UnitTypes

#: bump when what an entry holds changes meaning
_FORMAT = 2


def cache_key(version: str, args: list[str], source: Path) -> str | None:
    """The entry's name; None when the unit's file cannot be read."""
    digest = hashlib.sha256(f"{_FORMAT}\0{version}\0".encode())
    digest.update("\0".join(args).encode())
    try:
        digest.update(source.read_bytes())
    except OSError:
        return None
    return digest.hexdigest()[:32]


def _folder() -> Path:
    from roofcast.analyzer.toolchain import cache_root

    return cache_root() / "clangast"


def _stamp(path: str) -> list[Any] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [path, st.st_size, st.st_mtime_ns]


def load(key: str) -> UnitTypes | None:
    """The cached types, if the entry exists and no file it included has changed."""
    try:
        data = json.loads((_folder() / f"{key}.json").read_text())
        if data.get("format") != _FORMAT:
            return None
        for stamp in data["files"]:
            if _stamp(stamp[0]) != stamp:
                return None
        return UnitTypes(
            declarations=_declarations(data["declarations"]),
            instances={
                (file, line, name): [
                    Instance(i["args"], {k: ClangType(*v) for k, v in i["arg_types"].items()},
                             _declarations(i["declarations"]))
                    for i in instances
                ]
                for file, line, name, instances in data["instances"]
            },
            note=data["note"],
            parsed=data["parsed"],
            errors=data["errors"],
        )  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def store(key: str, types: UnitTypes, files: Iterable[str]) -> None:
    """Keep `types` with the stamps of the `files` (and folders) its parse read."""
    stamps = [s for s in (_stamp(f) for f in files) if s is not None]
    data = {
        "format": _FORMAT,
        "files": stamps,
        "note": types.note,
        "parsed": types.parsed,
        "errors": types.errors,
        "declarations": _rows(types.declarations),
        "instances": [
            [*key_, [
                {
                    "args": i.args,
                    "arg_types": {k: _type_row(v) for k, v in i.arg_types.items()},
                    "declarations": _rows(i.declarations),
                }
                for i in instances
            ]]
            for key_, instances in types.instances.items()
        ],
    }  # fmt: skip
    try:
        folder = _folder()
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as out:
            json.dump(data, out)
        os.replace(out.name, folder / f"{key}.json")
    except OSError:
        return


def _type_row(t: ClangType) -> list[Any]:
    return [t.kind, t.size, t.pointer, t.name]


def _rows(declarations: Declarations) -> list[Any]:
    return [
        [file, line, name, [[column, *_type_row(t)] for column, t in found]]
        for (file, line, name), found in declarations.items()
    ]


def _declarations(rows: list[Any]) -> Declarations:
    return {
        (file, line, name): tuple((row[0], ClangType(*row[1:])) for row in found)
        for file, line, name, found in rows
    }
