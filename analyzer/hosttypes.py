"""Rule D45: a type named by a file-level `typedef` or `using` alias, for `sizeof` in host code.

Benchmarks name their element type once (`typedef unsigned int T;`) and size buffers with
`sizeof(T)`; without the alias that size, and every host value over it, stays unknown.
"""

from __future__ import annotations

import tree_sitter
from roofcast.analyzer.parsing import node_text
from roofcast.analyzer.session import SessionNodeCache

#: aliases followed from one name (`typedef T1 T2;` chains), at most
MAX_ALIAS_LEVELS = 4

_ALIASES = SessionNodeCache(64)


def aliased_words(func: tree_sitter.Node, words: list[str]) -> list[str]:
    """`words` (a type as written, split) with a lone name that the file of `func` aliases
    at file level replaced by the aliased type's words, following chains; else as given."""
    aliases = file_aliases(func)
    for _ in range(MAX_ALIAS_LEVELS):
        if len(words) != 1 or words[0] not in aliases:
            break
        words = aliases[words[0]]
    return words


def file_aliases(func: tree_sitter.Node) -> dict[str, list[str]]:
    """name -> the words of its type, for the file-level `typedef X name;` and `using name =
    X;` of the file that holds `func` (the last one of a name)."""
    root = func
    while root.parent is not None:
        root = root.parent

    def collect() -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for node in root.named_children:
            if node.type == "type_definition":
                kind = node.child_by_field_name("type")
                for name in node.children_by_field_name("declarator"):
                    if kind is not None and name.type == "type_identifier":
                        found[node_text(name)] = node_text(kind).split()
            elif node.type == "alias_declaration":
                name = node.child_by_field_name("name")
                kind = node.child_by_field_name("type")
                if name is not None and kind is not None:
                    found[node_text(name)] = node_text(kind).split()
        return found

    return _ALIASES.get(root, collect)
