"""Plain call sites of a function (`f(...)`, `f<T>(...)`) over a folder's files, found on demand.

Host bindings ask for the callers of a handful of functions per folder; querying every call
expression of every file up front cost more than the rest of discovery in large host files.
A byte search for the name, then a check of the parse node found there, finds the same calls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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
        word = re.compile(rb"(?<![\w$])" + re.escape(needle) + rb"(?![\w$])")
        out: list[CallSite] = []
        for index in self.indices:
            if needle not in index.source:  # most files of a folder never mention the name
                continue
            root = index.tree.root_node
            base = root.start_byte  # the source starts at the root's first token, not byte 0
            for match in word.finditer(index.source):
                node = root.descendant_for_byte_range(base + match.start(), base + match.end())
                call = _call_of(node) if node is not None else None
                if call is not None:
                    out.append((call, index.grammar))
        return out


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
