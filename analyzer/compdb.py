"""Per-file build flags from a compilation database (`compile_commands.json`).

The clangd / clang-tidy / CMake convention: a JSON list of entries with `directory`, `file`
and `command` (one string) or `arguments` (a list). Builds decide which `#if` arms exist
(`-DOMP_TARGET`, `-DGPU`, ...), so each translation unit is analysed with its own `-D`,
`-U` and `-I`. Commands are data: `command` is split with `shlex.split` (never a shell),
and `-D` values pass the same strict C-expression checks as `--define` values; an entry
or flag that fails them is a one-line warning, never a crash.

Relocation. A database written on another machine names files that do not exist here.
Such entries are moved onto the analysed tree by one prefix swap: of every (missing entry,
analysed file of the same name) pair, the pair sharing the longest trailing path gives the
swap (`/home/u/proj` -> `/work/proj`); pairs tied on that length are decided by how many
entries each swap maps onto analysed files; a tie left after that, or a swap resting on the
file name alone while another swap does too, relocates nothing (warned). The swap moves
each missing entry's file and include folders (relative ones first resolved against its
`directory`); an entry the swap does not land on an analysed file is left out (entries of
programs not analysed).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path, PurePath

from roofcast.analyzer.defines import check_define, parse_define
from roofcast.analyzer.sources import resolved

#: what separates words for shlex in POSIX mode
_BLANKS = re.compile(r"[ \t\r\n]+")
#: what a compile command may be called to mean CUDA
_CUDA_DRIVERS = frozenset({"nvcc", "nvc++"})
_CUDA_FILE_SUFFIXES = frozenset({".cu", ".cuh"})
_SM = re.compile(r"sm_\d+[a-z]?")
#: flags kept for compiling the unit again with its own clang: optimisation level, floating
#: point semantics, CUDA/GPU code generation, and warnings switched off (a build may need
#: `-Wno-c++11-narrowing` to compile at all); nothing that names a file or loads code
_CODEGEN = re.compile(
    r"-O[0-3sgz]?|-Ofast|-w|-Wno-[\w+=-]+"
    r"|-f(?:no-)?(?:fast-math|finite-math-only|unsafe-math-optimizations|associative-math"
    r"|reciprocal-math|signed-zeros|math-errno|trapping-math|approx-func|honor-nans"
    r"|honor-infinities|cuda-[\w-]+|gpu-[\w-]+|strict-aliasing|unroll-loops)"
    r"|-ffp-contract=\w+|-ffp-model=\w+|-fdenormal-fp-math(?:-f32)?=[\w,-]+"
)


class CompileDatabaseError(ValueError):
    """A database that cannot be read at all (missing, not JSON, not a list of entries)."""


@dataclass(frozen=True)
class CompileUnit:
    """One entry's flags, in the order the compiler applies them (a later -D or -U of a
    name replaces an earlier one)."""

    file: Path  # absolute, relocated onto the analysed tree where needed
    entry: int  # 0-based position in the database
    written_file: str  # the entry's `file` as written (for reports)
    defines: tuple[tuple[str, str], ...] = ()
    undefines: frozenset[str] = frozenset()
    include_dirs: tuple[Path, ...] = ()
    language: str | None = None  # -x LANG
    std: str | None = None  # -std=...
    forced_includes: tuple[str, ...] = ()  # -include FILE (recorded, not read)
    cuda: bool = False
    openmp_offload: bool = False
    compiler: str = ""  # the command's first word, its file name only (`clang++`, `nvcc`)
    #: flags that change a clang device compile's code, kept as written (`_CODEGEN`)
    codegen: tuple[str, ...] = ()
    gpu_archs: tuple[str, ...] = ()  # clang's --cuda-gpu-arch / --offload-arch (`sm_60`)

    def describe(self) -> str:
        """One line: which entry, and the flags that change the analysis."""
        flags = [f"-D{n}={v}" for n, v in self.defines]
        flags += [f"-U{n}" for n in sorted(self.undefines)]
        flags += [f"-I{d}" for d in self.include_dirs]
        kind = "CUDA" if self.cuda else "OpenMP offload" if self.openmp_offload else "host"
        return f"entry {self.entry} ({self.written_file}, {kind}): {' '.join(flags) or 'no flags'}"

    def to_json(self) -> dict:
        return {"entry": self.entry, "file": self.written_file}


@dataclass
class CompileDatabase:
    """Units by resolved file path, and what reading and relocating them warned about."""

    source: Path
    units: dict[Path, CompileUnit] = field(default_factory=dict)
    #: entries whose file does not exist here, for `relocate`
    missing: list[CompileUnit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    swap: tuple[str, str] | None = None  # (old prefix, new prefix) of relocated entries

    def to_json(self) -> dict:
        """What a report says of the database: where, how it was moved, what it warned."""
        return {
            "database": str(self.source),
            "units": len(self.units),
            "relocated": None if self.swap is None else {"from": self.swap[0], "to": self.swap[1]},
            "warnings": list(self.warnings),
        }

    def unit_for(self, path: Path) -> CompileUnit | None:
        return self.units.get(resolved(path))

    def relocate(self, analysed: Iterable[Path]) -> CompileDatabase:
        """This database with its missing entries moved onto `analysed` files (see the
        module docstring); entries of files that exist are kept as they are."""
        out = CompileDatabase(self.source, dict(self.units), [], list(self.warnings))
        listed = [resolved(p) for p in analysed]
        if not self.missing or not listed:
            return out
        swap = _best_swap([unit.file for unit in self.missing], listed, out.warnings)
        if swap is None:
            return out
        out.swap = swap
        present = frozenset(listed)
        for unit in self.missing:
            moved = _swapped(unit.file, swap)
            if moved is None or moved not in present:
                continue
            dirs = tuple(
                d for d in (_swapped(d, swap) or d for d in unit.include_dirs) if d.is_dir()
            )
            out.units.setdefault(moved, replace(unit, file=moved, include_dirs=dirs))  # first wins
        return out


def database_path(given: Path) -> Path:
    """A folder means its compile_commands.json (as clang-tidy's -p)."""
    return given / "compile_commands.json" if given.is_dir() else given


def load_database(path: Path) -> CompileDatabase:
    """Read and check a database; CompileDatabaseError (one line) if it cannot be read."""
    path = database_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CompileDatabaseError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise CompileDatabaseError(f"{path}: not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CompileDatabaseError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise CompileDatabaseError(f"{path}: not valid JSON (nested too deeply)") from None
    if not isinstance(data, list):
        raise CompileDatabaseError(f"{path}: expected a JSON list of compile commands")
    database = CompileDatabase(path)
    for number, entry in enumerate(data):
        try:
            unit = parse_entry(entry, number, database.warnings)
        except ValueError as exc:
            database.warnings.append(f"entry {number}: {exc}; entry ignored")
            continue
        if os.path.isfile(unit.file):
            key = resolved(unit.file)
            database.units.setdefault(key, replace(unit, file=key))  # the first entry wins
        else:
            database.missing.append(unit)
    return database


def parse_entry(entry: object, number: int, warnings: list[str] | None = None) -> CompileUnit:
    """The unit of one entry; ValueError for an entry that is not one. Flags that fail their
    checks are left out, each with a line in `warnings`."""
    if not isinstance(entry, dict):
        raise ValueError("not a JSON object")
    directory, file = entry.get("directory"), entry.get("file")
    if not isinstance(directory, str) or not isinstance(file, str) or not file:
        raise ValueError("needs 'directory' and 'file' strings")
    if "arguments" in entry:
        args = entry["arguments"]
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("'arguments' is not a list of strings")
    elif isinstance(entry.get("command"), str):
        command = entry["command"]
        try:  # without quotes or backslashes, shlex's split is a split at blanks (faster)
            quoted = any(c in command for c in "'\"\\")
            args = shlex.split(command) if quoted else [w for w in _BLANKS.split(command) if w]
        except ValueError as exc:
            raise ValueError(f"cannot split 'command' ({exc})") from None
    else:
        raise ValueError("needs a 'command' string or an 'arguments' list")
    problems: list[str] = []
    path = Path(os.path.normpath(os.path.join(directory, file)))
    unit = _parse_arguments(args, path, number, file, directory, problems)
    where = f"entry {number} ({file})"
    for problem in problems:
        if warnings is not None:
            warnings.append(f"{where}: {problem}; flag ignored")
    return unit


def _parse_arguments(
    args: Sequence[str], path: Path, number: int, written: str, directory: str, problems: list
) -> CompileUnit:
    """The flags that matter of one command line (the first word is the driver)."""
    defines: dict[str, str] = {}
    undefines: set[str] = set()
    include_dirs: list[Path] = []
    forced: list[str] = []
    codegen: list[str] = []
    archs: list[str] = []
    language = std = None
    offload = False
    driver = PurePath(args[0]).name if args else ""
    words = iter(args[1:])
    for word in words:
        flag, value = _split_flag(word, words)
        if flag == "-D":
            _define(value, defines, undefines, problems)
        elif flag == "-U":
            if value is None or not value.isidentifier():
                problems.append(f"-U {value!r}: expected a macro name")
            else:
                defines.pop(value, None)
                undefines.add(value)
        elif flag == "-I":
            if value:
                include_dirs.append(Path(os.path.normpath(os.path.join(directory, value))))
        elif flag == "-x":
            language = value
        elif flag == "-include":
            if value:
                forced.append(value)
        elif word.startswith(("-std=", "--std=")):
            std = word.split("=", 1)[1]
        elif word.startswith("-fopenmp-targets="):
            offload = True
        elif _CODEGEN.fullmatch(word):
            codegen.append(word)
        elif word.startswith(("--cuda-gpu-arch=", "--offload-arch=")):
            archs += [a for a in word.split("=", 1)[1].split(",") if _SM.fullmatch(a)]
    cuda = (
        language in ("cuda", "cu")
        or driver in _CUDA_DRIVERS
        or (language is None and path.suffix.lower() in _CUDA_FILE_SUFFIXES)
    )
    return CompileUnit(
        file=path,
        entry=number,
        written_file=written,
        defines=tuple(defines.items()),
        undefines=frozenset(undefines),
        include_dirs=tuple(dict.fromkeys(include_dirs)),
        language=language,
        std=std,
        forced_includes=tuple(forced),
        cuda=cuda,
        openmp_offload=offload,
        compiler=driver,
        codegen=tuple(codegen),
        gpu_archs=tuple(dict.fromkeys(archs)),
    )


#: spellings of the flags that matter -> the flag; gcc/clang and nvcc's long forms
_FLAGS = {
    "-D": "-D",
    "--define-macro": "-D",
    "-U": "-U",
    "--undefine-macro": "-U",
    "-I": "-I",
    "-isystem": "-I",
    "-iquote": "-I",
    "-idirafter": "-I",
    "--include-path": "-I",
    "-x": "-x",
    "--language": "-x",
    "-include": "-include",
    "--pre-include": "-include",
}
#: short spellings whose value may be glued on: -DX=1, -Idir, -xcuda, -includefile.h
_GLUED = ("-isystem", "-iquote", "-idirafter", "-D", "-U", "-I", "-x")


def _split_flag(word: str, rest: Iterator[str]) -> tuple[str | None, str | None]:
    """('-D', 'X=1') for '-DX=1', '-D X=1' or '--define-macro=X=1'; (None, None) for a
    word that is no flag that matters."""
    if word in _FLAGS:
        return _FLAGS[word], next(rest, None)
    if word.startswith("--"):
        head, sep, value = word.partition("=")
        return (_FLAGS[head], value) if sep and head in _FLAGS else (None, None)
    for flag in _GLUED:
        if word.startswith(flag):
            return _FLAGS[flag], word[len(flag) :]
    if word.startswith("-include") and not word.startswith("-include-"):
        return "-include", word[len("-include") :]
    return None, None


def _define(text: str | None, defines: dict, undefines: set, problems: list) -> None:
    """`-D NAME` (NAME=1, as compilers do) or `-D NAME=VALUE`, checked as --define is."""
    if not text:
        problems.append("-D without a name")
        return
    if "=" not in text:
        text += "=1"
    elif text.endswith("="):
        problems.append(f"-D {text}: an empty value is not supported")
        return
    checked = _checked_define(text)
    if isinstance(checked, str):
        problems.append(checked)
        return
    name, value = checked
    undefines.discard(name)
    defines[name] = value


@lru_cache(maxsize=4096)
def _checked_define(text: str) -> tuple[str, str] | str:
    """(name, value), or the one-line problem: the checks of --define (a build repeats the
    same -D in every entry: each is checked once). The warnings of `check_define` about
    values that bind no count are for a user's -D, not a build's macros."""
    try:
        name, value = parse_define(text)
        check_define(name, value)
    except ValueError as exc:
        return str(exc).replace("--define", "-D")
    return name, value


def _shared_tail(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _best_swap(
    missing: Sequence[Path], listed: Sequence[Path], warnings: list[str]
) -> tuple[str, str] | None:
    """The prefix swap that moves missing entry files onto analysed files (see module)."""
    by_name: dict[str, list[tuple[str, ...]]] = {}
    for path in listed:
        by_name.setdefault(path.name, []).append(path.parts)
    present = frozenset(listed)
    best_length = 0
    candidates: list[tuple[str, str]] = []
    for file in missing:
        old = file.parts
        for new in by_name.get(file.name, ()):
            if best_length > 1 and (
                len(new) < best_length
                or len(old) < best_length
                or new[-best_length] != old[-best_length]
            ):
                continue  # shares fewer trailing parts than the best pair so far
            length = _shared_tail(old, new)
            if length < best_length:
                continue
            swap = (_prefix(old, length), _prefix(new, length))
            if length > best_length:
                best_length, candidates = length, [swap]
            else:
                candidates.append(swap)
    distinct = list(dict.fromkeys(candidates))
    if not distinct:
        return None
    if len(distinct) > 1:
        votes = Counter(
            swap
            for swap in distinct
            for file in missing
            if (moved := _swapped(file, swap)) is not None and moved in present
        )
        ranked = sorted(distinct, key=lambda s: -votes[s])
        if best_length < 2 or votes[ranked[0]] == votes[ranked[1]]:
            warnings.append(
                "cannot tell where the database's files are in the analysed folders "
                f"({len(distinct)} equally likely prefix swaps); its missing files are ignored"
            )
            return None
        distinct = ranked
    return distinct[0]


def _prefix(parts: tuple[str, ...], tail: int) -> str:
    return str(PurePath(*parts[: len(parts) - tail]))


def _swapped(path: Path, swap: tuple[str, str]) -> Path | None:
    """`path` with the old prefix replaced by the new one; None when it is not under it."""
    old, new = swap
    try:
        tail = path.relative_to(old)
    except ValueError:
        return None
    return Path(new) / tail


def unit_flags(
    unit: CompileUnit | None,
    defines: Mapping[str, str],
    undefines: frozenset[str],
) -> tuple[dict[str, str], frozenset[str], dict[str, str]]:
    """(defines, undefines, the unit's own defines) a file is analysed with: the unit's,
    then the command line's -D and -U, which win. The unit's own defines are those the
    command line leaves (bound at counting time as --define values are)."""
    if unit is None:
        return dict(defines), undefines, {}
    own = {n: v for n, v in unit.defines if n not in undefines and n not in defines}
    merged = {**own, **defines}
    gone = (unit.undefines - frozenset(defines)) | undefines
    return {k: v for k, v in merged.items() if k not in gone}, frozenset(gone), own
