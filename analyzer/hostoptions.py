"""Rule D38: a command-line option read with the cxxopts library (`result["num-points"].as<int>()`,
or through a macro that stringizes its argument, `IOPT(num-points)`). Its value is the
number after `--num-points` (or the option's short `-k`) in the program's arguments, else the
`default_value("60000")` the program declares for it in `add_options()`: what cxxopts itself
returns. The declaration is read from the folder's files as text; nothing in it is run."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

import sympy
import tree_sitter
from roofcast.analyzer.cvaluetree import piecewise
from roofcast.analyzer.parsing import captures, language, node_text
from roofcast.analyzer.session import SessionNodeCache

#: the values of a command-line option, as rule D19 names them (`$` keeps them apart from C)
OPTION_VALUE = "option$"
OPTION_GIVEN = "given$"

#: `("k,num-points", "help", cxxopts::value<int>()->default_value("60000"))`
_ENTRY = re.compile(
    r'\(\s*"(?:([A-Za-z0-9]),)?([A-Za-z0-9][\w-]*)"\s*,\s*"(?:[^"\\]|\\.)*"\s*,\s*'
    r"cxxopts\s*::\s*value\s*<[^<>]*>\s*\(\s*\)\s*->\s*default_value\s*\(\s*\"([^\"]*)\"\s*\)"
)
#: `result["num-points"].as<int>()`
_READ = re.compile(r'[A-Za-z_]\w*\s*\[\s*"([A-Za-z0-9][\w-]*)"\s*\]\s*\.\s*as\s*<[^<>]*>\s*\(\s*\)')
#: a macro's body reading the option its parameter names: `result[STRINGIFY(x)].as<int>()`
_MACRO_READ = re.compile(
    r"[A-Za-z_]\w*\s*\[\s*(?:#\s*(\w+)|(\w+)\s*\(\s*(\w+)\s*\))\s*\]\s*\.\s*as\s*<[^<>]*>\s*\(\s*\)"
)
#: where a function-like macro's definition may start: `#define NAME(`, its name and `(`
#: adjacent as the grammar's `preproc_function_def` has them (line splices between words)
_FUNCTION_LIKE_DEFINE = re.compile(rb"#(?:[ \t]|\\\r?\n)*define(?:[ \t]|\\\r?\n)+[A-Za-z_]\w*\(")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")

_MACROS = SessionNodeCache(64)
_ENTRIES = SessionNodeCache(64)


@cache
def _macros_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(
        language(grammar),
        "(preproc_function_def name: (identifier) @name parameters: (preproc_params) @params"
        " value: (preproc_arg) @body)",
    )


def _macros(root: tree_sitter.Node, grammar: str) -> dict[str, tuple[list[str], str]]:
    """name -> (parameters, body) of the function-like macros a file defines, the last of a
    name."""

    def collect() -> dict[str, tuple[list[str], str]]:
        macros: dict[str, tuple[list[str], str]] = {}
        if not _FUNCTION_LIKE_DEFINE.search(root.text or b""):
            return macros  # no whole-file query: none in 674 of 779 files queried over src/
        found = captures(_macros_query(grammar), root)
        listed = (found.get(k, []) for k in ("name", "params", "body"))
        for name, params, body in zip(*listed, strict=True):
            kept = [node_text(p) for p in params.named_children if p.type == "identifier"]
            macros[node_text(name)] = (kept, node_text(body).strip())
        return macros

    return _MACROS.get(root, collect, grammar)


def _entries(root: tree_sitter.Node) -> dict[str, tuple[str | None, str]]:
    """long name -> (short name, default text) of the cxxopts options a file declares."""

    def collect() -> dict[str, tuple[str | None, str]]:
        return {m.group(2): (m.group(1), m.group(3)) for m in _ENTRY.finditer(node_text(root))}

    return _ENTRIES.get(root, collect)


def _lookup(
    macros: Iterable[dict[str, tuple[list[str], str]]], name: str
) -> tuple[list[str], str] | None:
    for table in macros:
        if name in table:
            return table[name]
    return None


#: a file's root and its grammar
Root = tuple[tree_sitter.Node, str]


def option_read(call: tree_sitter.Node, roots: list[Root]) -> str | None:
    """The long name of the cxxopts option the host expression `call` reads (`r["dim"].as<int>()`,
    or `IOPT(num-points)` with `#define IOPT(x) r[STRINGIFY(x)].as<int>()` and `#define
    STRINGIFY(X) #X` in one of `roots`' files), else None."""
    text = node_text(call)
    read = _READ.fullmatch(text)
    if read is not None:
        return read.group(1)
    function = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    if function is None or args is None or function.type != "identifier":
        return None
    named = [a for a in args.named_children if a.type != "comment"]
    if len(named) != 1:
        return None
    macros = [_macros(root, grammar) for root, grammar in roots]
    found = _lookup(macros, node_text(function))
    if found is None or len(found[0]) != 1:
        return None
    body = _MACRO_READ.fullmatch(found[1])
    if body is None:
        return None
    param = found[0][0]
    if body.group(1) is not None:
        stringized = body.group(1) == param
    else:
        inner = _lookup(macros, body.group(2))
        stringized = (
            body.group(3) == param
            and inner is not None
            and len(inner[0]) == 1
            and re.fullmatch(rf"#\s*{re.escape(inner[0][0])}", inner[1]) is not None
        )
    # the stringized argument is its tokens as written, spaces between them dropped
    return re.sub(r"\s+", "", node_text(named[0])) if stringized else None


def option_value(name: str, roots: list[Root]) -> sympy.Expr | None:
    """The value of the option `name`: the command line's number after `--name` or its short
    `-s`, else its declared default (the first of `roots`' files that declares it); None
    when no file declares it or its default is not a number (a path, a word)."""
    for root, _ in roots:
        entry = _entries(root).get(name)
        if entry is None:
            continue
        short, default = entry
        if not _NUMBER.fullmatch(default.strip()):
            return None
        number = float(default)
        value: sympy.Expr = (
            sympy.Integer(int(number)) if number.is_integer() else sympy.Float(number)
        )
        flags = [f"--{name}"] + ([f"-{short}"] if short else [])
        for flag in reversed(flags):
            given = sympy.Symbol(OPTION_VALUE + flag, positive=True)
            present = sympy.Symbol(OPTION_GIVEN + flag)
            value = piecewise(given, sympy.Eq, present, sympy.Integer(1), value)
        return value
    return None
