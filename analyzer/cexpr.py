"""A strict parser of C expressions, shared by `#if` conditions and user-given values.

Text from the command line, a sidecar or a source file is data: it is tokenized against C's
own grammar (numbers with their suffixes, character literals, identifiers, C operators) and
parsed by precedence climbing; what an expression *means* is left to a `Semantics` (machine
integers for the preprocessor, sympy expressions for sizes). Nothing is ever evaluated as
Python. Work is bounded: at most `MAX_TOKENS` tokens and `MAX_DEPTH` nested parser calls, so
deep nesting is a `CExprError`, never a RecursionError.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, cast

MAX_TOKENS = 4096
MAX_DEPTH = 200  # recursive parser calls, well inside Python's own limit
MAX_NUMBER_CHARS = 128  # a literal longer than this is not a size anybody means

V = TypeVar("V")


class CExprError(ValueError):
    """Text that is not an expression of the accepted grammar (message fit for a user)."""


@dataclass(frozen=True)
class Token:
    """One C token: kind is 'int', 'float', 'char', 'name' or 'op'."""

    kind: str
    text: str
    value: int | str = 0  # int and char: the value; float: the text without its suffix
    unsigned: bool = False  # an integer literal with a `u` suffix, or one too big for intmax_t


# A preprocessing number (C's pp-number), classified strictly afterwards.
_PP_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.])*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CHAR = re.compile(r"(?:u8|u|U|L)?'((?:\\.|[^'\\\n])+)'")
_OPERATORS = (
    "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
    "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##",
    "(", ")", "[", "]", "{", "}", "?", ":", ",", "!", "~", "+", "-", "*", "/", "%",
    "<", ">", "&", "^", "|", "=", ";", ".", "#",
)  # fmt: skip
_INT_SUFFIX = re.compile(r"(?:[uU](?:ll|LL|[lLzZ])?|(?:ll|LL|[lLzZ])[uU]?)?")
_DECIMAL_INT = re.compile(r"([1-9][0-9]*|0)")
_HEX_INT = re.compile(r"0[xX]([0-9a-fA-F]+)")
_BINARY_INT = re.compile(r"0[bB]([01]+)")
_OCTAL_INT = re.compile(r"0([0-7]+)")
_FLOAT = re.compile(
    r"((?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)[fFlL]?"
)
_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92,
            "'": 39, '"': 34, "?": 63, "e": 27}  # fmt: skip
_INTMAX = 2**63 - 1


def _number_token(text: str) -> Token:
    if len(text) > MAX_NUMBER_CHARS:
        raise CExprError(f"number too long: '{text[:20]}...'")
    for pattern, base in ((_HEX_INT, 16), (_BINARY_INT, 2), (_OCTAL_INT, 8), (_DECIMAL_INT, 10)):
        match = pattern.match(text)
        if match and _INT_SUFFIX.fullmatch(text, match.end()):
            value = int(match.group(1), base)
            suffix = text[match.end() :]
            return Token("int", text, value, "u" in suffix.lower() or value > _INTMAX)
    match = _FLOAT.fullmatch(text)
    if match:
        return Token("float", text, match.group(1))
    raise CExprError(f"malformed number '{text}'")


def _char_value(body: str, text: str) -> int:
    """The value of a one-character literal's body (escapes decoded); multi-character
    literals are implementation-defined in C: refused."""
    if body[0] != "\\":
        if len(body) != 1:
            raise CExprError(f"multi-character literal {text}")
        return ord(body)
    rest = body[1:]
    if rest[0] == "x" and re.fullmatch(r"x[0-9a-fA-F]{1,8}", rest):
        return int(rest[1:], 16)
    if re.fullmatch(r"[0-7]{1,3}", rest):
        return int(rest, 8)
    if len(rest) == 1 and rest in _ESCAPES:
        return _ESCAPES[rest]
    raise CExprError(f"unsupported character literal {text}")


_DIGITS = frozenset("0123456789")  # not str.isdigit: "¹" is a digit to Python, not to C


def tokenize(text: str, max_tokens: int = MAX_TOKENS) -> list[Token]:
    """C tokens of `text`; anything else (a string literal, `@`, a backquote) is an error."""
    tokens: list[Token] = []
    pos, end = 0, len(text)
    while pos < end:
        ch = text[pos]
        if ch in " \t\r\n\f\v":
            pos += 1
            continue
        if len(tokens) >= max_tokens:
            raise CExprError(f"expression longer than {max_tokens} tokens")
        if ch in _DIGITS or (ch == "." and pos + 1 < end and text[pos + 1] in _DIGITS):
            match = _PP_NUMBER.match(text, pos)
            assert match is not None  # a digit always starts one
            tokens.append(_number_token(match.group(0)))
            pos = match.end()
            continue
        match = _CHAR.match(text, pos)
        if match:
            tokens.append(
                Token("char", match.group(0), _char_value(match.group(1), match.group(0)))
            )
            pos = match.end()
            continue
        match = _NAME.match(text, pos)
        if match:
            tokens.append(Token("name", match.group(0), match.group(0)))
            pos = match.end()
            continue
        for op in _OPERATORS:
            if text.startswith(op, pos):
                tokens.append(Token("op", op, op))
                pos += len(op)
                break
        else:
            raise CExprError(f"unexpected character {text[pos]!r}")
    return tokens


# Binary operators and their C precedence (higher binds tighter); all left-associative.
BINARY_PRECEDENCE = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}  # fmt: skip
_TERNARY_PRECEDENCE = 0
UNARY = frozenset({"+", "-", "!", "~"})


class Semantics(Protocol[V]):
    """What the parsed operators mean; called only for the parts C evaluates (the right of a
    false `&&`, a true `||` and the arm `?:` does not take are parsed, never evaluated)."""

    def number(self, token: Token) -> V: ...
    def name(self, token: Token) -> V: ...
    def call(self, name: str, args: list[V]) -> V: ...
    def sizeof(self, type_words: list[str]) -> V: ...
    def unary(self, op: str, operand: V) -> V: ...
    def binary(self, op: str, left: V, right: V) -> V: ...
    def truth(self, value: V) -> bool: ...
    def boolean(self, value: bool) -> V: ...


class _Parser(Generic[V]):
    def __init__(
        self, tokens: Sequence[Token], semantics: Semantics[V], calls: bool, sizeof: bool
    ) -> None:
        self.tokens = tokens
        self.pos = 0
        self.semantics = semantics
        self.calls = calls
        self.sizeof_allowed = sizeof
        self.depth = 0

    # -- tokens
    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise CExprError("expression ends too early")
        self.pos += 1
        return token

    def expect(self, op: str) -> None:
        token = self.next()
        if token.kind != "op" or token.text != op:
            raise CExprError(f"expected '{op}', found '{token.text}'")

    def at_op(self, op: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "op" and token.text == op

    # -- grammar
    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise CExprError("expression nested too deeply")

    def expression(self, min_precedence: int, live: bool) -> V | None:
        """Precedence climbing; `live` False: parse only (a short-circuited operand)."""
        self.enter()
        left = self.unary(live)
        while True:
            token = self.peek()
            if token is None or token.kind != "op":
                break
            op = token.text
            if op == "?" and min_precedence <= _TERNARY_PRECEDENCE:
                self.pos += 1
                take = self.semantics.truth(cast(V, left)) if live else None
                middle = self.expression(_TERNARY_PRECEDENCE, live and take is True)
                self.expect(":")
                right = self.expression(_TERNARY_PRECEDENCE, live and take is False)
                left = middle if take else right
                continue
            precedence = BINARY_PRECEDENCE.get(op)
            if precedence is None or precedence < min_precedence:
                break
            self.pos += 1
            if op in ("&&", "||"):
                decided = live and self.semantics.truth(cast(V, left)) is (op == "||")
                right = self.expression(precedence + 1, live and not decided)
                if live:
                    left = (
                        self.semantics.boolean(op == "||")
                        if decided
                        else self.semantics.binary(op, left, right)  # type: ignore[arg-type]
                    )
                continue
            right = self.expression(precedence + 1, live)
            if live:
                left = self.semantics.binary(op, left, right)  # type: ignore[arg-type]
        self.depth -= 1
        return left

    def unary(self, live: bool) -> V | None:
        token = self.next()
        if token.kind == "op" and token.text in UNARY:
            self.enter()
            operand = self.unary(live)
            self.depth -= 1
            return self.semantics.unary(token.text, operand) if live else None  # type: ignore[arg-type]
        if token.kind == "op" and token.text == "(":
            inner = self.expression(_TERNARY_PRECEDENCE, live)
            self.expect(")")
            return inner
        if token.kind in ("int", "float", "char"):
            return self.semantics.number(token) if live else None
        if token.kind == "name":
            if token.text == "sizeof" and self.sizeof_allowed:
                return self.sizeof(live)
            if self.calls and self.at_op("("):
                return self.call(token.text, live)
            return self.semantics.name(token) if live else None
        raise CExprError(f"unexpected '{token.text}'")

    def sizeof(self, live: bool) -> V | None:
        self.expect("(")
        words: list[str] = []
        while not self.at_op(")"):
            token = self.next()
            if token.kind == "name" or (token.kind == "op" and token.text == "*"):
                words.append(token.text)
            else:
                raise CExprError("sizeof takes a type name")
        self.pos += 1
        return self.semantics.sizeof(words) if live else None

    def call(self, name: str, live: bool) -> V | None:
        self.expect("(")
        args: list[V | None] = []
        if not self.at_op(")"):
            while True:
                args.append(self.expression(_TERNARY_PRECEDENCE, live))
                if not self.at_op(","):
                    break
                self.pos += 1
        self.expect(")")
        return self.semantics.call(name, args) if live else None  # type: ignore[arg-type]


def parse(
    tokens: Sequence[Token],
    semantics: Semantics[V],
    calls: bool = False,
    sizeof: bool = False,
) -> V:
    """The value of the whole token sequence under `semantics`; `calls`: `f(a, b)` is passed to
    `semantics.call` (else an error), `sizeof`: `sizeof(type words)` to `semantics.sizeof`."""
    if not tokens:
        raise CExprError("empty expression")
    parser = _Parser(tokens, semantics, calls, sizeof)
    value = parser.expression(_TERNARY_PRECEDENCE, True)
    extra = parser.peek()
    if extra is not None:
        raise CExprError(f"unexpected '{extra.text}'")
    return value  # type: ignore[return-value]  # live from the top: never None


def evaluate_text(
    text: str, semantics: Semantics[V], calls: bool = False, sizeof: bool = False
) -> V:
    """`parse(tokenize(text), ...)`."""
    return parse(tokenize(text), semantics, calls=calls, sizeof=sizeof)
