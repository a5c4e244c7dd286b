"""Find kernels in files and folders: CUDA `__global__` functions and OpenMP target regions.

Each file is parsed once; headers it includes from the same tree are indexed too, so the
kernel's macros, typedefs and `__device__` callees are visible to feature counting.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from roofcast.analyzer import cuda, openmp
from roofcast.analyzer.callsites import CallSites
from roofcast.analyzer.context import Context
from roofcast.analyzer.includes import files_by_name, quoted_includes, resolve_include
from roofcast.analyzer.index import FileIndex, build_index, index_query
from roofcast.analyzer.model import FileProblem, KernelIR
from roofcast.analyzer.parsing import RecentTexts, parse_shared
from roofcast.analyzer.preprocess import Macro, collect_macros, includes, preprocess, strip_comments
from roofcast.analyzer.skeleton import index_captures
from roofcast.analyzer.sources import (
    SourceError,
    expand_paths,
    forget_resolved,
    read_source,
    resolved,
)

MAX_INCLUDE_DEPTH = 8


@dataclass
class DiscoveryResult:
    kernels: list[KernelIR] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    files: int = 0


class _Indexer:
    """Parses and indexes each file at most once; resolves quoted includes."""

    def __init__(
        self, defines: Mapping[str, str] | None = None, undefines: frozenset[str] = frozenset()
    ) -> None:
        self.undefines = undefines
        self.defines = {k: v for k, v in (defines or {}).items() if k not in undefines}
        #: file -> the undefined macros whose absence chose an arm of its conditionals
        self.undefined_used: dict[Path, list[str]] = {}
        self.macro_cache: dict[Path, dict[str, Macro]] = {}
        self.own_macros: dict[Path, dict[str, Macro]] = {}  # defined in the file itself
        self.included_names: dict[Path, frozenset[str]] = {}  # defined by its local headers
        self.text_cache: dict[Path, str | None] = {}
        self.indices: dict[Path, FileIndex | None] = {}
        self.by_name: dict[str, list[Path]] = {}  # the listing's files: include fallback
        self.problems: list[FileProblem] = []
        self.roots: list[Path] = []

    def index(self, path: Path) -> FileIndex | None:
        key = resolved(path)
        if key in self.indices:
            return self.indices[key]
        self.indices[key] = None
        try:
            source = read_source(path)
        except SourceError as exc:
            self.problems.append(FileProblem(str(path), str(exc)))
            return None
        if source.warning:
            self.problems.append(FileProblem(str(path), source.warning, fatal=False))
        self.text_cache[key] = source.text
        macros = self.macros_for(key, source.text)
        # --define overrides a macro the file defines; other names are bound at counting time.
        pinned = frozenset(
            name for name in self.defines if name in macros and macros[name].params is None
        )  # and the file's own #define or #undef of such a name changes nothing
        for name in pinned:
            macros[name] = Macro(None, self.defines[name])
        # Conditionals see --define, then macros of included headers; the file's own
        # #defines join as they are met (an include guard is not defined before its #ifndef).
        own = self.own_macros[key]  # collected by macros_for above
        known = {
            k: (m.body or "1") if m.params is None else None
            for k, m in macros.items()
            if k not in own
        }
        defined = {**known, **self.defines}
        deferred = frozenset(own).difference(self.included_names.get(key, ()), self.defines)
        stripped, expanded, self.undefined_used[key] = _RECENT_EXPANSIONS.get(
            (
                source.text,
                frozenset(macros.items()),
                frozenset(defined.items()),
                deferred,
                pinned,
                self.undefines,
            ),
            len(source.text),
            partial(_expand, source.text, macros, defined, deferred, pinned, self.undefines),
        )
        shared = parse_shared(expanded, source.grammar)
        grammar = source.grammar
        found = shared.derived(
            "index", lambda tree: index_captures(index_query(grammar), tree, grammar)
        )
        index = build_index(path, source.grammar, shared.tree, found)
        index.display_lines = stripped.split("\n")
        for fn in index.functions:
            fn.lines = index.display_lines
        self.indices[key] = index
        return index

    def macros_for(self, path: Path, text: str, depth: int = 0) -> dict[str, Macro]:
        """Macros of the file and, first, of the local headers it includes."""
        if path in self.macro_cache:
            return dict(self.macro_cache[path])
        self.macro_cache[path] = {}
        merged: dict[str, Macro] = {}
        if depth < MAX_INCLUDE_DEPTH:
            for include in includes(text):
                target = resolve_include(path, include, self.roots, self.by_name)
                if target is None:
                    continue
                if target not in self.text_cache:
                    try:
                        self.text_cache[target] = read_source(target).text
                    except SourceError:
                        self.text_cache[target] = None
                child_text = self.text_cache[target]
                if child_text is not None:
                    merged.update(self.macros_for(target, child_text, depth + 1))
        self.included_names[path] = frozenset(merged)
        self.own_macros[path] = collect_macros(text)
        merged.update(self.own_macros[path])
        self.macro_cache[path] = merged
        return dict(merged)

    def visible(self, index: FileIndex, roots: Sequence[Path]) -> list[FileIndex]:
        """The file's own index, then every quoted include found next to it or under a root."""
        out = [index]
        seen = {resolved(index.path)}
        frontier = [(index, 0)]
        while frontier:
            current, depth = frontier.pop(0)
            if depth >= MAX_INCLUDE_DEPTH:
                continue
            for include in current.includes:
                target = resolve_include(current.path, include, roots, self.by_name)
                if target is None or target in seen:
                    continue
                seen.add(target)
                child = self.index(target)
                if child is not None:
                    out.append(child)
                    frontier.append((child, depth + 1))
        return out


#: a copy of a file under another folder, with the same macros, expands the same
_RECENT_EXPANSIONS: RecentTexts[tuple[str, str, list[str]]] = RecentTexts(4_000_000)


def _expand(
    text: str,
    macros: Mapping[str, Macro],
    defined: Mapping[str, str | None],
    deferred: frozenset[str],
    pinned: frozenset[str],
    undefines: frozenset[str],
) -> tuple[str, str, list[str]]:
    """(comments stripped, then preprocessed, the undefined macros that chose an arm): what
    the user reads, what is parsed, and what the report notes."""
    stripped = strip_comments(text)
    notes: list[str] = []
    expanded = preprocess(
        stripped,
        macros,
        comments_stripped=True,
        defined=defined,
        deferred=deferred,
        pinned=pinned,
        undefined=undefines,
        notes=notes,
    )
    return stripped, expanded, notes


def discover(
    paths: Sequence[Path],
    defines: Mapping[str, str] | None = None,
    undefines: frozenset[str] = frozenset(),
    include_dirs: Sequence[Path] = (),
) -> DiscoveryResult:
    """All kernels under `paths`. Raises SourceError only for a path that does not exist.
    `undefines` (-U) are undefined from the start; `include_dirs` (-I) are searched for
    quoted includes after the folders given."""
    forget_resolved()  # files may have changed since the last analysis in this process
    unlistable: list[Path] = []
    files = expand_paths(paths, unlistable)
    result = discover_files(files, [*roots_of(paths), *include_dirs], defines, undefines)
    result.problems[:0] = [unlistable_folder(folder) for folder in unlistable]
    return result


def unlistable_folder(folder: Path) -> FileProblem:
    """The warning for a folder whose files could not be listed (skipped, analysis goes on)."""
    return FileProblem(str(folder), "cannot list this folder: its files were skipped", fatal=False)


def roots_of(paths: Sequence[Path]) -> list[Path]:
    """Where includes are looked for besides the includer's folder: the folders given (each
    once: files of one folder, as a pre-commit hook passes them, give one root)."""
    return list(dict.fromkeys(p if p.is_dir() else p.parent for p in paths))


def discover_files(
    files: Sequence[Path],
    roots: Sequence[Path],
    defines: Mapping[str, str] | None = None,
    undefines: frozenset[str] = frozenset(),
) -> DiscoveryResult:
    """All kernels in a listing of files (see `partition` for analysing one in parts)."""
    indexer = _Indexer(defines, undefines)
    indexer.roots = list(roots)
    indexer.by_name = files_by_name(files)
    result = DiscoveryResult(files=len(files))
    for path in files:
        if _may_hold_kernels(path):
            indexer.index(path)
    seen_kernels: set[tuple[Path, int, str]] = set()
    listed = frozenset(resolved(p) for p in files)
    launches_by_dir: dict[Path, cuda.LaunchMap] = {}

    calls_by_dir: dict[Path, CallSites] = {}

    def calls_near(path: Path) -> CallSites:
        """Plain calls in the region's folder: how its function's parameters are passed."""
        folder = resolved(path).parent
        if folder not in calls_by_dir:
            near = [i for k, i in indexer.indices.items() if i is not None and k.parent == folder]
            calls_by_dir[folder] = CallSites(near)
        return calls_by_dir[folder]

    def launches_near(path: Path) -> cuda.LaunchMap:
        """Launch sites in the kernel's own folder: where its host code lives."""
        folder = resolved(path).parent
        if folder not in launches_by_dir:
            near = [i for k, i in indexer.indices.items() if i is not None and k.parent == folder]
            launches_by_dir[folder] = cuda.launch_map(near)
        return launches_by_dir[folder]

    for path in files:
        index = indexer.indices.get(resolved(path))
        if index is None:
            continue  # unreadable, or no kernel markers (headers are indexed when included)
        visible = indexer.visible(index, roots)
        context = Context.merge(visible)
        found: list[KernelIR] = []
        # Kernels defined in included headers of the same tree belong to the analysis too.
        for source_index in visible:
            pasted = source_index.path.name in index.function_includes
            if source_index is not index and resolved(source_index.path) in listed and not pasted:
                continue
            if source_index.grammar == "cuda":
                found.extend(
                    cuda.kernels_in(
                        source_index,
                        context,
                        launches_near(source_index.path),
                        calls_near(source_index.path),
                    )
                )
            owner = None
            if source_index is not index:
                owner = index.function_includes.get(source_index.path.name)
            found.extend(
                openmp.regions_in(source_index, context, owner, calls_near(source_index.path))
            )
        undefined_used = sorted(
            {n for i in visible for n in indexer.undefined_used.get(resolved(i.path), ())}
        )
        for kernel in found:
            kernel.undefined_macros = list(undefined_used)
            key = (resolved(Path(kernel.file)), kernel.line, kernel.name)
            if key not in seen_kernels:
                seen_kernels.add(key)
                result.kernels.append(kernel)
        if index.tree.root_node.has_error:
            result.problems.append(
                FileProblem(
                    str(path), "parts of the file did not parse; counted what did", fatal=False
                )
            )
    result.problems[:0] = indexer.problems
    result.kernels.sort(key=lambda k: (k.file, k.line))
    return result


_OMP_TARGET = re.compile(rb"#[ \t]*pragma[ \t]+omp[ \t]+target")


def _has_marker(data: bytes) -> bool:
    """`__global__`, `__device__` or `#pragma omp target` anywhere (byte searches first: one
    regex over every file of a large tree cost more than all other listing work)."""
    return (
        b"__global__" in data
        or b"__device__" in data
        or (b"target" in data and _OMP_TARGET.search(data) is not None)
    )


def _may_hold_kernels(path: Path) -> bool:
    """Cheap byte scan: files without any kernel marker are parsed only if a kernel includes them.

    Unreadable files are let through so that their problem is reported."""
    if path.suffix.lower() in (".cu", ".cuh"):
        return True  # kernels may hide behind macros such as `#define GLOBAL __global__`
    try:
        data = path.read_bytes()
    except OSError:
        return True
    if _has_marker(data) or b"\0" in data[:8192]:
        return True
    for include in quoted_includes(data):  # a region pasted in from a local header
        header = path.parent / include
        try:
            if header.is_file() and _has_marker(header.read_bytes()):
                return True
        except OSError:
            continue
    return False
