"""A line-preserving mini preprocessor: strip comments and expand the file's own macros.

Unknown macros in statement position (`ADD_OP ADD_OP`) defeat any grammar, and accessor
macros (`#define A(i,j) a[(i)*n+(j)]`) hide memory traffic from counting, so object- and
function-like macros defined in the file or its local headers are expanded before parsing.
Every expansion keeps the line count of what it replaces, so reported lines stay the file's
lines. Conditional directives are left to the grammar; `#define` lines stay as written.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_GROWTH = 8  # stop expanding once the text is this many times its original size
MAX_DEPTH = 12

_COMMENTS = re.compile(
    r'(//[^\n]*|/\*.*?\*/)|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S
)
_WORD = re.compile(r"[A-Za-z_]\w*")
_IDENT_OR_STRING = re.compile(
    r'(?P<string>"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\')|(?<![\w.])(?P<ident>[A-Za-z_]\w*)'
)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)$")
_DIRECTIVE = re.compile(r"^[ \t]*#")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


@dataclass(frozen=True)
class Macro:
    params: tuple[str, ...] | None  # None: object-like
    body: str
    variadic: bool = False


def includes(text: str) -> list[str]:
    return _INCLUDE.findall(text)


def collect_macros(text: str) -> dict[str, Macro]:
    """#define lines (with backslash continuations) -> macros; comments removed from bodies."""
    macros: dict[str, Macro] = {}
    lines = text.replace("\\\r\n", "\\\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i]
        i += 1
        match = _DEFINE.match(line)
        if not match:
            continue
        name, params, body = match.group(1), match.group(2), match.group(3)
        body = re.sub(r"/\*.*?\*/", " ", body)
        body = body.split("//")[0].strip()
        if params is not None:
            names = [p.strip() for p in params[1:-1].split(",") if p.strip()]
            variadic = bool(names) and names[-1].endswith("...")
            if variadic:
                names[-1] = names[-1][:-3].strip() or "__VA_ARGS__"
            macros[name] = Macro(tuple(names), body, variadic)
        else:
            macros[name] = Macro(None, body)
    return macros


def strip_comments(text: str) -> str:
    """Comments become spaces (newlines kept): what the compiler and the model should see."""
    if "/" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        comment = m.group(1)
        if comment:
            return " " * len(comment) if "\n" not in comment else re.sub(r"[^\n]", " ", comment)
        return m.group(0)

    return _COMMENTS.sub(repl, text)


class _Expander:
    def __init__(self, macros: Mapping[str, Macro], budget: int) -> None:
        self.macros = macros
        self.budget = budget
        self.names = frozenset(macros)

    def expand(self, text: str, hidden: frozenset[str] = frozenset(), depth: int = 0) -> str:
        out: list[str] = []
        pos = 0
        if depth > MAX_DEPTH or self.names.isdisjoint(_WORD.findall(text)):
            return text
        for m in _IDENT_OR_STRING.finditer(text):
            name = m.group("ident")
            if name is None or name in hidden or name not in self.macros or depth > MAX_DEPTH:
                continue
            if m.start() < pos:
                continue
            macro = self.macros[name]
            end = m.end()
            if macro.params is None:
                replacement = self.expand(macro.body, hidden | {name}, depth + 1)
            else:
                call = _call_args(text, end)
                if call is None:
                    continue
                args, end = call
                replacement = self.expand(self.substitute(macro, args, hidden, depth),
                                          hidden | {name}, depth + 1)
            consumed = text[m.start():end]
            self.budget -= max(0, len(replacement) - len(consumed))
            if self.budget < 0:
                break
            out.append(text[pos:m.start()])
            out.append(replacement.replace("\n", " ") + "\n" * consumed.count("\n"))
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def substitute(self, macro: Macro, args: list[str], hidden: frozenset[str], depth: int) -> str:
        params = macro.params or ()
        values: dict[str, str] = {}
        for i, p in enumerate(params):
            if macro.variadic and i == len(params) - 1:
                values[p] = ", ".join(args[i:])
            else:
                values[p] = args[i].strip() if i < len(args) else ""
        body = macro.body
        body = re.sub(r"#\s*([A-Za-z_]\w*)",
                      lambda m: '"' + values[m.group(1)] + '"' if m.group(1) in values else m.group(0),
                      body.replace("##", "\0"))
        expanded = {p: self.expand(v, hidden, depth + 1) for p, v in values.items()}

        def token(m: re.Match[str]) -> str:
            word = m.group(0)
            return expanded.get(word, word)

        body = re.sub(r"[A-Za-z_]\w*", token, body)
        return re.sub(r"\s*\0\s*", "", body)


def _call_args(text: str, pos: int) -> tuple[list[str], int] | None:
    """Arguments of a function-like macro call starting at `pos` (after the name)."""
    i = pos
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    if i >= len(text) or text[i] != "(":
        return None
    depth, start, args = 0, i + 1, []
    j = i
    while j < len(text):
        ch = text[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[start:j])
                return ([a for a in args] if args != [""] else []), j + 1
        elif ch == "," and depth == 1:
            args.append(text[start:j])
            start = j + 1
        elif ch == '"':
            j += 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
        j += 1
    return None


def preprocess(text: str, macros: Mapping[str, Macro], comments_stripped: bool = False) -> str:
    """Comments stripped; macros expanded outside directives (and inside `#pragma` lines)."""
    if not comments_stripped:
        text = strip_comments(text)
    if not macros:
        return text
    expander = _Expander(macros, budget=len(text) * (MAX_GROWTH - 1))
    lines = text.split("\n")
    out: list[str] = []
    chunk: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _DIRECTIVE.match(line):
            if chunk:
                out.append(expander.expand("\n".join(chunk)))
                chunk = []
            block = [line]
            while block[-1].endswith("\\") and i + 1 < len(lines):
                i += 1
                block.append(lines[i])
            joined = "\n".join(block)
            if re.match(r"^[ \t]*#[ \t]*pragma\b", line):
                joined = expander.expand(joined)
            out.append(joined)
        else:
            chunk.append(line)
        i += 1
    if chunk:
        out.append(expander.expand("\n".join(chunk)))
    return "\n".join(out)
