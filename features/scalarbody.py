"""Which device functions count the same at every call of a kernel: bodies that only compute
with scalars (arithmetic, assignments to their own names, math builtins), no memory, loops,
branches or calls to other functions. Lowering walks such a body once per kernel and what
the walk depends on (its free names' types), and replays the counts at the other calls
(`KernelLowering.walk_inlined`): a body is otherwise walked again at every call site.

Decided from the syntax alone, by the node types the walk meets (a whitelist: anything else
makes the body ordinary); lowering checks at its first walk that nothing beyond counts and
work changed."""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter
from roofcast.analyzer.parsing import node_text
from roofcast.analyzer.session import SessionNodeCache
from roofcast.features import mathfuncs as mf
from roofcast.features.asynccopy import ASYNC_COPIES, WMMA_CALLS, asm_operand_values, cp_async
from roofcast.features.symbolic import BUILTIN_VECTORS

_LEAVES = frozenset(
    {
        "identifier",
        "number_literal",
        "char_literal",
        "true",
        "false",
        "string_literal",
        "sizeof_expression",
        "comment",
    }
)
_OPERATIONS = frozenset(
    {
        "parenthesized_expression",
        "binary_expression",
        "unary_expression",
        "conditional_expression",
        "comma_expression",
    }
)
#: bodies larger than this are not examined (their walk is recorded as a list of counts)
MAX_NODES = 4096
_SHAPES = SessionNodeCache(4096)  # function body -> its ScalarBody, or None


@dataclass(frozen=True)
class ScalarBody:
    """A body that computes with scalars only: how deep its walk can nest (statements and
    expressions together), every name it reads or writes, and the names it assigns."""

    height: int
    names: tuple[str, ...]
    assigned: frozenset[str]
    declares: bool  # has declarations (compile mode's clang types read them)


def scalar_body(body: tree_sitter.Node) -> ScalarBody | None:
    """The body's `ScalarBody`, or None when its walk could do anything but count."""
    return _SHAPES.get(body, lambda: _examine(body))


def _builtin_call(name: str) -> bool:
    """A call `_e_call_expression` counts from its name and argument types alone."""
    if mf.ATOMICS.match(name) or name in mf.BARRIERS or name in mf.LOADS or name in mf.STORES:
        return False
    if name in ASYNC_COPIES or name in WMMA_CALLS:
        return False
    known = (mf.SPECIAL, mf.FMA, mf.BASIC, mf.INT_INTRINSICS, mf.MINMAX, mf.FREE)
    return any(name in table for table in known) or mf.prefix_result(name) is not None


def _examine(body: tree_sitter.Node) -> ScalarBody | None:
    names: set[str] = set()
    assigned: set[str] = set()
    declares = False
    height = 0
    seen = 0
    stack: list[tuple[tree_sitter.Node, int, bool]] = [(body, 1, True)]  # (node, depth, stmt)
    while stack:
        node, depth, statement = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            return None
        height = max(height, depth)
        t = node.type
        below = depth + 1
        if statement:
            if t == "compound_statement":
                stack.extend((c, below, True) for c in node.named_children)
            elif t in ("expression_statement", "return_statement"):
                stack.extend((c, below, False) for c in node.named_children)
            elif t == "declaration":
                if "__shared__" in node_text(node).split("=")[0]:
                    return None
                declares = True
                for decl in node.children_by_field_name("declarator"):
                    if decl.type == "identifier":
                        names.add(node_text(decl))
                        continue
                    if decl.type != "init_declarator":
                        return None  # pointers, arrays, references: their own rules
                    inner = decl.child_by_field_name("declarator")
                    value = decl.child_by_field_name("value")
                    if inner is None or inner.type != "identifier":
                        return None
                    if value is None or value.type == "initializer_list":
                        return None
                    names.add(node_text(inner))
                    stack.append((value, below, False))
            elif t != "comment":
                return None
            continue
        if t in _LEAVES:
            if t == "identifier":
                names.add(node_text(node))
        elif t in _OPERATIONS:
            stack.extend((c, below, False) for c in node.named_children)
        elif t == "cast_expression":
            value = node.child_by_field_name("value")
            if value is not None:
                stack.append((value, below, False))
        elif t == "field_expression":
            base = node.child_by_field_name("argument")
            if base is None or node_text(base) not in BUILTIN_VECTORS:
                return None
        elif t in ("assignment_expression", "update_expression"):
            target = node.child_by_field_name(
                "left" if t == "assignment_expression" else "argument"
            )
            if target is None or target.type != "identifier":
                return None
            assigned.add(node_text(target))
            names.add(node_text(target))
            right = node.child_by_field_name("right")
            if right is not None:
                stack.append((right, below, False))
        elif t == "call_expression":
            function = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if function is None or function.type != "identifier":
                return None
            if not _builtin_call(node_text(function)):
                return None
            if args is not None:
                stack.extend((c, below, False) for c in args.named_children)
        elif t == "gnu_asm_expression":
            code = node.child_by_field_name("assembly_code")
            if cp_async(node_text(code) if code is not None else ""):
                return None
            stack.extend((value, below, False) for value in asm_operand_values(node))
        else:
            return None
    return ScalarBody(height, tuple(sorted(names)), frozenset(assigned), declares)
