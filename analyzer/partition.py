"""Split a file listing into groups that can be analysed apart, in parallel, with the same result.

What a kernel's analysis reads besides its own file is (1) the headers it includes, resolved
as `includes.resolve_include` does, and (2) launch sites and call sites in its own folder.
So files are joined when they share a folder or when one includes the other (directly or
through headers outside the listing). Groups are the connected components: discovery over
one group sees exactly what discovery over the whole listing sees. The scan is a byte-level
regex, cheap next to parsing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import networkx as nx
from roofcast.analyzer.includes import files_by_name, quoted_includes, resolve_include
from roofcast.analyzer.sources import resolved


def _quoted_includes(path: Path) -> list[str]:
    try:
        return quoted_includes(path.read_bytes())
    except OSError:
        return []


def independent_groups(files: Sequence[Path], roots: Sequence[Path]) -> list[list[Path]]:
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
    frontier = list(keys.values())
    scanned: set[Path] = set()
    while frontier:
        origin = frontier.pop()
        if origin in scanned:
            continue
        scanned.add(origin)
        for include in _quoted_includes(origin):
            target = resolve_include(origin, include, roots, by_name)
            if target is not None:
                graph.add_edge(os.fspath(origin), os.fspath(target))
                frontier.append(target)  # headers outside the listing carry includes too
    order = {os.fspath(key): i for i, key in enumerate(keys.values())}
    originals = {os.fspath(key): path for path, key in keys.items()}
    groups = []
    for component in nx.connected_components(graph):
        listed = sorted((k for k in component if k in order), key=order.__getitem__)
        if listed:
            groups.append([originals[k] for k in listed])
    return sorted(groups, key=lambda group: order[os.fspath(keys[group[0]])])
