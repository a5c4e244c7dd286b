"""Find kernels in files and folders: CUDA `__global__` functions and OpenMP target regions.

Each file is parsed once; headers it includes from the same tree are indexed too, so the
kernel's macros, typedefs and `__device__` callees are visible to feature counting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePath

from roofcast.analyzer import cuda, openmp
from roofcast.analyzer.callsites import CallSites
from roofcast.analyzer.compdb import CompileDatabase, CompileUnit, unit_flags
from roofcast.analyzer.context import Context
from roofcast.analyzer.includes import files_by_name, resolve_angle_include, resolve_include
from roofcast.analyzer.index import FileIndex, build_index, index_query
from roofcast.analyzer.model import FileProblem, KernelIR
from roofcast.analyzer.parsing import parse_shared
from roofcast.analyzer.preprocess import Macro, collect_macros, includes, preprocess, strip_comments
from roofcast.analyzer.rawscan import raw_facts
from roofcast.analyzer.session import SessionRecentTexts, analysis_session
from roofcast.analyzer.skeleton import index_captures
from roofcast.analyzer.sources import (
    SourceError,
    expand_paths,
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
        #: (header, includer) -> the header pasted into a body of the includer (`pasted`)
        self.pasted_indices: dict[tuple[Path, Path], FileIndex | None] = {}
        self.by_name: dict[str, list[Path]] = {}  # the listing's files: include fallback
        self.problems: list[FileProblem] = []
        self.roots: list[Path] = []

    def index(self, path: Path) -> FileIndex | None:
        key = resolved(path)
        if key in self.indices:
            return self.indices[key]
        self.indices[key] = None
        index = self._build(path, key)
        self.indices[key] = index
        return index

    def pasted(self, path: Path, includer: Path) -> FileIndex | None:
        """A header pasted into a function or loop body (`{ #include "step.h" }`), indexed
        with the macros its includer has at that point (its own and its headers'), as cpp
        expands it there: `RF(1) = ...` in the header is an access when the includer's
        `#define RF(q) rf[...]` is visible."""
        key = resolved(path)
        pasted_key = (key, resolved(includer))
        if pasted_key in self.pasted_indices:
            return self.pasted_indices[pasted_key]
        self.pasted_indices[pasted_key] = None
        includer_text = self.text_cache.get(resolved(includer))
        outer = self.macros_for(resolved(includer), includer_text) if includer_text else {}
        index = self._build(path, key, outer)
        self.pasted_indices[pasted_key] = index
        return index

    def _build(
        self, path: Path, key: Path, outer: Mapping[str, Macro] | None = None
    ) -> FileIndex | None:
        try:
            source = read_source(path)
        except SourceError as exc:
            self.problems.append(FileProblem(str(path), str(exc)))
            return None
        if source.warning and not outer:
            self.problems.append(FileProblem(str(path), source.warning, fatal=False))
        self.text_cache[key] = source.text
        macros = {**(outer or {}), **self.macros_for(key, source.text)}
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
                if PurePath(include).name in current.function_includes:
                    child = self.pasted(target, current.path)
                else:
                    child = self.index(target)
                if child is not None:
                    out.append(child)
                    frontier.append((child, depth + 1))
        return out


#: a copy of a file under another folder, with the same macros, expands the same
_RECENT_EXPANSIONS: SessionRecentTexts[tuple[str, str, list[str]]] = SessionRecentTexts(4_000_000)


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
    database: CompileDatabase | None = None,
) -> DiscoveryResult:
    """All kernels under `paths`. Raises SourceError only for a path that does not exist.
    `undefines` (-U) are undefined from the start; `include_dirs` (-I) are searched for
    quoted includes after the folders given. With a compile `database` (already relocated,
    see `compdb`), each file is analysed with its compile command's flags as well."""
    with analysis_session():  # the current analysis's, or one of its own
        unlistable: list[Path] = []
        files = expand_paths(paths, unlistable)
        roots = [*roots_of(paths), *include_dirs]
        result = discover_files(files, roots, defines, undefines, database)
    result.problems[:0] = [unlistable_folder(folder) for folder in unlistable]
    return result


def unlistable_folder(folder: Path) -> FileProblem:
    """The warning for a folder whose files could not be listed (skipped, analysis goes on)."""
    return FileProblem(str(folder), "cannot list this folder: its files were skipped", fatal=False)


def roots_of(paths: Sequence[Path]) -> list[Path]:
    """Where includes are looked for besides the includer's folder: the folders given (each
    once: files of one folder, as a pre-commit hook passes them, give one root)."""
    return list(dict.fromkeys(p if p.is_dir() else p.parent for p in paths))


def _reached(
    origin: Path,
    roots: Sequence[Path],
    by_name: Mapping[str, list[Path]],
    unit_dirs: Sequence[Path],
) -> list[Path]:
    """Files `origin` includes, directly or through others (to MAX_INCLUDE_DEPTH), found in
    the raw bytes (a superset: includes in comments and in inactive #if arms count too):
    quoted ones as discovery resolves them, `<...>` ones in the compile command's -I
    folders `unit_dirs` (`#include <driver.hpp>` with `-Isrc`)."""
    out: list[Path] = []
    seen = {origin}
    frontier = [(origin, 0)]
    while frontier:
        current, depth = frontier.pop(0)
        if depth >= MAX_INCLUDE_DEPTH:
            continue
        facts = raw_facts(current)
        if not facts.readable:
            continue
        targets = [resolve_include(current, name, roots, by_name) for name in facts.quoted]
        targets += [resolve_angle_include(name, unit_dirs) for name in facts.angle]
        for target in targets:
            if target is not None and target not in seen:
                seen.add(target)
                out.append(target)
                frontier.append((target, depth + 1))
    return out


class _Indexers:
    """One `_Indexer` per distinct set of flags (the command line's, and each compile
    command's merged with them): a header included by units built with different -D is
    read once per set, as the compiler reads it once per unit."""

    def __init__(
        self,
        files: Sequence[Path],
        roots: Sequence[Path],
        defines: Mapping[str, str] | None,
        undefines: frozenset[str],
        database: CompileDatabase | None,
    ) -> None:
        self.defines = dict(defines or {})
        self.undefines = undefines
        self.roots = list(roots)
        self.by_name = files_by_name(files)
        self.database = database
        self.by_flags: dict[tuple, _Indexer] = {}
        #: listed file -> the compile command it is analysed with (its own or its includer's)
        self.unit_of: dict[Path, CompileUnit] = {}
        self.own_defines: dict[int, dict[str, str]] = {}
        self.base = self.for_unit(None)

    def for_unit(self, unit: CompileUnit | None) -> _Indexer:
        defined, undefined, own = unit_flags(unit, self.defines, self.undefines)
        dirs = unit.include_dirs if unit is not None else ()
        key = (frozenset(defined.items()), undefined, dirs)
        if key not in self.by_flags:
            indexer = _Indexer(defined, undefined)
            indexer.roots = [*self.roots, *dirs]
            indexer.by_name = self.by_name
            self.by_flags[key] = indexer
            self.own_defines[id(indexer)] = own
        return self.by_flags[key]

    def all(self) -> list[_Indexer]:
        return list(self.by_flags.values())

    def assign(self, files: Sequence[Path]) -> dict[Path, _Indexer]:
        """Each listed file's indexer: its compile command's; else that of the first unit
        (listing order) that includes it, directly or through headers (quoted includes of
        the raw text, as `partition` finds them: a header included only by a file without
        kernel markers still gets its flags); else the command line's."""
        if self.database is None:
            return {resolved(path): self.base for path in files}
        out: dict[Path, _Indexer] = {}
        units = [(path, self.database.unit_for(path)) for path in files]
        for path, unit in units:
            if unit is not None:
                out[resolved(path)] = self.for_unit(unit)
                self.unit_of[resolved(path)] = unit
        for path, unit in units:
            if unit is None:
                continue
            indexer = out[resolved(path)]
            reached = _reached(resolved(path), indexer.roots, self.by_name, unit.include_dirs)
            for header in reached:
                if header not in out:
                    out[header] = indexer
                    self.unit_of[header] = unit
        return {resolved(path): out.get(resolved(path), self.base) for path in files}

    def near(self, folder: Path, assigned: Mapping[Path, _Indexer]) -> list[FileIndex]:
        """Indices of the files in `folder`: a listed file's as its own indexer read it, a
        header's as the first indexer that read it."""
        indexers = self.all()
        if len(indexers) == 1:
            return [
                i for k, i in indexers[0].indices.items() if i is not None and k.parent == folder
            ]
        found: dict[Path, FileIndex] = {}
        for indexer in indexers:
            for key, index in indexer.indices.items():
                if index is None or key.parent != folder:
                    continue
                owner = assigned.get(key)
                if owner is None or owner.indices.get(key) is None:
                    owner = None  # a header no listed file owns: the first reading
                if indexer is owner or (owner is None and key not in found):
                    found[key] = index
        return list(found.values())

    def problems(self) -> list[FileProblem]:
        seen: dict[tuple[str, str], FileProblem] = {}
        for indexer in self.all():
            for problem in indexer.problems:
                seen.setdefault((problem.file, problem.message), problem)
        return list(seen.values())


def discover_files(
    files: Sequence[Path],
    roots: Sequence[Path],
    defines: Mapping[str, str] | None = None,
    undefines: frozenset[str] = frozenset(),
    database: CompileDatabase | None = None,
) -> DiscoveryResult:
    """All kernels in a listing of files (see `partition` for analysing one in parts)."""
    indexers = _Indexers(files, roots, defines, undefines, database)
    assigned = indexers.assign(files)
    result = DiscoveryResult(files=len(files))
    unparsed: set[Path] = set()  # listed files without kernel markers: host code only
    for path in files:
        if _may_hold_kernels(path):
            assigned[resolved(path)].index(path)
        else:
            unparsed.add(resolved(path))
    seen_kernels: set[tuple[Path, int, str]] = set()
    listed = frozenset(resolved(p) for p in files)
    launches_by_dir: dict[Path, cuda.LaunchMap] = {}

    calls_by_dir: dict[Path, CallSites] = {}

    def calls_near(path: Path) -> CallSites:
        """Plain calls in the region's folder: how its function's parameters are passed."""
        folder = resolved(path).parent
        if folder not in calls_by_dir:
            read = {key for indexer in indexers.all() for key in indexer.indices}
            hosts = [
                p for p in files if resolved(p).parent == folder and resolved(p) in unparsed - read
            ]
            calls_by_dir[folder] = CallSites(indexers.near(folder, assigned), hosts, host_index)
        return calls_by_dir[folder]

    def host_index(path: Path) -> FileIndex | None:
        """A host-only file parsed for its calls (rule D12); its problems stay unreported,
        as they were when it was not parsed at all."""
        indexer = assigned[resolved(path)]
        reported = len(indexer.problems)
        index = indexer.index(path)
        del indexer.problems[reported:]
        return index

    def launches_near(path: Path) -> cuda.LaunchMap:
        """Launch sites in the kernel's own folder: where its host code lives."""
        folder = resolved(path).parent
        if folder not in launches_by_dir:
            launches_by_dir[folder] = cuda.launch_map(indexers.near(folder, assigned))
        return launches_by_dir[folder]

    views: dict[Path, tuple[_Indexer, FileIndex, list[FileIndex]]] = {}
    for path in files:
        indexer = assigned[resolved(path)]
        index = indexer.indices.get(resolved(path))
        if index is not None:  # else unreadable, or no kernel markers (headers: when included)
            views[resolved(path)] = (indexer, index, indexer.visible(index, indexer.roots))
    unit_of_file = _includers(views)
    for path in files:
        if resolved(path) not in views or unit_of_file.get(resolved(path)) != resolved(path):
            continue  # a listed file another one includes: counted in its includer's context
        indexer, index, visible = views[resolved(path)]
        context = Context.merge(visible)
        found: list[KernelIR] = []
        # Kernels defined in included headers of the same tree belong to the analysis too,
        # and so do those of listed files this one includes (`#include "kernels.cu"`): they
        # see what the includer saw before them (its macros, types and headers).
        for source_index in visible:
            pasted = source_index.path.name in index.function_includes
            own = unit_of_file.get(resolved(source_index.path)) == resolved(path)
            if (
                source_index is not index
                and resolved(source_index.path) in listed
                and not pasted
                and not own
            ):
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
                openmp.regions_in(
                    source_index, context, owner, calls_near(source_index.path), index.grammar
                )
            )
        undefined_used = sorted(
            {n for i in visible for n in indexer.undefined_used.get(resolved(i.path), ())}
        )
        unit = indexers.unit_of.get(resolved(path))
        for kernel in found:
            kernel.undefined_macros = list(undefined_used)
            if unit is not None:
                kernel.build_defines = dict(indexers.own_defines[id(indexer)])
                kernel.compile_unit = unit.to_json()
                kernel.unit = unit
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
    result.problems[:0] = indexers.problems()
    result.kernels.sort(key=lambda k: (k.file, k.line))
    return result


def _includers(
    views: Mapping[Path, tuple[_Indexer, FileIndex, list[FileIndex]]],
) -> dict[Path, Path]:
    """Each listed file -> the listed file whose analysis counts its kernels: itself, or the
    first listed file (listing order) that includes it, followed up to a file no other one
    includes (a translation unit). Files that include each other count themselves."""
    first: dict[Path, Path] = {}
    for path, (_, _, visible) in views.items():
        for header in visible[1:]:
            key = resolved(header.path)
            if key in views and key != path:
                first.setdefault(key, path)
    out: dict[Path, Path] = {}
    for path in views:
        seen = {path}
        top = path
        while top in first and first[top] not in seen:
            top = first[top]
            seen.add(top)
        out[path] = top if top not in first else path  # a cycle: the file counts itself
    return out


def _may_hold_kernels(path: Path) -> bool:
    """Cheap byte scan: files without any kernel marker are parsed only if a kernel includes them.

    Unreadable files are let through so that their problem is reported."""
    if path.suffix.lower() in (".cu", ".cuh"):
        return True  # kernels may hide behind macros such as `#define GLOBAL __global__`
    facts = raw_facts(path)  # the bytes `partition` read, scanned once
    if not facts.readable or facts.marker or facts.binary:
        return True
    for include in facts.quoted:  # a region pasted in from a local header
        header = path.parent / include
        try:
            if header.is_file() and raw_facts(header).marker:
                return True
        except OSError:
            continue
    return False
