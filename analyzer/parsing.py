"""tree-sitter parsers, one per grammar, created once: parsing is the analyzer's floor cost."""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterator
from functools import cache
from operator import attrgetter
from typing import TypeVar

import tree_sitter
import tree_sitter_cpp
import tree_sitter_cuda
from roofcast.analyzer.session import SessionRecentTexts


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


def expression_node(text: str) -> tree_sitter.Node | None:
    """C expression text (a macro's body, a map section's length) parsed on its own: the
    initialiser of a declaration made for it. Parsed, never evaluated: the text is data."""
    tree = parse(f"int __roofcast_value = ({text});", "cpp")
    decl = tree.root_node.named_children[0] if tree.root_node.named_children else None
    init = None
    if decl is not None:
        for d in decl.children_by_field_name("declarator"):
            init = d.child_by_field_name("value")
    return init


_T = TypeVar("_T")


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
_RECENT_TREES: SessionRecentTexts[SharedTree] = SessionRecentTexts(2_000_000)


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
    # Each token's text is sliced out of the node's, copied out of the tree once (not once
    # per token); as a str when every byte is ASCII, where byte offsets are char offsets.
    data = node.text or b""
    base = node.start_byte
    text: str | bytes = data.decode("ascii") if data.isascii() else data
    tokens: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.child_count == 0 or current.type in ("string_literal", "char_literal"):
            if current.type != "comment":
                token = text[current.start_byte - base : current.end_byte - base]
                tokens.append(token if isinstance(token, str) else token.decode("utf-8", "replace"))
        else:
            stack.extend(reversed(current.children))
    return " ".join(tokens)


def operator(node: tree_sitter.Node) -> str:
    """An expression's operator token (`+`, `+=`, `++`, `&`): its node type is its text."""
    op = node.child_by_field_name("operator")
    return op.type if op is not None else ""


_Operand = tree_sitter.Node | None


def infix_parts(node: tree_sitter.Node) -> tuple[_Operand, str, _Operand]:
    """A binary or assignment expression's (left, operator, right). Read off its children
    when they are just those three (one C call; the fields are looked up by name, three calls
    whose cost grows with the name's place in the grammar's field list), else by field: a
    comment or an error among them."""
    children = node.children
    if len(children) == 3:
        first, middle, last = children
        if not middle.is_named and first.is_named and last.is_named:
            return first, middle.type, last
    op = node.child_by_field_name("operator")
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    return left, op.type if op is not None else "", right


def chained_comparisons(
    roots: list[tree_sitter.Node], chains: Collection[str]
) -> Iterator[tuple[str, tree_sitter.Node, tree_sitter.Node]]:
    """Each binary expression a condition's `chains` operators (`&&`, `||`) join, as
    (operator, left, right), left to right, through parentheses: what guards and thread
    shares read off an `if`. Walked with a stack, so any depth of chain is safe."""
    pending = list(roots)
    while pending:
        node = pending.pop()
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        if node.type != "binary_expression":
            continue
        op = operator(node)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            continue
        if op in chains:
            pending += [right, left]
            continue
        yield op, left, right


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


def enclosing_function(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The function definition around `node` (a call site's caller, a launch's host
    function); None at file level."""
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node
