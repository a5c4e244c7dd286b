"""Rule C11: a compressed-row range loop, `for (j = ptr[i]; j < ptr[i + 1]; j++)`.

Its trip count is data (C4), but over all rows its mean is exact: the rows' ranges tile the
indexed arrays, so the mean trip is (elements of the arrays indexed by `j`) / (elements of
`ptr` - 1). The sizes come from host code's allocations (D28), bound at resolve time; this
module only recognises the loop, syntactically.
"""

from __future__ import annotations

import tree_sitter
from roofcast.analyzer.parsing import node_text, operator

#: nodes of a loop body searched for the arrays its counter indexes, at most
MAX_BODY_NODES = 20000
#: enclosing blocks searched for a bound's local definition (`end = ptr[r + 1];`)
MAX_BLOCKS = 16


def csr_range(
    loop: tree_sitter.Node, starts: list[tuple[str, tree_sitter.Node | None]]
) -> tuple[str, str, tuple[str, ...]] | None:
    """(counter, the row pointer array, the arrays the body indexes by the counter) of a
    `for` loop whose counter runs from `ptr[e]` to `ptr[e + 1]` by one, directly or through
    locals defined before the loop; None for any other loop."""
    cond = loop.child_by_field_name("condition")
    update = loop.child_by_field_name("update")
    body = loop.child_by_field_name("body")
    if cond is None or update is None or body is None:
        return None
    cond = _bare(cond)
    if cond is None or cond.type != "binary_expression" or operator(cond) not in ("<", "!="):
        return None
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if left is None or right is None or left.type != "identifier":
        return None
    var = node_text(left)
    start = next((value for name, value in starts if name == var), None)
    if start is None or not _steps_by_one(update, var):
        return None
    low = _subscript(_defined(start, loop))
    high = _subscript(_defined(right, loop))
    if low is None or high is None or low[0] != high[0]:
        return None
    if high[1] not in (f"{low[1]}+1", f"1+{low[1]}", f"({low[1]})+1"):
        return None
    indexed = _indexed_by(body, var) - {low[0]}
    return (var, low[0], tuple(sorted(indexed))) if indexed else None


def _bare(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    while node is not None and node.type in ("parenthesized_expression", "condition_clause"):
        node = node.named_children[0] if node.named_children else None
    return node


def _steps_by_one(update: tree_sitter.Node, var: str) -> bool:
    text = "".join(node_text(update).split())
    return text in (f"{var}++", f"++{var}", f"{var}+=1", f"{var}={var}+1")


def _subscript(node: tree_sitter.Node | None) -> tuple[str, str] | None:
    """`ptr[e]` -> ("ptr", "e" without blanks)."""
    node = _bare(node)
    if node is None or node.type != "subscript_expression":
        return None
    array = node.child_by_field_name("argument")
    indices = node.child_by_field_name("indices")
    named = [c for c in indices.named_children if c.type != "comment"] if indices else []
    if array is None or array.type != "identifier" or len(named) != 1:
        return None
    return node_text(array), "".join(node_text(named[0]).split())


def _defined(node: tree_sitter.Node, loop: tree_sitter.Node) -> tree_sitter.Node | None:
    """`node` itself, or for a name, the value of its last definition in the blocks around
    the loop before it (`int end = ptr[r + 1];`)."""
    bare = _bare(node)
    if bare is None or bare.type != "identifier":
        return bare
    name = node_text(bare)
    child, block = loop, loop.parent
    for _ in range(MAX_BLOCKS):
        if block is None or block.type == "function_definition":
            return None
        if block.type == "compound_statement":
            for statement in reversed(block.named_children):
                if statement.start_byte >= child.start_byte:
                    continue
                value = _definition_in(statement, name)
                if value is not None:
                    return value
        child, block = block, block.parent
    return None


def _definition_in(statement: tree_sitter.Node, name: str) -> tree_sitter.Node | None:
    if statement.type == "declaration":
        for declarator in statement.children_by_field_name("declarator"):
            target = declarator.child_by_field_name("declarator")
            named = target is not None and node_text(target) == name
            if declarator.type == "init_declarator" and named:
                return declarator.child_by_field_name("value")
    if statement.type == "expression_statement" and statement.named_children:
        assignment = statement.named_children[0]
        if assignment.type == "assignment_expression" and operator(assignment) == "=":
            target = assignment.child_by_field_name("left")
            if target is not None and node_text(target) == name:
                return assignment.child_by_field_name("right")
    return None


def _indexed_by(body: tree_sitter.Node, var: str) -> set[str]:
    """Arrays the body indexes by the bare counter (`val[j]`, `col[j]`)."""
    found: set[str] = set()
    pending = [body]
    seen = 0
    while pending and seen < MAX_BODY_NODES:
        node = pending.pop()
        seen += 1
        if node.type == "subscript_expression":
            place = _subscript(node)
            if place is not None and place[1] == var:
                found.add(place[0])
        pending.extend(node.named_children)
    return found
