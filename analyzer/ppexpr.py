"""`#if` conditions evaluated as cpp does: macros expanded, `defined` answered, then intmax_t /
uintmax_t arithmetic with C's operators, conversions and short-circuits.

Python's `eval` on a filtered string accepted `9**9**9**9` (a hang); here `**` is a syntax
error and every step is bounded (tokens produced by expansion, parser depth). A condition
that cpp would reject or that we cannot know (a function-like macro, a compiler builtin's
value, division by zero) is undecidable: None, and the caller keeps its approximation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from roofcast.analyzer.cexpr import MAX_TOKENS, CExprError, Token, parse, tokenize

_BITS = 64
_MOD = 1 << _BITS
_SIGN = 1 << (_BITS - 1)


class Undecidable(Exception):
    """The condition's value cannot be known statically."""


#: how a name is known: "defined" (no known value), "undefined", "unknown" (undecidable)
NameStatus = Callable[[str], str]


@dataclass
class Condition:
    """A decided condition and the undefined macros whose absence it relied on."""

    value: bool | None
    undefined: list[str] = field(default_factory=list)


def _signed(value: int) -> int:
    value %= _MOD
    return value - _MOD if value >= _SIGN else value


class _IntSemantics:
    """Values are (int, unsigned): C's intmax_t and uintmax_t, wrapping at 64 bits."""

    def number(self, token: Token) -> tuple[int, bool]:
        if token.kind == "float":
            raise Undecidable("a floating constant in #if")
        value = int(token.value)
        if value >= _MOD:
            raise Undecidable("integer constant too large")
        return (value, True) if token.unsigned else (value, False)

    def name(self, token: Token) -> tuple[int, bool]:
        raise Undecidable(f"'{token.text}' left after expansion")  # the expander removes names

    def call(self, name: str, args: list[tuple[int, bool]]) -> tuple[int, bool]:
        raise Undecidable(name)

    def sizeof(self, type_words: list[str]) -> tuple[int, bool]:
        raise Undecidable("sizeof")

    def boolean(self, value: bool) -> tuple[int, bool]:
        return int(value), False

    def truth(self, value: tuple[int, bool]) -> bool:
        return value[0] != 0

    def unary(self, op: str, operand: tuple[int, bool]) -> tuple[int, bool]:
        value, unsigned = operand
        if op == "!":
            return int(value == 0), False
        result = {"+": value, "-": -value, "~": ~value}[op]
        return (result % _MOD, True) if unsigned else (_signed(result), False)

    def binary(self, op: str, left: tuple[int, bool], right: tuple[int, bool]) -> tuple[int, bool]:
        if op in ("&&", "||"):
            p, q = left[0] != 0, right[0] != 0
            return int(p and q if op == "&&" else p or q), False
        if op in ("<<", ">>"):  # the type is the left operand's, the count any integer
            count = right[0]
            if count < 0 or count >= _BITS:
                raise Undecidable("shift count out of range")
            value, unsigned = left
            shifted = value << count if op == "<<" else value >> count
            return (shifted % _MOD, True) if unsigned else (_signed(shifted), False)
        unsigned = left[1] or right[1]  # the usual arithmetic conversions
        a, b = (left[0] % _MOD, right[0] % _MOD) if unsigned else (left[0], right[0])
        if op in ("==", "!=", "<", ">", "<=", ">="):
            truth = {
                "==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b,
            }[op]  # fmt: skip
            return int(truth), False
        if op in ("/", "%"):
            if b == 0:
                raise Undecidable("division by zero")
            if not unsigned and a == -_SIGN and b == -1:
                raise Undecidable("overflow")
            quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # toward zero
            result = quotient if op == "/" else a - b * quotient
        else:
            result = {
                "+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b,
            }[op]  # fmt: skip
        return (result % _MOD, True) if unsigned else (_signed(result), False)


_SEMANTICS = _IntSemantics()


def is_reserved(name: str) -> bool:
    """Names the implementation owns (`__GNUC__`, `_M_X64`): a compiler may define them."""
    return name.startswith("__") or (len(name) > 1 and name[0] == "_" and name[1].isupper())


def _expand(
    tokens: list[Token],
    macros: Mapping[str, str],
    status: NameStatus,
    undefined: list[str],
) -> list[Token]:
    """The condition's tokens after macro expansion, `defined` answered and other names
    replaced by 0 (noted in `undefined`), as cpp does before evaluating. Iterative: a stack of
    token lists, a macro hidden while its own body is read; at most MAX_TOKENS produced."""
    out: list[Token] = []
    stack: list[tuple[list[Token], int, str | None]] = [(tokens, 0, None)]
    zero = Token("int", "0", 0)
    one = Token("int", "1", 1)

    def truth_of(name: str) -> Token:
        if name in macros:
            return one
        known = status(name)
        if known == "defined":
            return one
        if known == "undefined":
            return zero
        if known == "unknown" or is_reserved(name):
            raise Undecidable(name)
        undefined.append(name)
        return zero

    steps = 0
    while stack:
        steps += 1
        if steps > 4 * MAX_TOKENS:
            raise Undecidable("expansion too long")
        body, i, macro = stack.pop()
        if i >= len(body):
            continue
        token = body[i]
        stack.append((body, i + 1, macro))
        if token.kind != "name":
            if len(out) >= MAX_TOKENS:
                raise Undecidable("expansion too long")
            out.append(token)
            continue
        name = token.text
        if name == "defined":
            j = i + 1
            parenthesised = j < len(body) and body[j].text == "(" and body[j].kind == "op"
            j += parenthesised
            if j >= len(body) or body[j].kind != "name":
                raise Undecidable("malformed defined")
            target = body[j].text
            j += 1
            if parenthesised:
                if j >= len(body) or body[j].text != ")":
                    raise Undecidable("malformed defined")
                j += 1
            stack[-1] = (body, j, macro)
            out.append(truth_of(target))
            continue
        hidden = {m for _, _, m in stack}
        if name in macros and name not in hidden:
            value = macros[name]
            if value is None:
                raise Undecidable(f"function-like macro {name}")
            try:
                stack.append((tokenize(value), 0, name))
            except CExprError as exc:
                raise Undecidable(str(exc)) from None
            continue
        if name in ("true", "false"):  # C++: keywords, 1 and 0 in #if
            out.append(one if name == "true" else zero)
            continue
        known = status(name)
        if known == "undefined":
            out.append(zero)
            continue
        if known != "absent" or is_reserved(name):
            raise Undecidable(name)  # a builtin's value (__CUDA_ARCH__), or the compiler's
        undefined.append(name)
        out.append(zero)
    return out


def evaluate_condition(
    text: str, macros: Mapping[str, str | None], status: NameStatus
) -> Condition:
    """The truth of `#if text`: `macros` maps each defined macro to its body (None for a
    function-like one); `status(name)` says what is known of other names ("defined",
    "undefined", "unknown" or "absent")."""
    undefined: list[str] = []
    try:
        tokens = _expand(tokenize(text), macros, status, undefined)  # type: ignore[arg-type]
        value = parse(tokens, _SEMANTICS)
    except (Undecidable, CExprError):
        return Condition(None)
    return Condition(value[0] != 0, list(dict.fromkeys(undefined)))
