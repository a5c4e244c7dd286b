"""Split a file listing into groups that can be analysed apart, in parallel, with the same result.

What a kernel's analysis reads besides its own file is (1) the headers it includes, resolved
as `includes.resolve_include` does, and (2) launch sites and call sites in its own folder.
So files are joined when they share a folder or when one includes the other (directly or
through headers outside the listing; a file's compile command's -I folders, `unit_dirs`,
are searched for its quoted and `<...>` includes and theirs, as discovery does). Groups
are the connected components: discovery over one group sees exactly what discovery over
the whole listing sees. The scan is a byte-level regex, cheap next to parsing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import networkx as nx
from roofcast.analyzer.includes import files_by_name, resolve_angle_include, resolve_include
from roofcast.analyzer.rawscan import raw_facts
from roofcast.analyzer.sources import resolved


def _includes(path: Path, angle: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(quoted, angle-bracket) include names of a file's raw bytes; angle ones if asked."""
    facts = raw_facts(path)  # read once: discovery asks the same file's bytes for markers
    return facts.quoted, facts.angle if angle else ()


def independent_groups(
    files: Sequence[Path],
    roots: Sequence[Path],
    unit_dirs: Callable[[Path], Sequence[Path]] | None = None,
) -> list[list[Path]]:
    """Connected components of `files` (listing order kept inside and across groups). The
    graph's nodes are resolved paths as strings: hashing a Path runs Python code, and the
    graph hashes its nodes a few hundred thousand times over a large tree."""
    keys = {path: resolved(path) for path in files}
    by_name = files_by_name(files)
    graph = nx.Graph()
    graph.add_nodes_from(os.fspath(key) for key in keys.values())
    first_in_folder: dict[str, str] = {}
    for key in keys.values():
        node = os.fspath(key)
        graph.add_edge(node, first_in_folder.setdefault(os.path.dirname(node), node))
    # (file, the -I folders its includes are searched in besides `roots`)
    frontier = [(key, tuple(unit_dirs(key)) if unit_dirs else ()) for key in keys.values()]
    scanned: set[tuple[Path, tuple[Path, ...]]] = set()
    while frontier:
        origin, extra = item = frontier.pop()
        if item in scanned:
            continue
        scanned.add(item)
        searched = [*roots, *extra] if extra else roots
        quoted, angle = _includes(origin, bool(extra))
        targets = [resolve_include(origin, include, searched, by_name) for include in quoted]
        targets += [resolve_angle_include(include, extra) for include in angle]
        for target in targets:
            if target is not None:
                graph.add_edge(os.fspath(origin), os.fspath(target))
                frontier.append((target, extra))  # headers outside the listing carry includes too
    order = {os.fspath(key): i for i, key in enumerate(keys.values())}
    originals = {os.fspath(key): path for path, key in keys.items()}
    groups = []
    for component in nx.connected_components(graph):
        listed = sorted((k for k in component if k in order), key=order.__getitem__)
        if listed:
            groups.append([originals[k] for k in listed])
    return sorted(groups, key=lambda group: order[os.fspath(keys[group[0]])])
