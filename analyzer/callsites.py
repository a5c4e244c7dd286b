"""Plain call sites of a function (`f(...)`, `f<T>(...)`) over a folder's files, found on demand.

Host bindings ask for the callers of a handful of functions per folder; querying every call
expression of every file up front cost more than the rest of discovery in large host files.
A byte search for the name, then a check of the parse node found there, finds the same calls.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import tree_sitter
from roofcast.analyzer.index import FileIndex

CallSite = tuple[tree_sitter.Node, str]  # (call_expression node, grammar)


class CallSites:
    """Function name -> its plain call sites over the given files, in file then source order."""

    def __init__(self, indices: Sequence[FileIndex]) -> None:
        self.indices = list(indices)
        self.found: dict[str, list[CallSite]] = {}

    def get(self, name: str, default: list[CallSite] | None = None) -> list[CallSite]:
        if name not in self.found:
            self.found[name] = self._search(name)
        return self.found[name] or (default if default is not None else [])

    def _search(self, name: str) -> list[CallSite]:
        if not name.isidentifier():
            return []
        needle = name.encode()
        out: list[CallSite] = []
        for index in self.indices:
            source = index.source
            if needle not in source:  # most files of a folder never mention the name
                continue
            root = index.tree.root_node
            base = root.start_byte  # the source starts at the root's first token, not byte 0
            for start in _whole_words(source, needle):
                node = root.descendant_for_byte_range(base + start, base + start + len(needle))
                call = _call_of(node) if node is not None else None
                if call is not None:
                    out.append((call, index.grammar))
        return out


_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$")


def _whole_words(source: bytes, needle: bytes) -> Iterator[int]:
    """Offsets of `needle` where no identifier character touches it: a byte search (fast in
    C) visits only the name's occurrences, where a regex with a look-behind tried every byte."""
    size = len(needle)
    at = source.find(needle)
    while at >= 0:
        end = at + size
        if (at == 0 or source[at - 1] not in _WORD_BYTES) and (
            end == len(source) or source[end] not in _WORD_BYTES
        ):
            yield at
            at = source.find(needle, end)
        else:
            at = source.find(needle, at + 1)


def _call_of(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The call_expression that `node` (an identifier) names as its function, if any."""
    if node.type != "identifier":
        return None
    callee = node
    parent = node.parent
    if parent is not None and parent.type == "template_function":
        name = parent.child_by_field_name("name")
        if name is None or name.id != node.id:
            return None
        callee, parent = parent, parent.parent
    if parent is None or parent.type != "call_expression":
        return None
    function = parent.child_by_field_name("function")
    return parent if function is not None and function.id == callee.id else None
