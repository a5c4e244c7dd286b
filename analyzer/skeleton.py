"""The index query's captures without walking most function bodies.

A tree-sitter query visits every node of the tree it runs on, and function bodies hold most
of them (78% of the nodes over HeCBench's sources), while what the index keeps from a body
is rare and starts with a token that a byte search finds. So the bodies of functions near
the top of the tree (a query that stops at a small depth finds them) are cut out of the
index query's byte ranges, and searched instead for `#` (macros, pragmas, includes), `<<<`
(launches), `typedef`, `using`, `struct` and `class`; a class defined in a body is queried
whole, so its members are indexed as anywhere else. Over HeCBench this halves the index's
query time and gives the same captures.

File-level declarations are matched by a query of their own, once per file: see
`FILE_LEVEL_PATTERN`.

Function definitions and file-level declarations are indexed where C++ allows them: one
that tree-sitter puts in another function's body (it accepts GCC's nested functions, and
misreads some code that way; C++ has none) is left out wherever it lies, unless it is a
member of a class defined there.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import tree_sitter
from roofcast.analyzer.parsing import captures, in_document_order, language

#: bodies of functions at most this deep are cut out (deeper ones cost more to find than to walk)
CUT_DEPTH = 2
#: nor are bodies of fewer nodes: a query call costs more than walking them
MIN_CUT_NODES = 64

_BODY_PATTERN = "(function_definition body: (compound_statement) @body)"

#: Not part of the index query run over byte ranges. A pattern rooted at the translation unit
#: starts a match at the root in every such query, and tree-sitter then visits each of the
#: root's children to try to continue it, wherever the range lies: with a query per cut body,
#: a file of N top-level items and N bodies cost N squared. Matched here once, and only at the
#: root (a start depth of 0), it visits the root's children once.
FILE_LEVEL_PATTERN = "(translation_unit (declaration) @global)"

#: token searched for in a cut-out body -> {its node type: (what must hold it, capture name)}
_ANCHORS: dict[bytes, dict[str, tuple[str, str]]] = {
    b"#": {
        "#define": ("preproc_def", "macro"),
        "preproc_directive": ("preproc_call", "pragma"),
        "#include": ("preproc_include", "include"),
    },
    b"<<<": {"<<<": ("kernel_call_syntax", "launch")},
    b"typedef": {"typedef": ("type_definition", "typedef")},
    b"using": {"using": ("alias_declaration", "alias")},
    b"struct": {"struct": ("struct_specifier", "struct")},
    b"class": {"class": ("class_specifier", "struct")},
}

#: captures that C++ allows only outside function bodies (but in classes defined there)
_SCOPED = ("function", "global")


@cache
def _body_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(language(grammar), _BODY_PATTERN)


@cache
def file_level_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(language(grammar), FILE_LEVEL_PATTERN)


def index_captures(
    query: tree_sitter.Query, tree: tree_sitter.Tree, grammar: str
) -> dict[str, list[tree_sitter.Node]]:
    """`captures(query, root)` for the index query (see the module docstring) with the file's
    declarations (`FILE_LEVEL_PATTERN`), in document order, less function definitions and
    file-level declarations inside function bodies."""
    root = tree.root_node
    cut = _bodies_to_cut(root, grammar)
    found: dict[str, dict[int, tree_sitter.Node]] = {}
    file_level = tree_sitter.QueryCursor(file_level_query(grammar))
    file_level.set_max_start_depth(0)
    _merge(found, file_level.captures(root).items())
    start = root.start_byte
    for body in [*cut, None]:
        stop = body.start_byte if body is not None else root.end_byte
        if stop > start:
            cursor = tree_sitter.QueryCursor(query)
            cursor.set_byte_range(start, stop)
            _merge(found, cursor.captures(root).items())
        if body is not None:
            start = body.end_byte
    for body in cut:
        _merge(found, _anchored(query, body).items())
    ordered = {name: in_document_order(list(nodes.values())) for name, nodes in found.items()}
    return _outside_bodies(ordered)


def _bodies_to_cut(root: tree_sitter.Node, grammar: str) -> list[tree_sitter.Node]:
    cursor = tree_sitter.QueryCursor(_body_query(grammar))
    cursor.set_max_start_depth(CUT_DEPTH)
    bodies = in_document_order(cursor.captures(root).get("body", []))
    cut: list[tree_sitter.Node] = []
    end = -1
    for body in bodies:
        if body.start_byte >= end and body.descendant_count >= MIN_CUT_NODES:
            cut.append(body)
            end = body.end_byte
    return cut


def _merge(
    found: dict[str, dict[int, tree_sitter.Node]],
    more: Iterable[tuple[str, list[tree_sitter.Node]]],
) -> None:
    """Add captures, each node once (a node spanning several byte ranges is met in each)."""
    for name, nodes in more:
        into = found.setdefault(name, {})
        for node in nodes:
            into[node.id] = node


def _anchored(
    query: tree_sitter.Query, body: tree_sitter.Node
) -> dict[str, list[tree_sitter.Node]]:
    """What the index query would capture in `body`, found from the tokens that start it."""
    data = body.text or b""
    offset = body.start_byte
    out: dict[str, list[tree_sitter.Node]] = {}
    for token, kinds in _ANCHORS.items():
        at = data.find(token)
        while at >= 0:
            node = body.descendant_for_byte_range(offset + at, offset + at + len(token))
            kind = kinds.get(node.type) if node is not None else None
            holder = node.parent if kind is not None and node is not None else None
            if holder is not None and kind is not None and holder.type == kind[0]:
                _add_anchored(query, holder, kind[1], out)
            at = data.find(token, at + len(token))
    return out


def _add_anchored(
    query: tree_sitter.Query,
    holder: tree_sitter.Node,
    name: str,
    out: dict[str, list[tree_sitter.Node]],
) -> None:
    if name == "include":
        path = holder.child_by_field_name("path")
        if path is not None and path.type == "string_literal":
            out.setdefault(name, []).append(path)
    elif name == "launch":
        call = holder.parent
        if call is not None and call.type == "call_expression":
            out.setdefault(name, []).append(call)
    elif name == "struct":
        body = holder.child_by_field_name("body")
        if body is not None and body.type == "field_declaration_list":
            for inner, nodes in captures(query, holder).items():  # the class and its members
                out.setdefault(inner, []).extend(nodes)
    else:
        out.setdefault(name, []).append(holder)


def _outside_bodies(
    found: dict[str, list[tree_sitter.Node]],
) -> dict[str, list[tree_sitter.Node]]:
    """Drop `_SCOPED` captures whose innermost enclosing function body or class body is a
    function body: one sweep in document order over the bodies the captures themselves hold."""
    events: list[tuple[int, int, str, tree_sitter.Node]] = []  # (start, -end, kind, node)
    for name in (*_SCOPED, "struct"):
        for node in found.get(name, []):
            if name != "struct":
                events.append((node.start_byte, -node.end_byte, name, node))
            body = node.child_by_field_name("body") if name != "global" else None
            if body is not None:
                kind = "function body" if name == "function" else "class body"
                events.append((body.start_byte, -body.end_byte, kind, body))
    events.sort(key=lambda event: event[:2])
    inside: set[int] = set()
    open_bodies: list[tuple[int, str]] = []  # (end byte, kind), innermost last
    for start, negative_end, kind, node in events:
        while open_bodies and open_bodies[-1][0] <= start:
            open_bodies.pop()
        if kind.endswith("body"):
            open_bodies.append((-negative_end, kind))
        elif open_bodies and open_bodies[-1][1] == "function body":
            inside.add(node.id)
    if not inside:
        return found
    return {
        name: [n for n in nodes if n.id not in inside] if name in _SCOPED else nodes
        for name, nodes in found.items()
    }
