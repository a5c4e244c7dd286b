"""Host values that C's library computes from values host code already shows: a rounding
call of a number (`ceilf(size / 128.0)`, rule D36) and the length of a command-line word
(`std::string(argv[2]).length()`, `strlen(argv[1])`, rule D37). Both are what the program
computes before a launch, so a kernel argument over them is as known as the numbers are."""

from __future__ import annotations

import re

import sympy
import tree_sitter
from roofcast.analyzer.parsing import node_text, operator

#: rule D36: C's (and C++'s `std::`) rounding functions of one argument
_ROUNDING = {
    "ceil": sympy.ceiling,
    "ceilf": sympy.ceiling,
    "ceill": sympy.ceiling,
    "floor": sympy.floor,
    "floorf": sympy.floor,
    "floorl": sympy.floor,
}

#: rule D37: the length of the program's k-th word, bound from its command line (`$` keeps
#: it apart from any C name)
ARGV_LENGTH = "argvlen$"

_ARGV_WORD = re.compile(
    r"(?:(?:std\s*::\s*)?string\s*)?(?:\(\s*argv\s*\[\s*(\d+)\s*\]\s*\)"
    r"|\{\s*argv\s*\[\s*(\d+)\s*\]\s*\})"
    r"|argv\s*\[\s*(\d+)\s*\]"
)
_LENGTH_METHODS = ("length", "size")


def rounding(function: str) -> bool:
    """Whether `function` (as written, `std::ceil` included) is one of C's rounding calls."""
    return function.split("::")[-1].strip() in _ROUNDING


def rounded(function: str, value: sympy.Expr) -> sympy.Expr | None:
    """Rule D36: `ceil(value)` / `floor(value)`; a symbol's division is exact (rule D1), so
    `ceil(n / 128)` is whole where `n` is a multiple of 128 and rounds up otherwise."""
    how = _ROUNDING.get(function.split("::")[-1].strip())
    if how is None:
        return None
    try:
        return how(value)
    except (TypeError, ValueError):
        return None


_FLOATING = re.compile(r"(\d+\.\d*|\.\d+|\d+[eE][+-]?\d+|\d+\.?\d*[eE][+-]?\d+)[fFlL]?|\d+[fF]")
_FLOAT_CASTS = ("float", "double")


def floating_quotient(
    node: tree_sitter.Node,
) -> tuple[tree_sitter.Node, tree_sitter.Node] | None:
    """Rule D36: the operands of `a / b` when C divides it in floating point (an operand is a
    floating literal, `128.0f`, or a cast to `float`/`double`), so that `ceil(1000 / 128.0)`
    rounds 7.8125 up and not C's integer quotient 7; None for any other node."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node.type != "binary_expression" or operator(node) != "/":
        return None
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    if left is None or right is None:
        return None
    for side in (left, right):
        if side.type == "number_literal" and _FLOATING.fullmatch(node_text(side)):
            return left, right
        kind = side.child_by_field_name("type") if side.type == "cast_expression" else None
        if kind is not None and node_text(kind).split()[-1] in _FLOAT_CASTS:
            return left, right
    return None


def argv_length_symbol(k: int) -> sympy.Symbol:
    """The length in bytes of the program's k-th word (rule D37)."""
    return sympy.Symbol(f"{ARGV_LENGTH}{k}", positive=True)


def argv_word(text: str) -> int | None:
    """`argv[2]`, `std::string(argv[2])`, a list's `{argv[2]}` -> 2, else None."""
    match = _ARGV_WORD.fullmatch(text.strip())
    if match is None:
        return None
    return int(next(group for group in match.groups() if group))


def length_method(method: str) -> bool:
    """Whether `method` is std::string's `length()` or `size()`."""
    return method in _LENGTH_METHODS


def argv_lengths(words: list[str]) -> dict[str, float]:
    """Rule D37: each command-line word's length in bytes (UTF-8), by its place (1 first)."""
    return {f"{ARGV_LENGTH}{k}": float(len(w.encode())) for k, w in enumerate(words, start=1)}
