"""Problem sizes from host code: what a kernel argument is at its launch or call site.

`saxpy<<<g, b>>>(n, ...)` with `int n = atoi(argv[1]) * 2;` binds the kernel's parameter to
`2*argv_1`; the program's command line (a manifest's exe_args, or none) then gives numbers.
Only simple straight-line definitions are followed: a declaration or assignment before the
call, constants, casts, arithmetic, sizeof and the C conversions of argv.
"""

from __future__ import annotations

import re
from functools import cache

import sympy
import tree_sitter
from roofcast.analyzer.parsing import language, node_text

MAX_DEPTH = 6
_ARGV_CALLS = {
    "atoi",
    "atol",
    "atoll",
    "atof",
    "stoi",
    "stol",
    "stoll",
    "stoul",
    "stoull",
    "strtol",
    "strtoul",
    "strtoll",
    "strtoull",
    "strtod",
    "stof",
    "stod",
}
_SIZES = {
    "char": 1,
    "short": 2,
    "int": 4,
    "unsigned": 4,
    "float": 4,
    "long": 8,
    "double": 8,
    "size_t": 8,
    "int64_t": 8,
    "uint64_t": 8,
    "int32_t": 4,
    "uint32_t": 4,
    "half": 2,
    "__half": 2,
    "float2": 8,
    "float4": 16,
    "double2": 16,
    "int2": 8,
    "int4": 16,
}


def argv_symbol(k: int) -> sympy.Symbol:
    return sympy.Symbol(f"argv_{k}", positive=True)


@cache
def _defs_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(
        language(grammar),
        """
(init_declarator declarator: (identifier) @name value: (_) @value)
(assignment_expression left: (identifier) @name operator: "=" right: (_) @value)
""",
    )


class HostScope:
    """Definitions of one host function, searched backwards from a call."""

    def __init__(self, func: tree_sitter.Node, grammar: str) -> None:
        self.func = func
        self.defs: dict[str, list[tuple[int, tree_sitter.Node]]] = {}
        body = func.child_by_field_name("body")
        if body is None:
            return
        for _, caps in tree_sitter.QueryCursor(_defs_query(grammar)).matches(body):
            name, value = caps.get("name"), caps.get("value")
            if name and value:
                self.defs.setdefault(node_text(name[0]), []).append((value[0].start_byte, value[0]))

    def value(
        self, node: tree_sitter.Node | None, before: int, depth: int = 0
    ) -> sympy.Expr | None:
        if node is None or depth > MAX_DEPTH:
            return None
        t = node.type
        if t == "number_literal":
            text = node_text(node).rstrip("uUlLfF")
            try:
                number = (
                    float(int(text, 0))
                    if re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", text)
                    else float(text)
                )
            except ValueError:
                return None
            return sympy.Integer(int(number)) if number.is_integer() else sympy.Float(number)
        if t in ("parenthesized_expression",) and node.named_children:
            return self.value(node.named_children[0], before, depth)
        if t == "cast_expression":
            return self.value(node.child_by_field_name("value"), before, depth)
        if t == "identifier":
            name = node_text(node)
            earlier = [v for start, v in self.defs.get(name, []) if start < before]
            if earlier:
                return self.value(earlier[-1], earlier[-1].start_byte, depth + 1)
            return None
        if t == "sizeof_expression":
            inner = node.child_by_field_name("type") or node.child_by_field_name("value")
            words = node_text(inner).replace("*", " * ").split() if inner is not None else []
            if "*" in words:
                return sympy.Integer(8)
            for word in reversed(words):
                if word in _SIZES:
                    return sympy.Integer(_SIZES[word])
            return None
        if t == "binary_expression":
            a = self.value(node.child_by_field_name("left"), before, depth + 1)
            b = self.value(node.child_by_field_name("right"), before, depth + 1)
            if a is None or b is None:
                return None
            op = node_text(node.child_by_field_name("operator"))
            ops = {
                "+": lambda: a + b,
                "-": lambda: a - b,
                "*": lambda: a * b,
                "/": lambda: a / b if b != 0 else None,
                "<<": lambda: a * 2**b,
                ">>": lambda: a / 2**b,
            }
            return ops[op]() if op in ops else None
        if t == "call_expression":
            fn = node_text(node.child_by_field_name("function")).split("::")[-1]
            args = node.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if fn in _ARGV_CALLS and first is not None:
                match = re.fullmatch(r"argv\s*\[\s*(\d+)\s*\]", node_text(first))
                return argv_symbol(int(match.group(1))) if match else None
            if (
                fn in ("min", "max", "std::min", "std::max")
                and args is not None
                and len(args.named_children) == 2
            ):
                a, b = (self.value(c, before, depth + 1) for c in args.named_children)
                if a is not None and b is not None:
                    return sympy.Min(a, b) if fn.endswith("min") else sympy.Max(a, b)
            return None
        return None


def bind_call(
    params: list[str], args: list[tree_sitter.Node], caller: tree_sitter.Node, grammar: str, at: int
) -> dict[str, str]:
    """Kernel/function parameter -> its value at this call, as a sympy expression string."""
    scope = HostScope(caller, grammar)
    out: dict[str, str] = {}
    for name, arg in zip(params, args, strict=False):
        if not name:
            continue
        value = scope.value(arg, at)
        if value is not None:
            out[name] = str(value)
    return out


def exe_arg_values(exe_args: str) -> dict[str, float]:
    """`4096 10 data.bin` -> {argv_1: 4096, argv_2: 10} (numeric arguments only)."""
    values: dict[str, float] = {}
    for k, token in enumerate(exe_args.split(), start=1):
        try:
            values[f"argv_{k}"] = float(token)
        except ValueError:
            continue
    return values
