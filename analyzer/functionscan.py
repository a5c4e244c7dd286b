"""One query pass over a function for what discovery and counting both ask of it: the
functions it calls (the `__device__` call graph) and the names it assigns (which accesses a
loop changes). Kernels and the device functions they call are asked both: one tree walk."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import tree_sitter
from roofcast.analyzer.parsing import captures, language, node_text
from roofcast.analyzer.session import SessionNodeCache

_CALLEE_PATTERN = (
    "(call_expression function: [(identifier) (qualified_identifier) (template_function)] @callee)"
)
ASSIGNED_PATTERNS = """
(assignment_expression left: (identifier) @name)
(update_expression argument: (identifier) @name)
(init_declarator declarator: (identifier) @name)
(init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
(declaration declarator: (identifier) @name)
(declaration declarator: (array_declarator declarator: (identifier) @name))
"""


@cache
def _query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(language(grammar), _CALLEE_PATTERN + ASSIGNED_PATTERNS)


@dataclass(frozen=True)
class FunctionScan:
    callees: list[tree_sitter.Node]  # the called names' nodes, in source order
    assigned_starts: list[int]  # byte offsets of the assigned names, in source order
    assigned_names: list[str]


_SCANS = SessionNodeCache(512)


def scan_function(func: tree_sitter.Node, grammar: str) -> FunctionScan:
    """A `function_definition`'s calls and assigned names (computed once, then cached)."""

    def scan() -> FunctionScan:
        found = captures(_query(grammar), func)
        assigned = found.get("name", [])
        return FunctionScan(
            found.get("callee", []),
            [n.start_byte for n in assigned],
            [node_text(n) for n in assigned],
        )

    return _SCANS.get(func, scan, grammar)
