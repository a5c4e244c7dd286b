"""What a C expression's operators mean as sympy values: one set of semantics for the kernel
counter (device code) and host values (host code), so that `%`, unary minus, shifts, min/max
and `a + b - c` chains mean the same on both sides of a launch. Leaves (names, literals,
sizeof) are each side's own: they depend on its scopes."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import sympy
import tree_sitter
from roofcast.analyzer.parsing import infix_parts, node_text, operator

#: calls valued as min/max of their two arguments
MINMAX_CALLS = ("min", "max", "umin", "umax", "fmin", "fmax")
_CHAINS = {"+": ("+", "-"), "-": ("+", "-"), "*": ("*",)}


def value_operands(node: tree_sitter.Node) -> tuple[tuple | None, list[tree_sitter.Node | None]]:
    """How `value` combines an operation's operands, and the operands; (None, []) when the
    operation has no integer value. A left-leaning chain `a + b - c + ...` (or `a * b * ...`)
    is one operation of all its operands: one sympy Add, however long the chain."""
    if node.type == "binary_expression":
        left, op, right = infix_parts(node)
        chain = _CHAINS.get(op)
        if chain is not None:
            rights: list[tree_sitter.Node | None] = []
            signs: list[bool] = []
            link = op  # the operator of the chain's link at hand, read once per link
            while True:
                rights.append(right)
                signs.append(link != "-")
                if left is None or left.type != "binary_expression":
                    break
                inner_left, link, inner_right = infix_parts(left)
                if link not in chain:
                    break
                left, right = inner_left, inner_right
            rights.reverse()
            signs.reverse()
            how = ("mul",) if op == "*" else ("add", (True, *signs))
            return how, [left, *rights]
        if op in ("/", "<<", ">>", "%", "&"):
            return ("binary", op), [left, right]
        return None, []
    if node.type == "unary_expression":
        op = operator(node)
        if op not in ("+", "-", "~"):
            return None, []
        return ("unary", op), [node.child_by_field_name("argument")]
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        fn = node_text(function).split("::")[-1] if function is not None else ""
        if fn in MINMAX_CALLS and args is not None and len(args.named_children) == 2:
            return ("min" if "min" in fn else "max",), list(args.named_children)
    return None, []


@lru_cache(maxsize=4096, typed=True)
def extremum(kind: str, *operands: sympy.Expr) -> sympy.Expr:
    """`sympy.Min` (kind "min") or `sympy.Max` of the operands. Kept: neither is in sympy's
    own cache, and their evaluation asks costly assumptions again for each copy of a
    kernel or host value. Keyed by sympy's structural equality, as sympy's cache is."""
    return sympy.Min(*operands) if kind == "min" else sympy.Max(*operands)


@lru_cache(maxsize=4096, typed=True)
def piecewise(
    yes: sympy.Expr,
    relation: Callable[[sympy.Expr, sympy.Expr], sympy.Basic],
    left: sympy.Expr,
    right: sympy.Expr,
    no: sympy.Expr,
) -> sympy.Expr:
    """`yes` where `relation(left, right)` holds, else `no`: sympy's Piecewise, kept as
    `extremum` is (not in sympy's cache, costly to evaluate, built again for each launch of
    a host function). Raises what Piecewise raises (not kept)."""
    return sympy.Piecewise((yes, relation(left, right)), (no, True))


def apply_value(how: tuple, operands: list[sympy.Expr]) -> sympy.Expr | None:
    kind = how[0]
    try:
        if kind == "add":
            return sympy.Add(*(v if plus else -v for v, plus in zip(operands, how[1], strict=True)))
        if kind == "mul":
            return sympy.Mul(*operands)
        if kind == "unary":
            if how[1] == "~":  # of an integer constant only (`~255`, an align-down mask)
                return sympy.Integer(~int(operands[0])) if operands[0].is_Integer else None
            return -operands[0] if how[1] == "-" else operands[0]
        if kind in ("min", "max"):
            return extremum(kind, *operands)
        a, b = operands
        op = how[1]
        if op == "/":
            if b == 0:
                return None
            if a.is_Integer and b.is_Integer:  # C's integer division truncates toward zero
                quotient = abs(int(a)) // abs(int(b))
                return sympy.Integer(quotient if (a < 0) == (b < 0) else -quotient)
            return a / b
        if op == "<<":
            return a * 2**b
        if op == ">>":
            return a / 2**b
        if op == "%":
            return a % b if a.is_number and b.is_number and b != 0 else None
        if op == "&":
            return _bitwise_and(a, b)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return None


def _bitwise_and(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    """`a & b` of integers; with one side a constant mask that clears the low k bits
    (`& 0xffffff00`, `& ~255`: an align-down, as programs round a size to a multiple),
    `floor(x / 2**k) * 2**k`, exact for a non-negative 32- or 64-bit `x`; else unknown."""
    if a.is_Integer and b.is_Integer:
        return sympy.Integer(int(a) & int(b))
    mask, x = (b, a) if b.is_Integer else (a, b)
    if not mask.is_Integer:
        return None
    low = _cleared_low_bits(int(mask))
    if low is None:
        return None
    return sympy.floor(x / low) * low


def _cleared_low_bits(mask: int) -> int | None:
    """2**k when `mask` is all ones above bit k (in 32 or 64 bits, or as a negative `~(2**k-1)`)."""
    for width in (32, 64):
        if 0 < mask < 1 << width:
            step = (1 << width) - mask
            break
    else:
        step = -mask
    if step <= 0 or step & (step - 1):
        return None
    return step


#: rule D10: calls valued through one-line functions, nested at most this deep
MAX_VALUE_CALLS = 4


def single_return(func: tree_sitter.Node) -> tree_sitter.Node | None:
    """The expression of a function whose body is one `return e;` (`iDivUp`, `divup`,
    `iAlignDown`): such a call is valued as `e` with its parameters bound (rule D10)."""
    body = func.child_by_field_name("body")
    if body is None:
        return None
    statements = [c for c in body.named_children if c.type != "comment"]
    if len(statements) != 1 or statements[0].type != "return_statement":
        return None
    returned = [c for c in statements[0].named_children if c.type != "comment"]
    return returned[0] if len(returned) == 1 else None


def call_parts(call: tree_sitter.Node) -> tuple[str, list[tree_sitter.Node]]:
    """`ns::f(a, b)` -> ("f", [a, b])."""
    function = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    name = node_text(function).split("::")[-1].strip() if function is not None else ""
    return name, [a for a in args.named_children if a.type != "comment"] if args else []
