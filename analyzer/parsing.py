"""tree-sitter parsers, one per grammar, created once: parsing is the analyzer's floor cost."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import cache
from operator import attrgetter
from typing import Generic, TypeVar

import tree_sitter
import tree_sitter_cpp
import tree_sitter_cuda


@cache
def language(grammar: str) -> tree_sitter.Language:
    module = tree_sitter_cuda if grammar == "cuda" else tree_sitter_cpp
    return tree_sitter.Language(module.language())


@cache
def parser(grammar: str) -> tree_sitter.Parser:
    return tree_sitter.Parser(language(grammar))


def parse(text: str | bytes, grammar: str = "cuda") -> tree_sitter.Tree:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parser(grammar).parse(data)


_T = TypeVar("_T")


class RecentTexts(Generic[_T]):
    """Values computed from large texts, kept for the texts met last (bounded by their total
    size): benchmark suites keep the same header or source under several folders
    (`prog-cuda/`, `prog-hip/`), analysed one after the other, so a copy's work is reused."""

    def __init__(self, budget: int) -> None:
        self.budget = budget  # characters
        self.size = 0
        self.entries: OrderedDict[Hashable, tuple[int, _T]] = OrderedDict()

    def get(self, key: Hashable, size: int, compute: Callable[[], _T]) -> _T:
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
            return hit[1]
        value = compute()
        if size <= self.budget:
            self.entries[key] = (size, value)
            self.size += size
            while self.size > self.budget:
                self.size -= self.entries.popitem(last=False)[1][0]
        return value


class SharedTree:
    """A parse kept for a text met again soon, with what was derived from it: copies of a
    file share both (a tree is never modified, and neither is what is derived from it)."""

    def __init__(self, tree: tree_sitter.Tree) -> None:
        self.tree = tree
        self._derived: dict[Hashable, object] = {}

    def derived(self, key: Hashable, compute: Callable[[tree_sitter.Tree], _T]) -> _T:
        """`compute(tree)`, run once per key."""
        if key not in self._derived:
            self._derived[key] = compute(self.tree)
        return self._derived[key]  # type: ignore[return-value]


#: trees take about 20x their text in memory. Over HeCBench's src/, 2 MB of text (a copied
#: header of 1-2 MB fits) runs 1.5% fewer instructions than 1 MB for 24 MiB more peak memory;
#: 4 MB saves 0.2% more for 60 MiB more.
_RECENT_TREES: RecentTexts[SharedTree] = RecentTexts(2_000_000)


def parse_shared(text: str, grammar: str = "cuda") -> SharedTree:
    """`parse`, but a text met again soon is not parsed (or queried) again."""
    return _RECENT_TREES.get((grammar, text), len(text), lambda: SharedTree(parse(text, grammar)))


def node_text(node: tree_sitter.Node) -> str:
    text = node.text  # a property that copies the bytes: read it once
    return text.decode("utf-8", "replace") if text is not None else ""


def token_text(node: tree_sitter.Node) -> str:
    """The node's tokens joined by one blank: the same text however the source lays them out
    (`a[i+1]` and `a[i + 1]` name one element). Comments are left out; the walk is iterative."""
    if node.child_count == 0:
        return node_text(node)
    tokens: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.child_count == 0 or current.type in ("string_literal", "char_literal"):
            if current.type != "comment":
                tokens.append(node_text(current))
        else:
            stack.extend(reversed(current.children))
    return " ".join(tokens)


class NodeCache:
    """Values derived from a parse node alone (a function's parameters, the names a loop
    assigns), computed once although counting and host analysis ask again and again.

    An entry keeps its node, which keeps the node's tree alive, so the node id in a key
    cannot be reused by a later tree while the entry exists. Least recently used entries go."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.entries: OrderedDict[tuple, tuple[tree_sitter.Node, object]] = OrderedDict()
        _NODE_CACHES.add(self)

    def get(self, node: tree_sitter.Node, compute: Callable[[], _T], extra: Hashable = None) -> _T:
        key = (node.id, node.start_byte, node.end_byte, extra)
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
            return hit[1]  # type: ignore[return-value]
        value = compute()
        self.entries[key] = (node, value)
        if len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return value


_NODE_CACHES: weakref.WeakSet[NodeCache] = weakref.WeakSet()


def forget_nodes() -> None:
    """Empty every NodeCache: an analysed group's trees are never asked about again, and the
    entries would keep them (hundreds of MB over a large tree) alive."""
    for node_cache in _NODE_CACHES:
        node_cache.entries.clear()


def operator(node: tree_sitter.Node) -> str:
    """An expression's operator token (`+`, `+=`, `++`, `&`): its node type is its text."""
    op = node.child_by_field_name("operator")
    return op.type if op is not None else ""


_START = attrgetter("start_byte")
_END = attrgetter("end_byte")


def in_document_order(nodes: list[tree_sitter.Node]) -> list[tree_sitter.Node]:
    """`nodes`, sorted in place, by start, outer node first at a shared start (then as given):
    two stable sorts on C-level keys, not one on a Python key function called per node."""
    nodes.sort(key=_END, reverse=True)
    nodes.sort(key=_START)
    return nodes


def captures(query: tree_sitter.Query, node: tree_sitter.Node) -> dict[str, list[tree_sitter.Node]]:
    """Query captures by name, each list in document order (outer node first).

    py-tree-sitter's QueryCursor does not promise an order, and in practice it varies between
    processes; every consumer here relies on source order (call order, first definition wins).
    """
    found = tree_sitter.QueryCursor(query).captures(node)
    return {name: in_document_order(nodes) for name, nodes in found.items()}
