"""Fuzz targets for the preprocessor, the `#if` evaluator and `--define` parsing.

Each target is a Hypothesis test (`@given` over a structured strategy), so the same
function runs three ways: as a fixed-seed test in CI (tests/test_fuzz_*.py), from random
bytes, and under Atheris in bench/fuzz.py, which feeds libFuzzer's coverage-guided bytes to
`target.hypothesis.fuzz_one_input`. Why Atheris and not HypoFuzz: Atheris 3.0 installs here
as a wheel for CPython 3.11 (no compiler needed) and instruments only the modules named,
so libFuzzer's edge coverage steers the search inside the preprocessor; HypoFuzz is
AGPL-licensed and drives whole pytest suites, more than a few targets need. Hypothesis
still decodes the bytes, so what the fuzzer mutates stays a grammatical C text and a
failure shrinks to a small input.

Inputs that hit an issue already being fixed elsewhere (`**` in `#if`, which Python's
`eval` runs) are skipped by `known_issue`, so a fuzz run reports only new findings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from hypothesis import assume, given
from hypothesis import strategies as st
from roofcast.analyzer.defines import parse_define
from roofcast.analyzer.preprocess import (
    KNOWN_DEFINED,
    MAX_GROWTH,
    MIN_EXPANSION_BUDGET,
    _decide,
    collect_macros,
    preprocess,
    resolve_conditionals,
    strip_comments,
)
from roofcast.features.resolve import numeric_bindings

from .strategies import define_values, render, sources

HANG_SECONDS = 10.0


def evaluate_condition(text: str, defined: Mapping[str, str]) -> bool | None:
    """The `#if` evaluator under test (analyzer/ppexpr.py through `_decide`, merged from
    branch exprs): True, False, or None where undecidable. Another evaluator: this line."""
    return _decide("if", text, defined).value


def known_issue(text: str) -> bool:
    """Inputs of issues being fixed elsewhere, skipped so that a run reports new findings
    only. None today: `**` and huge shifts in `#if` (Python's eval, finding F5) are fixed."""
    return False


# ---------------------------------------------------------------- preprocessor texts

_NAMES = ("A", "B", "F", "G", "N", "X", "__CUDACC__", "_WIN32")
_CONDITIONS = (
    "A", "A > 2", "defined(A)", "defined B && N == 4", "!defined(X)", "(N % 4) == 0", "0", "1",
    "A +", "defined", "X(", "1 / 0", "N << 2 > 8", "__CUDACC__", "defined(_WIN32) || A",
)  # fmt: skip
_CODE = (
    "x = A + B;", "y = F(a, b);", "z = F((a, b), c);", "G(1)", "F(", 'puts("#if A // F(1,2)");',
    "s = 'F';", "a /* F(1,2) */ + N;", "w = N##A;", "v = #A;", "F(F(1, 2), N)", "G G G",
    "// #endif", "/* #else */", "int q = X;", "D1 D1", "H(H(H(H(H(H(1))))))", "\r", "a\fb",
)  # fmt: skip
_DEFINES = (
    "#define A 3", "#define B (A + 1)", "#define N 4", "#define F(a, b) ((a) * (b) + N)",
    "#define G(...) f(__VA_ARGS__)", "#define X X", "#define A B", "#define B A",
    "#define F(a, b) F(b, a)", "#define S(x) #x", "#define P(a, b) a ## b", "#undef A",
    "#define LONG \\\n  (A + \\\n   B)", "#define E", "#define F(a,b", "#define 1A 2",
    "#define N N * N", "#define D1 D2 D2", "#define D2 D3 D3", "#define D3 D4 D4",
    "#define D4 D1 D1", "#define H(x) x x", "#define H(x) H(x) H(x)",
)  # fmt: skip


def _directive_line(draw) -> str:
    kind = draw(st.sampled_from(["if", "ifdef", "ifndef", "elif", "else", "endif", "define"]))
    if kind == "define":
        return draw(st.sampled_from(_DEFINES))
    if kind in ("ifdef", "ifndef"):
        return f"#{kind} {draw(st.sampled_from(_NAMES))}"
    if kind in ("else", "endif"):
        return f"#{kind}"
    condition = draw(st.one_of(st.sampled_from(_CONDITIONS), c_conditions().map(lambda c: c[0])))
    return f"#{kind} {condition}"


@st.composite
def preprocessor_texts(draw) -> str:
    """Lines of directives (balanced or not), macro uses, strings, comments, stray text,
    and now and then a whole generated source."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["directive", "code", "code", "text", "source"]))
        if kind == "directive":
            lines.append(draw(st.sampled_from(["", " ", "\t"])) + _directive_line(draw))
        elif kind == "code":
            lines.append(draw(st.sampled_from(_CODE)))
        elif kind == "text":
            lines.append(draw(st.text(st.sampled_from("#()\\/*\"',AFNX \t\n#\r"), max_size=15)))
        else:
            lines.append(render(draw(sources(max_depth=2))))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\\", "\\\n", "/*"]))


def defines_maps() -> st.SearchStrategy[dict[str, str]]:
    """What --define and the included headers contribute to conditions."""
    return st.dictionaries(st.sampled_from(_NAMES), define_values(), max_size=3)


# ---------------------------------------------------------------- #if expressions

#: C's binary operators by precedence (higher binds tighter); all are left-associative
_BINARY = {
    "*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11, "<": 10, "<=": 10,
    ">": 10, ">=": 10, "==": 9, "!=": 9, "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4,
}  # fmt: skip
_UNARY_PRECEDENCE = 14
_VALUES = {"A": 3, "B": 0, "N": 4}  # what `c_conditions` binds; other names are undefined


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _apply(op: str, a: int, b: int) -> int | None:
    """C's value of `a op b` on integers, None where C leaves it undefined."""
    if op in ("/", "%") and b == 0:
        return None
    if op in ("<<", ">>") and not 0 <= b < 32:
        return None
    table: dict[str, Callable[[], int]] = {
        "*": lambda: a * b, "/": lambda: _c_div(a, b), "%": lambda: a - b * _c_div(a, b),
        "+": lambda: a + b, "-": lambda: a - b, "<<": lambda: a << b, ">>": lambda: a >> b,
        "<": lambda: int(a < b), "<=": lambda: int(a <= b), ">": lambda: int(a > b),
        ">=": lambda: int(a >= b), "==": lambda: int(a == b), "!=": lambda: int(a != b),
        "&": lambda: a & b, "^": lambda: a ^ b, "|": lambda: a | b,
        "&&": lambda: int(bool(a) and bool(b)), "||": lambda: int(bool(a) or bool(b)),
    }  # fmt: skip
    return table[op]()


@st.composite
def c_conditions(draw, depth: int = 4) -> tuple[str, int | None]:
    """A C integer condition as text, written with only the parentheses C's precedence
    needs (and some more), and its value by C's rules (None: undefined or undecidable)."""
    text, value, _ = _c_expr(draw, depth)
    return text, value


def _c_expr(draw, depth: int) -> tuple[str, int | None, int]:
    """(text, value, precedence of the outermost operator)."""
    kind = draw(
        st.sampled_from(
            ["literal", "name", "defined"]
            + (["unary", "binary", "binary", "binary"] if depth > 0 else [])
        )
    )
    if kind == "literal":
        n = draw(st.integers(0, 20))
        return str(n), n, 16
    if kind == "name":
        name = draw(st.sampled_from([*_VALUES, "UNKNOWN"]))
        return name, _VALUES.get(name), 16
    if kind == "defined":
        name = draw(st.sampled_from([*_VALUES, "UNKNOWN", "__CUDACC__"]))
        text = draw(st.sampled_from([f"defined({name})", f"defined {name}", f"defined ( {name} )"]))
        known = name in _VALUES or name in KNOWN_DEFINED
        return text, (1 if known else None), 16
    if kind == "unary":
        op = draw(st.sampled_from(["-", "!", "+"]))
        inner, value, prec = _c_expr(draw, depth - 1)
        if prec < _UNARY_PRECEDENCE or draw(st.booleans()):
            inner = f"({inner})"
        if value is not None:
            value = {"-": -value, "+": value, "!": int(not value)}[op]
        return f"{op} {inner}", value, _UNARY_PRECEDENCE
    op = draw(st.sampled_from(sorted(_BINARY)))
    prec = _BINARY[op]
    left, lv, lp = _c_expr(draw, depth - 1)
    right, rv, rp = _c_expr(draw, depth - 1)
    if lp < prec or draw(st.integers(0, 4)) == 0:
        left = f"({left})"
    if rp <= prec or draw(st.integers(0, 4)) == 0:  # left-associative: `a - (b - c)`
        right = f"({right})"
    value = None if lv is None or rv is None else _apply(op, lv, rv)
    return f"{left} {op} {right}", value, prec


# ---------------------------------------------------------------- the targets


def _newlines(text: str) -> list[int]:
    return [i for i, ch in enumerate(text) if ch == "\n"]


def _timed(check: Callable[[], None]) -> None:
    start = time.monotonic()
    check()
    elapsed = time.monotonic() - start
    assert elapsed < HANG_SECONDS, f"took {elapsed:.1f} s"


def preprocess_holds(text: str, defined: dict[str, str]) -> None:
    """The preprocessor never raises, keeps every line where it was, and grows a text by a
    bounded factor whatever its macros."""
    assume(not known_issue(text))

    def run() -> None:
        stripped = strip_comments(text)
        assert len(stripped) == len(text), "comments not replaced by as many blanks"
        assert _newlines(stripped) == _newlines(text), "comment stripping moved lines"
        kept = resolve_conditionals(text, defined).split("\n")
        lines = text.split("\n")
        assert len(kept) == len(lines), "conditionals moved lines"
        assert all(k in (line, "") for k, line in zip(kept, lines, strict=True)), "a line changed"
        macros = collect_macros(text)
        pinned = frozenset(n for n in defined if n in macros and macros[n].params is None)
        out = preprocess(text, macros, defined=defined, deferred=frozenset(macros), pinned=pinned)
        assert out.count("\n") == text.count("\n"), "expansion moved lines"
        bound = max((MAX_GROWTH + 16) * len(text), len(text) + MIN_EXPANSION_BUDGET) + 1024
        assert len(out) <= bound, "unbounded growth"

    _timed(run)


def condition_holds(text: str, defined: dict[str, str]) -> None:
    """Any condition text gives True, False or None (undecidable), never an exception."""
    assume(not known_issue(text))
    _timed(lambda: _assert_decision(evaluate_condition(text, defined)))


def _assert_decision(result: object) -> None:
    assert result is None or isinstance(result, bool), repr(result)


def condition_value_holds(condition: tuple[str, int | None]) -> None:
    """Where the evaluator decides a condition, it decides as C does."""
    text, value = condition
    decided = evaluate_condition(text, {k: str(v) for k, v in _VALUES.items()})
    _assert_decision(decided)
    if decided is not None and value is not None:
        assert decided == bool(value), f"C decides otherwise: #if {text} is {bool(value)} in C"


def define_holds(text: str) -> None:
    """`NAME=VALUE` parses or raises ValueError (a usage error); a value binds to a number
    or to nothing (a type such as `double`), never raises. (Which numbers a value may bind
    to, `nan` and `pi` included today, is for the parser being written to decide.)"""
    assume(not known_issue(text))

    def run() -> None:
        try:
            name, value = parse_define(text)
        except ValueError:
            return
        bound = numeric_bindings({name: value})
        assert set(bound) <= {name}
        for number in bound.values():
            assert isinstance(number, int | float) and not isinstance(number, bool)

    _timed(run)


_CONDITION_TEXTS = st.one_of(
    c_conditions().map(lambda c: c[0]),
    st.sampled_from(_CONDITIONS),
    st.text(st.sampled_from("0123456789 ()+-*/%<>=!&|ABN?:~^defin"), max_size=30),
)
_CONDITION_DEFINES = st.dictionaries(
    st.sampled_from(_NAMES), st.sampled_from(["1", "0", "-3", "", "A", "2+"]), max_size=3
)
_DEFINE_ARGUMENTS = st.one_of(
    st.tuples(st.sampled_from(["N", "n", "T", "A1", "1N", "", " N "]), define_values()).map(
        "=".join
    ),
    st.text(max_size=20),
)

#: name -> (property, strategies of its arguments): bench/fuzz.py wraps the property to
#: record what it was given, then builds its own Hypothesis test from the strategies
TARGETS: dict[str, tuple[Callable[..., None], tuple[st.SearchStrategy, ...]]] = {
    "preprocess": (preprocess_holds, (preprocessor_texts(), defines_maps())),
    "condition": (condition_holds, (_CONDITION_TEXTS, _CONDITION_DEFINES)),
    "condition-value": (condition_value_holds, (c_conditions(),)),
    "define": (define_holds, (_DEFINE_ARGUMENTS,)),
}


def hypothesis_test(name: str, check: Callable[..., None] | None = None) -> Callable[[], None]:
    """The target as a Hypothesis test (of `check`, by default the target's property)."""
    prop, strategies = TARGETS[name]
    return given(*strategies)(check or prop)
