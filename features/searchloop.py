"""A linear search: a counted loop that leaves as soon as an element it reads matches
(docs/counting.md C15).

`for (x = 0; x < n; x++) if (cdf[x] >= u) { index = x; break; }` stops at the first match.
With the match at a position spread evenly over the n elements (a sorted table searched for
a uniform draw, the usual case), the loop runs (n + 1) / 2 trips on average, not n: counting
the bound doubles every count in the loop.
"""

from __future__ import annotations

import tree_sitter
from roofcast.analyzer.parsing import node_text

#: statements that leave the loop at once
_EXITS = frozenset({"break_statement", "return_statement"})
_IGNORED = frozenset({"comment"})


def _statements(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """A body's statements (a braced block's, else the one statement)."""
    if node.type == "compound_statement":
        return [c for c in node.named_children if c.type not in _IGNORED]
    return [node]


def _reads_element_at(condition: tree_sitter.Node, counter: str) -> bool:
    """Whether the condition reads an array element whose index names the counter."""
    stack = [condition]
    while stack:
        node = stack.pop()
        if node.type == "subscript_expression":
            index = node.child_by_field_name("indices") or node.child_by_field_name("index")
            if index is not None and _names(index, counter):
                return True
        stack.extend(node.named_children)
    return False


def _names(node: tree_sitter.Node, name: str) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier" and node_text(current) == name:
            return True
        stack.extend(current.named_children)
    return False


def is_linear_search(loop: tree_sitter.Node, counter: str) -> bool:
    """C15: the loop's body is one `if` (no `else`) testing an element indexed by the
    counter, whose branch ends by leaving the loop (`break` or `return`)."""
    body = loop.child_by_field_name("body")
    if body is None:
        return False
    statements = _statements(body)
    if len(statements) != 1 or statements[0].type != "if_statement":
        return False
    test = statements[0]
    condition = test.child_by_field_name("condition")
    branch = test.child_by_field_name("consequence")
    if condition is None or branch is None or test.child_by_field_name("alternative"):
        return False
    taken = _statements(branch)
    if not taken or taken[-1].type not in _EXITS:
        return False
    return _reads_element_at(condition, counter)
