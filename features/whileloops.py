"""The shape of a `while` / `do` loop that is really a counted loop (docs/counting.md C7).

Kernels often write a counted loop as `while (i < n) { ...; i += s; }`, `while (k--)` or
`do { ... } while (--k)`. Such a loop has the trip count of the `for` loop it spells out; this
module finds the counter, its test and its one update in the syntax tree. The values (the
counter's start, the bound, the step) are the lowering's: they depend on its scopes.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter
from roofcast.analyzer.parsing import node_text, operator

_COMPARISONS = ("<", "<=", ">", ">=", "!=")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
_UPDATES = ("update_expression", "assignment_expression")
_WRAPPERS = ("parenthesized_expression", "condition_clause")
#: nodes whose assignments are not the loop's own (a lambda's body runs elsewhere)
_OPAQUE = ("lambda_expression", "function_definition")


@dataclass(frozen=True)
class CountedTest:
    """A loop test `counter OP bound` (`bound` None: 0, as in `while (k)`), with the update
    of the counter when the test itself makes it (`k--`, `++i < n`); `pre`: the update comes
    before the comparison."""

    var: str
    op: str
    bound: tree_sitter.Node | None
    update: tree_sitter.Node | None = None
    pre: bool = False


def _bare(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The expression inside parentheses (and a `while`'s condition clause)."""
    while node is not None and node.type in _WRAPPERS and len(node.named_children) == 1:
        node = node.named_children[0]
    return node


def _counter(node: tree_sitter.Node | None) -> tuple[str, tree_sitter.Node | None, bool] | None:
    """`i` -> (i, None, False); `i++` / `--i` / `i >>= 1` -> (i, the update, whether the test
    sees the updated value)."""
    node = _bare(node)
    if node is None:
        return None
    if node.type == "identifier":
        return node_text(node), None, False
    if node.type == "update_expression":
        argument = _bare(node.child_by_field_name("argument"))
        if argument is None or argument.type != "identifier":
            return None
        pre = node.children[0].type in ("++", "--")
        return node_text(argument), node, pre
    if node.type == "assignment_expression" and operator(node) != "=":
        target = _bare(node.child_by_field_name("left"))  # `while (n >>= 1)`: tests the new n
        if target is None or target.type != "identifier":
            return None
        return node_text(target), node, True
    return None


def never_true(cond: tree_sitter.Node | None) -> bool:
    """Rule C13: a condition that is the constant false (`0`, `false`, `0u`): the
    `do { ... } while (0)` of a statement-like macro runs its body once."""
    node = _bare(cond)
    if node is None:
        return False
    if node.type == "false":
        return True
    text = node_text(node).lower().rstrip("ul")
    return node.type == "number_literal" and text in ("0", "0x0", "00")


def counted_tests(cond: tree_sitter.Node | None) -> list[CountedTest]:
    """The readings of a loop condition that is one test of a counter: a comparison of a
    name (or of its `++`/`--`) with an expression, either side, or a bare name or `k--`,
    which test against 0. A condition with `&&` / `||` has none: another term may end the
    loop on data (`it < 20 && err > tol` runs until converged), so its trips are unknown."""
    term = _bare(cond)
    if term is None:
        return []
    if term.type == "binary_expression" and operator(term) in _COMPARISONS:
        op = operator(term)
        left, right = term.child_by_field_name("left"), term.child_by_field_name("right")
        found: list[CountedTest] = []
        for side, other, how in ((left, right, op), (right, left, _FLIP[op])):
            counter = _counter(side)
            if counter is not None and other is not None:
                name, update, pre = counter
                found.append(CountedTest(name, how, other, update, pre))
        return found
    counter = _counter(term)
    if counter is None:
        return []
    name, update, pre = counter
    return [CountedTest(name, "!=", None, update, pre)]


def _target(node: tree_sitter.Node) -> str | None:
    """The name an update or assignment writes, when it is a plain name."""
    field = "argument" if node.type == "update_expression" else "left"
    target = _bare(node.child_by_field_name(field))
    return node_text(target) if target is not None and target.type == "identifier" else None


def counter_updates(body: tree_sitter.Node | None, var: str) -> list[tree_sitter.Node]:
    """Every update or assignment of `var` in a loop body (iteratively: bodies nest deep)."""
    found: list[tree_sitter.Node] = []
    pending = [body] if body is not None else []
    while pending:
        node = pending.pop()
        if node.type in _OPAQUE:
            continue
        if node.type in _UPDATES and _target(node) == var:
            found.append(node)
        pending.extend(reversed(node.named_children))
    return found


def _declared(node: tree_sitter.Node) -> set[str]:
    """The names a declaration introduces (`int a = 1, *p, b[4];`)."""
    out: set[str] = set()
    for declarator in node.children_by_field_name("declarator"):
        decl: tree_sitter.Node | None = declarator
        while decl is not None and decl.type != "identifier":
            decl = decl.child_by_field_name("declarator")
        if decl is not None:
            out.add(node_text(decl))
    return out


def rebinds(body: tree_sitter.Node | None, names: set[str]) -> set[str]:
    """Rule C12: the names of `names` that `body` assigns (`=`, `op=`, `++`, `--`) as the
    variables visible before it. A declaration inside the body (`unsigned idx =
    atomicAdd(...)` in a block, or in a macro's `do { ... } while (0)`) makes a new variable
    of that name, which the loop's condition cannot read: its writes, and the declaration
    itself, move nothing outside (iteratively: bodies nest deep)."""
    found: set[str] = set()
    pending: list[tuple[tree_sitter.Node, frozenset[str]]] = []
    if body is not None and names:
        pending.append((body, frozenset()))
    while pending:
        node, hidden = pending.pop()
        if node.type in _OPAQUE:
            continue
        if node.type in _UPDATES:
            name = _target(node)
            if name in names and name not in hidden:
                found.add(name)
        scoped = hidden
        for child in node.named_children:
            pending.append((child, scoped))
            if child.type == "declaration":  # hides the name from its later siblings
                scoped = scoped | _declared(child)
    return found


def runs_every_trip(update: tree_sitter.Node, body: tree_sitter.Node) -> bool:
    """Whether an update is a statement of the body itself (not under an `if` or an inner
    loop), so that it runs once per trip."""
    statement = update.parent
    if statement is None or statement.type != "expression_statement":
        return False
    if statement == body:
        return True
    return statement.parent == body and body.type == "compound_statement"


_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")


def continues(body: tree_sitter.Node | None) -> bool:
    """Whether the body has a `continue` of its own loop (one that may skip the update)."""
    pending = [body] if body is not None else []
    while pending:
        node = pending.pop()
        if node.type == "continue_statement":
            return True
        if node.type in _LOOPS or node.type in _OPAQUE:
            continue
        pending.extend(node.named_children)
    return False


def _tokens(node: tree_sitter.Node | None) -> str:
    node = _bare(node)
    return "".join(node_text(node).split()) if node is not None else ""


def clamp(node: tree_sitter.Node) -> tuple[str, tree_sitter.Node, tree_sitter.Node] | None:
    """`a < b ? a : b` -> ("min", a, b), `a < b ? b : a` -> ("max", a, b) (and mirrored for
    `>`): the `?:` spelling of a clamped bound; None for any other conditional."""
    test = _bare(node.child_by_field_name("condition"))
    chosen = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
    if test is None or test.type != "binary_expression" or None in chosen:
        return None
    op = operator(test)
    if op not in ("<", "<=", ">", ">="):
        return None
    left, right = test.child_by_field_name("left"), test.child_by_field_name("right")
    if left is None or right is None:
        return None
    sides = _tokens(left), _tokens(right)
    picks = _tokens(chosen[0]), _tokens(chosen[1])
    smaller_first = op in ("<", "<=")
    if picks == sides:  # the left operand when the test holds
        return ("min" if smaller_first else "max"), left, right
    if picks == sides[::-1]:
        return ("max" if smaller_first else "min"), left, right
    return None
