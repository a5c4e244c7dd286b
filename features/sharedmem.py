"""Helpers that hand out shared memory: `T *s = SharedMemory<T>();`, `float *s = smem();`.

CUDA samples and many ports reach `extern __shared__` storage through a function, or a class
whose conversion operator returns it, because a template kernel cannot declare one extern
array per type. A pointer initialised from such a call points into shared memory, not DRAM.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

import tree_sitter
from roofcast.analyzer.parsing import captures, language, node_text

_SHARED = re.compile(r"\b__shared__\b")


@cache
def _class_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(
        language(grammar),
        "(struct_specifier name: (_) @name body: (_)) @class "
        "(class_specifier name: (_) @name body: (_)) @class",
    )


def callee_name(call: tree_sitter.Node) -> str:
    """The bare name a call reaches: `SharedMemory<T>()` -> SharedMemory, `ns::f()` -> f."""
    fn = call.child_by_field_name("function")
    if fn is None:
        return ""
    if fn.type == "template_function":
        fn = fn.child_by_field_name("name") or fn
    return node_text(fn).split("<")[0].split("::")[-1].strip()


def classes_returning_shared(roots: Iterable[tree_sitter.Node], grammar: str) -> set[str]:
    """Names of the classes (struct or class, templates and specialisations) in these trees
    whose body declares `__shared__` storage: the SharedMemory<T> idiom."""
    names: set[str] = set()
    query = _class_query(grammar)
    for root in roots:
        for node in captures(query, root).get("class", []):
            name = node.child_by_field_name("name")
            if name is not None and _SHARED.search(node_text(node)):
                names.add(node_text(name).split("<")[0].strip())
    return names


def function_returns_shared(definition: tree_sitter.Node) -> bool:
    """A function whose body declares `__shared__` storage and that returns a pointer."""
    type_node = definition.child_by_field_name("type")
    declarator = definition.child_by_field_name("declarator")
    returns_pointer = declarator is not None and declarator.type in (
        "pointer_declarator",
        "reference_declarator",
    )
    if type_node is not None and "auto" in node_text(type_node):
        returns_pointer = True
    return returns_pointer and bool(_SHARED.search(node_text(definition)))
