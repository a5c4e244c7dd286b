"""What a C expression's operators mean as sympy values: one set of semantics for the kernel
counter (device code) and host values (host code), so that `%`, unary minus, shifts, min/max
and `a + b - c` chains mean the same on both sides of a launch. Leaves (names, literals,
sizeof) are each side's own: they depend on its scopes."""

from __future__ import annotations

import sympy
import tree_sitter
from roofcast.analyzer.parsing import node_text, operator

#: calls valued as min/max of their two arguments
MINMAX_CALLS = ("min", "max", "umin", "umax", "fmin", "fmax")
_CHAINS = {"+": ("+", "-"), "-": ("+", "-"), "*": ("*",)}


def value_operands(node: tree_sitter.Node) -> tuple[tuple | None, list[tree_sitter.Node | None]]:
    """How `value` combines an operation's operands, and the operands; (None, []) when the
    operation has no integer value. A left-leaning chain `a + b - c + ...` (or `a * b * ...`)
    is one operation of all its operands: one sympy Add, however long the chain."""
    if node.type == "binary_expression":
        op = operator(node)
        chain = _CHAINS.get(op)
        if chain is not None:
            rights: list[tree_sitter.Node | None] = []
            signs: list[bool] = []
            left: tree_sitter.Node | None = node
            while left is not None and left.type == "binary_expression" and operator(left) in chain:
                rights.append(left.child_by_field_name("right"))
                signs.append(operator(left) != "-")
                left = left.child_by_field_name("left")
            rights.reverse()
            signs.reverse()
            how = ("mul",) if op == "*" else ("add", (True, *signs))
            return how, [left, *rights]
        if op in ("/", "<<", ">>", "%"):
            operands = [node.child_by_field_name("left"), node.child_by_field_name("right")]
            return ("binary", op), operands
        return None, []
    if node.type == "unary_expression":
        op = operator(node)
        if op not in ("+", "-"):
            return None, []
        return ("unary", op), [node.child_by_field_name("argument")]
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        fn = node_text(function).split("::")[-1] if function is not None else ""
        if fn in MINMAX_CALLS and args is not None and len(args.named_children) == 2:
            return ("min" if "min" in fn else "max",), list(args.named_children)
    return None, []


def apply_value(how: tuple, operands: list[sympy.Expr]) -> sympy.Expr | None:
    kind = how[0]
    try:
        if kind == "add":
            return sympy.Add(*(v if plus else -v for v, plus in zip(operands, how[1], strict=True)))
        if kind == "mul":
            return sympy.Mul(*operands)
        if kind == "unary":
            return -operands[0] if how[1] == "-" else operands[0]
        if kind in ("min", "max"):
            return sympy.Min(*operands) if kind == "min" else sympy.Max(*operands)
        a, b = operands
        op = how[1]
        if op == "/":
            return a / b if b != 0 else None
        if op == "<<":
            return a * 2**b
        if op == ">>":
            return a / 2**b
        if op == "%":
            return a % b if a.is_number and b.is_number and b != 0 else None
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return None
