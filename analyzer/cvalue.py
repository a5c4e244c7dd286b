"""C expressions from users and sidecars (`-D N=1<<20`, `8*ceiling(n/256)`) as sympy values.

sympy's `sympify` and `parse_expr` evaluate Python: `-D "X=__import__('os').system(...)"` ran
a command. Here the strict C grammar of `analyzer.cexpr` is parsed and every sympy object
is built by hand (Integer, Float, Symbol, Add, Mul, a named function from an allowlist), so
text can only ever denote a number or a formula. Division of two integer constants truncates
toward zero as C does; with a symbol it is exact, as the counter treats sizes (`n/2`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import sympy
from roofcast.analyzer.cexpr import CExprError, Token, evaluate_text

MAX_BITS = 16384  # an integer beyond 2**MAX_BITS is no size: refused, not computed
MAX_SHIFT = 1024
MAX_COUNT = 1e18  # beyond any real kernel: a runaway symbolic product, clamped (and reported)

#: sizeof of the basic C and CUDA types (bytes, as on the 64-bit targets nvcc compiles for)
TYPE_SIZES: dict[str, int] = {
    "char": 1, "bool": 1, "short": 2, "int": 4, "unsigned": 4, "signed": 4, "float": 4,
    "long": 8, "double": 8, "size_t": 8, "ptrdiff_t": 8, "int8_t": 1, "uint8_t": 1,
    "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8,
    "half": 2, "__half": 2, "__nv_bfloat16": 2, "half2": 4, "__half2": 4,
    "float2": 8, "float3": 12, "float4": 16, "double2": 16, "double3": 24, "double4": 32,
    "int2": 8, "int3": 12, "int4": 16, "uint2": 8, "uint4": 16,
}  # fmt: skip
#: words that may appear in a type name besides a base type
_QUALIFIERS = frozenset({"const", "volatile", "unsigned", "signed", "long", "short"})

#: the functions a sidecar expression may call (sympy's names, as the counter prints them)
SIDECAR_FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    "ceiling": sympy.ceiling,
    "floor": sympy.floor,
    "log": sympy.log,
    "sqrt": sympy.sqrt,
    "Max": sympy.Max,
    "Min": sympy.Min,
}


def is_type_name(text: str) -> bool:
    """`double`, `unsigned int`, `const float *`: a type binding such as `-D T=double`."""
    words = text.replace("*", " ").split()
    return bool(words) and all(w in TYPE_SIZES or w in _QUALIFIERS for w in words)


def _integer(value: int) -> sympy.Integer:
    if value.bit_length() > MAX_BITS:
        raise CExprError(f"value out of range (beyond 2**{MAX_BITS})")
    return sympy.Integer(value)


class _SympySemantics:
    def __init__(
        self,
        symbols: Mapping[str, sympy.Symbol],
        functions: Mapping[str, Callable[..., sympy.Expr]],
    ) -> None:
        self.symbols = symbols
        self.functions = functions

    def number(self, token: Token) -> sympy.Expr:
        if token.kind == "float":  # a C double: what the compiler makes of the literal
            value = float(token.value)
            if not math.isfinite(value):
                raise CExprError(f"floating constant {token.text} out of range")
            return sympy.Float(value)
        return _integer(int(token.value))

    def name(self, token: Token) -> sympy.Expr:
        return self.symbols.get(token.text) or sympy.Symbol(token.text)

    def call(self, name: str, args: list[sympy.Expr]) -> sympy.Expr:
        function = self.functions.get(name)
        if function is None:
            raise CExprError(f"unknown function '{name}'")
        try:
            return function(*args)
        except TypeError:
            raise CExprError(f"wrong number of arguments to '{name}'") from None

    def sizeof(self, type_words: list[str]) -> sympy.Expr:
        if "*" in type_words:
            return sympy.Integer(8)
        for word in reversed(type_words):
            if word in TYPE_SIZES:
                return sympy.Integer(TYPE_SIZES[word])
        if type_words and set(type_words) <= _QUALIFIERS:
            return sympy.Integer(8 if "long" in type_words else 4)
        raise CExprError(f"sizeof of unknown type '{' '.join(type_words)}'")

    def boolean(self, value: bool) -> sympy.Expr:
        return sympy.Integer(int(value))

    def truth(self, value: sympy.Expr) -> bool:
        if not value.is_number:
            raise CExprError("a condition on a symbol")
        return bool(value != 0)

    def unary(self, op: str, operand: sympy.Expr) -> sympy.Expr:
        if op == "+":
            return operand
        if op == "-":
            return -operand
        if op == "!":
            return sympy.Integer(int(not self.truth(operand)))
        return _integer(~_int_of(operand, op))  # "~"

    def binary(self, op: str, left: sympy.Expr, right: sympy.Expr) -> sympy.Expr:
        if op == "+":
            return self._checked(left + right)
        if op == "-":
            return self._checked(left - right)
        if op == "*":
            return self._checked(left * right)
        if op == "/":
            if right.is_zero:
                raise CExprError("division by zero")
            if left.is_Integer and right.is_Integer:
                a, b = int(left), int(right)
                return sympy.Integer(abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1))
            return left / right
        if op in ("<<", ">>"):
            count = _int_of(right, op)
            if not 0 <= count <= MAX_SHIFT:
                raise CExprError(f"shift count {count} out of range")
            if left.is_Integer:
                value = int(left)
                return _integer(value << count if op == "<<" else value >> count)
            return left * 2**count if op == "<<" else left / 2**count
        if op in ("&&", "||"):
            a, b = self.truth(left), self.truth(right)
            return sympy.Integer(int(a and b if op == "&&" else a or b))
        if op in ("==", "!=", "<", ">", "<=", ">="):
            if not (left.is_number and right.is_number):
                raise CExprError(f"'{op}' on a symbol")
            a, b = left, right
            truth = {
                "==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b,
            }[op]  # fmt: skip
            return sympy.Integer(int(bool(truth)))
        a, b = _int_of(left, op), _int_of(right, op)
        if op == "%":
            if b == 0:
                raise CExprError("division by zero")
            return sympy.Integer(a - b * (abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)))
        return _integer({"&": a & b, "|": a | b, "^": a ^ b}[op])

    @staticmethod
    def _checked(value: sympy.Expr) -> sympy.Expr:
        if value.is_Integer and int(value).bit_length() > MAX_BITS:
            raise CExprError(f"value out of range (beyond 2**{MAX_BITS})")
        return value


def _int_of(value: sympy.Expr, op: str) -> int:
    if not value.is_Integer:
        raise CExprError(f"'{op}' needs integer constants")
    return int(value)


def parse_value(
    text: str,
    symbols: Mapping[str, sympy.Symbol] | None = None,
    functions: Mapping[str, Callable[..., sympy.Expr]] | None = None,
) -> sympy.Expr:
    """The sympy value of a C expression; identifiers are `symbols[name]` or plain symbols,
    `f(...)` calls only `functions`. Raises CExprError (a ValueError) on anything else."""
    semantics = _SympySemantics(symbols or {}, functions or {})
    return evaluate_text(text, semantics, calls=bool(functions), sizeof=True)
