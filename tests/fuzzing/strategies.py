"""Hypothesis strategies: small CUDA / OpenMP-offload sources built from a grammar, and
`--define` values, for the property tests and the fuzz targets.

A source is drawn as tokens, not text, so that the same program can be written out with
other blanks and comments between its tokens (the whitespace-invariance property) without
ever touching a string literal or splitting a preprocessor line. Nesting is bounded by
`max_depth`, kept small while deep nesting is a known issue tracked by its own test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

#: C types drawn for values, with a literal of each and the math function of its precision
TYPES = ("float", "double", "int", "unsigned")
_LITERAL = {
    "float": st.sampled_from(["1.0f", "0.5f", "2.0f", "3.25f", "1e-3f"]),
    "double": st.sampled_from(["1.0", "0.5", "2.0", "1e-6", "3.0"]),
    "int": st.sampled_from(["1", "2", "3", "7", "0", "16"]),
    "unsigned": st.sampled_from(["1u", "2u", "5u"]),
}
_MATH = {"float": ("sqrtf", "expf", "sinf", "fabsf"), "double": ("sqrt", "exp", "cos", "fabs")}
_ARITH = ("+", "-", "*", "/")
_INT_ONLY = ("%", "&", "|", "^", "<<")
_COMPARE = ("<", "<=", ">", ">=", "==", "!=")
FLAGS = ("FAST", "USE_DP", "TILED")
#: names a --define may bind: the file's macros, a flag, a parameter, an unknown name
DEFINE_NAMES = ("N", "M", "BLOCK", *FLAGS, "n", "scale", "X")


@dataclass(frozen=True)
class Directive:
    """A preprocessor line: written on its own line, blanks inside it never span lines."""

    tokens: tuple[str, ...]


Item = str | Directive  # a code token or a whole directive


@dataclass(frozen=True)
class Source:
    """A generated file: its name's suffix and its items in order."""

    suffix: str
    items: tuple[Item, ...]


def _d(*tokens: str) -> Directive:
    return Directive(tokens)


# ---------------------------------------------------------------- rendering


_SAFE_NEIGHBOURS = set("(){}[];,")


def _needs_blank(left: str, right: str) -> bool:
    """Whether two tokens written with nothing between them would read differently."""
    return not (left[-1] in _SAFE_NEIGHBOURS or right[0] in _SAFE_NEIGHBOURS)


def canonical_gap(left: str, right: str) -> str:
    """The plain layout: a newline after `;`, `{` and `}`, else one space."""
    return "\n" if left[-1] in ";{}" else " "


#: what may stand between two code tokens without changing the program
CODE_GAPS = (" ", "\n", "  ", "\t", " /* c */ ", " /* two\nlines */ ", " // note\n", "\n\n  ")
#: the same on a directive's line: no newline, no `//` (it would end the directive's text)
DIRECTIVE_GAPS = (" ", "  ", "\t", " /* c */ ")


#: between `#`, `define` and the macro's name: blanks only (finding F2 in
#: /work/notes/findings.md: a comment there hides the macro)
_PREFIX_GAPS = (" ", "  ", "\t")


def _directive_gaps(tokens: Sequence[str], i: int) -> tuple[Sequence[str], bool]:
    """The gaps allowed before tokens[i] of a directive, and whether none is allowed there
    (never after a macro's name: `#define N(2)` would define a function-like macro)."""
    if len(tokens) > 1 and tokens[1] == "define":
        if i <= 2:
            return _PREFIX_GAPS, True
        if i == 3:
            return DIRECTIVE_GAPS, False
    return DIRECTIVE_GAPS, True


def render(source: Source, gaps: Sequence[str] | None = None) -> str:
    """The text of `source`; gap i (cycled) goes between the i-th pair of adjacent tokens,
    `""` only where the tokens cannot merge. Without `gaps`, the canonical layout."""
    out: list[str] = []
    k = 0

    def gap(left: str, right: str, allowed: Sequence[str], may_touch: bool = True) -> str:
        nonlocal k
        if not gaps:
            if allowed is CODE_GAPS:
                return canonical_gap(left, right)
            return "" if left == "#" else " "
        chosen = gaps[k % len(gaps)]
        k += 1
        if chosen == "":
            return "" if may_touch and not _needs_blank(left, right) else " "
        return chosen if chosen in allowed else " "

    previous: str | None = None
    for item in source.items:
        if isinstance(item, Directive):
            if out and not out[-1].endswith("\n"):
                out.append("\n")
            for i, token in enumerate(item.tokens):
                if i:
                    out.append(gap(item.tokens[i - 1], token, *_directive_gaps(item.tokens, i)))
                out.append(token)
            out.append("\n")
            previous = None
            continue
        if previous is not None:
            out.append(gap(previous, item, CODE_GAPS))
        out.append(item)
        previous = item
    text = "".join(out)
    return text if text.endswith("\n") else text + "\n"


# ---------------------------------------------------------------- the grammar


@dataclass
class _Scope:
    """What a body may name: typed scalars, typed pointers, macros; and fresh-name counter."""

    scalars: list[tuple[str, str]]
    pointers: list[tuple[str, str]]
    helpers: list[tuple[str, str]]  # (name, type)
    function_macros: bool
    counter: list[int]

    def fresh(self, prefix: str) -> str:
        self.counter[0] += 1
        return f"{prefix}{self.counter[0]}"

    def child(self) -> _Scope:
        return _Scope(
            list(self.scalars), self.pointers, self.helpers, self.function_macros, self.counter
        )


def _expr(draw, scope: _Scope, ctype: str, depth: int) -> list[str]:
    """Tokens of an expression of type `ctype`."""
    leaves = ["literal", "var", "load", "macro"]
    nodes = ["binary", "paren", "math", "helper", "cast", "ternary", "sq"]
    kind = draw(st.sampled_from(leaves if depth <= 0 else leaves + nodes))
    if kind == "var":
        names = [n for n, t in scope.scalars if t == ctype]
        if names:
            return [draw(st.sampled_from(names))]
        kind = "literal"
    if kind == "load":
        arrays = [n for n, t in scope.pointers if t == ctype]
        if arrays:
            return [draw(st.sampled_from(arrays)), "[", *_index(draw, scope), "]"]
        kind = "literal"
    if kind == "macro":
        return ["N"] if ctype in ("int", "unsigned") else ["(", ctype, ")", "M"]
    if kind == "literal":
        return [draw(_LITERAL[ctype])]
    sub = depth - 1
    if kind == "binary":
        ops = _ARITH + (_INT_ONLY if ctype in ("int", "unsigned") else ())
        op = draw(st.sampled_from(ops))
        right = _expr(draw, scope, ctype, sub)
        if op in ("/", "%"):
            right = ["(", *right, "+", _LITERAL_ONE[ctype], ")"]
        return [*_expr(draw, scope, ctype, sub), op, *right]
    if kind == "paren":
        return ["(", *_expr(draw, scope, ctype, sub), ")"]
    if kind == "math" and ctype in _MATH:
        return [draw(st.sampled_from(_MATH[ctype])), "(", *_expr(draw, scope, ctype, sub), ")"]
    if kind == "helper":
        fitting = [n for n, t in scope.helpers if t == ctype]
        if fitting:
            return [draw(st.sampled_from(fitting)), "(", *_expr(draw, scope, ctype, sub), ")"]
    if kind == "cast":
        other = draw(st.sampled_from(TYPES))
        return ["(", ctype, ")", "(", *_expr(draw, scope, other, sub), ")"]
    if kind == "ternary":
        return [
            "(",
            *_cond(draw, scope, sub),
            "?",
            *_expr(draw, scope, ctype, sub),
            ":",
            *_expr(draw, scope, ctype, sub),
            ")",
        ]
    if kind == "sq" and scope.function_macros:
        return ["SQ", "(", *_expr(draw, scope, ctype, sub), ")"]
    return [draw(_LITERAL[ctype])]


_LITERAL_ONE = {"float": "1.0f", "double": "1.0", "int": "1", "unsigned": "1u"}


def _index(draw, scope: _Scope) -> list[str]:
    ints = [n for n, t in scope.scalars if t == "int"]
    base = draw(st.sampled_from(ints)) if ints else "0"
    shape = draw(st.sampled_from(["plain", "offset", "mod", "row", "indirect", "macro"]))
    if shape == "offset":
        return [base, "+", draw(_LITERAL["int"])]
    if shape == "mod":
        return ["(", base, "+", "1", ")", "%", "n"]
    if shape == "row":
        return [base, "*", "n", "+", draw(st.sampled_from(ints)) if ints else "0"]
    if shape == "indirect":
        return ["idx", "[", base, "]"]
    if shape == "macro" and scope.function_macros:
        return ["AT", "(", base, ",", "1", ")"]
    return [base]


def _cond(draw, scope: _Scope, depth: int) -> list[str]:
    ctype = draw(st.sampled_from(["int", "float"]))
    left = _expr(draw, scope, ctype, min(depth, 1))
    right = _expr(draw, scope, ctype, min(depth, 1))
    cond = [*left, draw(st.sampled_from(_COMPARE)), *right]
    if depth > 0 and draw(st.booleans()):
        cond = [
            "(",
            *cond,
            ")",
            draw(st.sampled_from(["&&", "||"])),
            "(",
            *_cond(draw, scope, depth - 1),
            ")",
        ]
    return cond


def _block(draw, scope: _Scope, depth: int, omp: bool) -> list[Item]:
    out: list[Item] = ["{"]
    inner = scope.child()
    for _ in range(draw(st.integers(1, 3))):
        out += _statement(draw, inner, depth, omp)
    out.append("}")
    return out


def _statement(draw, scope: _Scope, depth: int, omp: bool) -> list[Item]:
    kinds = ["decl", "store", "update"]
    if depth > 0:
        kinds += ["for", "if", "ifdef", "if_directive", "call"]
    if not omp:
        kinds += ["sync", "atomic", "shared"]
    kind = draw(st.sampled_from(kinds))
    sub = depth - 1
    expr_depth = draw(st.integers(0, 2))
    if kind == "decl":
        ctype = draw(st.sampled_from(TYPES))
        name = scope.fresh("v")
        tokens = [ctype, name, "=", *_expr(draw, scope, ctype, expr_depth), ";"]
        scope.scalars.append((name, ctype))
        return tokens
    if kind in ("store", "update"):
        if not scope.pointers:
            return [";"]
        array, ctype = draw(st.sampled_from(scope.pointers))
        op = "=" if kind == "store" else draw(st.sampled_from(["+=", "-=", "*="]))
        return [
            array,
            "[",
            *_index(draw, scope),
            "]",
            op,
            *_expr(draw, scope, ctype, expr_depth),
            ";",
        ]
    if kind == "for":
        loop = scope.fresh("j")
        bound = draw(st.sampled_from([["N"], ["n"], ["4"], ["BLOCK"], ["n", "/", "2"]]))
        step = draw(st.sampled_from([[loop, "++"], ["++", loop], [loop, "+=", "2"]]))
        inner = scope.child()
        inner.scalars.append((loop, "int"))
        head = ["for", "(", "int", loop, "=", "0", ";", loop, "<", *bound, ";", *step, ")"]
        return [*head, *_block(draw, inner, sub, omp)]
    if kind == "if":
        tokens: list[Item] = [
            "if",
            "(",
            *_cond(draw, scope, 1),
            ")",
            *_block(draw, scope, sub, omp),
        ]
        if draw(st.booleans()):
            tokens += ["else", *_block(draw, scope, sub, omp)]
        return tokens
    if kind in ("ifdef", "if_directive"):
        flag = draw(st.sampled_from(FLAGS))
        if kind == "ifdef":
            opening = _d("#", draw(st.sampled_from(["ifdef", "ifndef"])), flag)
        else:
            opening = _d(
                "#",
                "if",
                *draw(
                    st.sampled_from(
                        [
                            ["defined", "(", flag, ")"],
                            ["N", ">", "32"],
                            ["M", "==", "2"],
                            ["defined", "(", flag, ")", "&&", "BLOCK", ">=", "64"],
                            ["!", "defined", flag],
                            ["(", "N", "%", "4", ")", "==", "0"],
                            ["0"],
                            ["1"],
                            ["__CUDA_ARCH__", ">=", "700"],
                            ["X", "+", "1", ">", "2"],
                        ]
                    )
                ),
            )
        body: list[Item] = [opening, *_statement(draw, scope.child(), sub, omp)]
        if draw(st.booleans()):
            body += [_d("#", "else"), *_statement(draw, scope.child(), sub, omp)]
        return [*body, _d("#", "endif")]
    if kind == "call":
        fitting = [(n, t) for n, t in scope.helpers]
        if not fitting:
            return [";"]
        name, ctype = draw(st.sampled_from(fitting))
        target = scope.fresh("r")
        scope.scalars.append((target, ctype))
        return [ctype, target, "=", name, "(", *_expr(draw, scope, ctype, 1), ")", ";"]
    if kind == "sync":
        return ["__syncthreads", "(", ")", ";"]
    if kind == "atomic":
        floats = [n for n, t in scope.pointers if t == "float"]
        if not floats:
            return [";"]
        return [
            "atomicAdd",
            "(",
            "&",
            floats[0],
            "[",
            *_index(draw, scope),
            "]",
            ",",
            *_expr(draw, scope, "float", 1),
            ")",
            ";",
        ]
    # shared: a tile written then read back after a barrier
    tile = scope.fresh("tile")
    return [
        "__shared__",
        "float",
        tile,
        "[",
        "BLOCK",
        "]",
        ";",
        tile,
        "[",
        "threadIdx",
        ".",
        "x",
        "]",
        "=",
        *_expr(draw, scope, "float", 1),
        ";",
        "__syncthreads",
        "(",
        ")",
        ";",
    ]


def _macros(draw) -> list[Item]:
    out: list[Item] = [
        _d("#", "ifndef", "N"),
        _d("#", "define", "N", str(draw(st.sampled_from([8, 64, 100])))),
        _d("#", "endif"),
        _d("#", "define", "M", str(draw(st.integers(1, 4)))),
        _d("#", "define", "BLOCK", draw(st.sampled_from(["256", "(2 * 64)", "128"]))),
        _d("#", "define", "SQ(x)", "(", "(", "x", ")", "*", "(", "x", ")", ")"),
        _d("#", "define", "AT(r, c)", "(", "(", "r", ")", "*", "M", "+", "(", "c", ")", ")"),
    ]
    if draw(st.booleans()):
        out.append(_d("#", "define", draw(st.sampled_from(FLAGS))))
    return out


def _helper(draw, scope: _Scope, index: int) -> list[Item]:
    ctype = draw(st.sampled_from(("float", "double", "int")))
    name = f"helper{index}"
    inner = _Scope([("x", ctype)], [], list(scope.helpers), True, scope.counter)
    body = _expr(draw, inner, ctype, draw(st.integers(0, 2)))
    scope.helpers.append((name, ctype))
    qualifier = draw(
        st.sampled_from(
            [["__device__"], ["__device__", "__forceinline__"], ["static", "__device__", "inline"]]
        )
    )
    return [*qualifier, ctype, name, "(", ctype, "x", ")", "{", "return", *body, ";", "}"]


_PARAMS = (("a", "float"), ("b", "float"), ("c", "double"), ("k", "int"))


def _signature(draw, name: str, qualifier: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    chosen = draw(st.lists(st.sampled_from(_PARAMS), min_size=1, max_size=3, unique=True))
    tokens = [*qualifier, "void", name, "("]
    for pname, ptype in chosen:
        tokens += [ptype, "*", pname, ","]
    tokens += ["const", "int", "*", "idx", ",", "int", "n", ",", "float", "scale", ")"]
    return tokens, list(chosen)


@st.composite
def cuda_sources(draw, max_depth: int = 3) -> Source:
    """A .cu file: macros, __device__ helpers, one to three __global__ kernels."""
    counter = [0]
    scope = _Scope([], [], [], True, counter)
    items: list[Item] = list(_macros(draw))
    for h in range(draw(st.integers(0, 2))):
        items += _helper(draw, scope, h)
    for k in range(draw(st.integers(1, 3))):
        head, pointers = _signature(draw, f"kernel{k}", ["__global__"])
        body = scope.child()
        body.pointers = pointers
        body.scalars = [("n", "int"), ("scale", "float"), ("i", "int")]
        items += [
            *head,
            "{",
            "int",
            "i",
            "=",
            "blockIdx",
            ".",
            "x",
            "*",
            "blockDim",
            ".",
            "x",
            "+",
            "threadIdx",
            ".",
            "x",
            ";",
        ]
        if draw(st.booleans()):
            items += ["if", "(", "i", ">=", "n", ")", "return", ";"]
        for _ in range(draw(st.integers(1, 4))):
            items += _statement(draw, body, draw(st.integers(0, max_depth)), omp=False)
        items.append("}")
    return Source(".cu", tuple(items))


@st.composite
def openmp_sources(draw, max_depth: int = 3) -> Source:
    """A .cpp file: macros and one or two functions with an OpenMP target region."""
    counter = [0]
    scope = _Scope([], [], [], True, counter)
    items: list[Item] = list(_macros(draw))
    for f in range(draw(st.integers(1, 2))):
        head, pointers = _signature(draw, f"offload{f}", [])
        body = scope.child()
        body.pointers = pointers
        body.scalars = [("n", "int"), ("scale", "float"), ("i", "int")]
        maps = [t for p, _ in pointers for t in ("map", "(", "tofrom:", f"{p}[0:n]", ")")]
        pragma = draw(
            st.sampled_from(
                [
                    ["target", "teams", "distribute", "parallel", "for"],
                    ["target", "teams", "distribute", "parallel", "for", "simd"],
                    ["target", "parallel", "for"],
                ]
            )
        )
        items += [
            *head,
            "{",
            _d("#", "pragma", "omp", *pragma, *maps),
            "for",
            "(",
            "int",
            "i",
            "=",
            "0",
            ";",
            "i",
            "<",
            "n",
            ";",
            "i",
            "++",
            ")",
            "{",
        ]
        for _ in range(draw(st.integers(1, 3))):
            items += _statement(draw, body, draw(st.integers(0, max_depth)), omp=True)
        items += ["}", "}"]
    return Source(".cpp", tuple(items))


def sources(max_depth: int = 3) -> st.SearchStrategy[Source]:
    return st.one_of(cuda_sources(max_depth), openmp_sources(max_depth))


#: whether two code tokens may touch (`i+1` for `i + 1`; finding F7, fixed)
TOUCHING = True


def gaps() -> st.SearchStrategy[list[str]]:
    """Blanks and comments to put between tokens ("" where the tokens cannot merge)."""
    choices = ("", *CODE_GAPS) if TOUCHING else CODE_GAPS
    return st.lists(st.sampled_from(choices), min_size=1, max_size=40)


# ---------------------------------------------------------------- --define values


#: values a user or a script might pass, hostile ones included; none with `**` while
#: -D values are still evaluated by sympify (a tower of powers hangs it; its own test)
HOSTILE_VALUES = (
    "0",
    "-1",
    "-2147483648",
    "1",
    "64",
    "1e308",
    "1e400",
    "-1e400",
    "99999999999999999999999",
    "nan",
    "inf",
    "-inf",
    "NaN",
    "0x10",
    "1.5",
    "1/0",
    "0/0",
    "3 + 4",
    "(",
    ")",
    "[]",
    '"s"',
    "double",
    "float*",
    "__import__('os')",
    "exec('1')",
    "lambda: 1",
    "N",
    "n",
    "x if 1 else 2",
    "{}",
    "#",
    "\\",
    "a b",
    "1e",
    "--1",
    "1,2",
    "sizeof(int)",
    "1;2",
    "@",
    "$",
    "é",
)


def define_values() -> st.SearchStrategy[str]:
    # texts without blanks at the ends: `NAME= ` is a usage error the CLI reports (exit 2),
    # which the exit-code property accepts but which stops the run before any analysis
    text = st.text(
        st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp")),
        min_size=1,
        max_size=12,
    ).filter(lambda s: "**" not in s)
    return st.one_of(
        st.sampled_from(HOSTILE_VALUES),
        st.integers(-(2**70), 2**70).map(str),
        st.floats().map(repr),
        text,
    )


def defines() -> st.SearchStrategy[list[str]]:
    """`-D` arguments: NAME=VALUE for the sources' macros, flags, parameters and unknowns."""
    pair = st.tuples(st.sampled_from(DEFINE_NAMES), define_values())
    return st.lists(pair.map(lambda p: f"{p[0]}={p[1]}"), max_size=3)


def plain_defines() -> st.SearchStrategy[list[str]]:
    """`-D` arguments whose values are C tokens (numbers, names, a parenthesized sum): a
    value such as `"` makes the file's text no C program, whose layout then matters."""
    value = st.one_of(
        st.integers(-(2**40), 2**40).map(str),
        st.sampled_from(["0", "1", "2.5", "1e3", "float", "double", "n", "(2 + 3)", "X"]),
    )
    pair = st.tuples(st.sampled_from(DEFINE_NAMES), value)
    return st.lists(pair.map(lambda p: f"{p[0]}={p[1]}"), max_size=3)
