"""One query pass over a host function's body for every question host analysis asks of it.

Host analysis asks each function body that sizes or launches a kernel several questions,
each a tree-sitter query of its own (the definitions of its names, the calls given a name by
address, its `++`s, its allocations, its declarations). A query visits every node of the
body whatever its patterns, and the visit is most of its cost, so asking five questions cost
five walks of the body. The questions are asked here as one query: each module names its
patterns as a part (`BodyQueryPart`), the parts' capture names are kept apart by a prefix,
and a body is walked once for all of them, its captures kept for the current group of files
(`analyzer.session`). A part's captures are what its query alone would give.
"""

from __future__ import annotations

import re
from functools import cache

import tree_sitter
from roofcast.analyzer.parsing import captures, language
from roofcast.analyzer.session import SessionNodeCache

#: part name -> its patterns (the query text its module would run alone)
_PARTS: dict[str, str] = {}
_CAPTURE = re.compile(r"@([A-Za-z_][\w.]*)")
_FOUND = SessionNodeCache(512)


class BodyQueryPart:
    """One module's patterns in the shared body query, declared at module level."""

    __slots__ = ("prefix",)

    def __init__(self, name: str, patterns: str) -> None:
        if name in _PARTS and _PARTS[name] != patterns:
            raise ValueError(f"body query part {name!r} declared twice")
        _PARTS[name] = patterns
        _query.cache_clear()  # a part declared after a query was built: built again
        self.prefix = name + "."

    def captures(self, body: tree_sitter.Node, grammar: str) -> dict[str, list[tree_sitter.Node]]:
        """The part's captures in `body`, by its own capture names, in document order."""
        found = _FOUND.get(body, lambda: captures(_query(grammar), body), (grammar, len(_PARTS)))
        size = len(self.prefix)
        return {  # copies: a caller may sort or pop its lists
            name[size:]: list(nodes)
            for name, nodes in found.items()
            if name.startswith(self.prefix)
        }


@cache
def _query(grammar: str) -> tree_sitter.Query:
    """Every part's patterns, each capture (and predicate) renamed `part.capture`."""
    text = "\n".join(_CAPTURE.sub(rf"@{part}.\1", patterns) for part, patterns in _PARTS.items())
    return tree_sitter.Query(language(grammar), text)
