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
                    if kind is not None and _named(kind) and name.type == "type_identifier":
                        found[node_text(name)] = node_text(kind).split()
            elif node.type == "alias_declaration":
                alias = node.child_by_field_name("name")
                aliased = node.child_by_field_name("type")
                if alias is not None and aliased is not None and _named(aliased):
                    found[node_text(alias)] = node_text(aliased).split()
        return found

    return _ALIASES.get(root, collect)


#: type nodes an alias is followed through: a named scalar type, never a struct's body
_NAMED_TYPES = frozenset({"primitive_type", "sized_type_specifier", "type_identifier"})


def _named(kind: tree_sitter.Node | None) -> bool:
    """Whether an alias's type is a named type (`unsigned int`, `float2`, `U`); a struct,
    union or enum defined there (`typedef struct { double x, y; } T2;`) is not sized by its
    words, so it is not followed."""
    if kind is not None and kind.type == "type_descriptor":
        inner = kind.child_by_field_name("type")
        return (
            inner is not None and inner.type in _NAMED_TYPES and node_text(kind) == node_text(inner)
        )
    return kind is not None and kind.type in _NAMED_TYPES
