"""A line-preserving mini preprocessor: strip comments and expand the file's own macros.

Unknown macros in statement position (`ADD_OP ADD_OP`) defeat any grammar, and accessor
macros (`#define A(i,j) a[(i)*n+(j)]`) hide memory traffic from counting, so object- and
function-like macros defined in the file or its local headers are expanded before parsing,
where cpp would expand them: a file's own macro from its `#define` line on (its headers' from
the top), a function-like one only when called with its number of arguments.
Every expansion keeps the line count of what it replaces, so reported lines stay the file's
lines. Conditionals keep the arm cpp keeps (`resolve_conditionals`, `ppexpr`); directive
lines become empty, `#define` lines stay as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from roofcast.analyzer.ppexpr import Condition, evaluate_condition, is_reserved

MAX_GROWTH = 8  # stop expanding once the text is this many times its original size,
#: or this many characters larger, whichever is more: a cap on macros that grow
#: exponentially, not on accessor macros used on every line (each use may grow 20-fold)
MIN_EXPANSION_BUDGET = 1 << 21
MAX_DEPTH = 12
#: up to this many macros, the names a text uses are found by substring tests, not by
#: listing its every identifier
_FEW_NAMES = 20

#: a comment, or a string or character literal (in which `//` and `/*` are not comments);
#: every alternative starts with a character, so the regex engine skips ahead to the next one
_COMMENTS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_NOT_NEWLINE = re.compile(r"[^\n]")
_WORD = re.compile(r"[A-Za-z_]\w*")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)$")
_DIRECTIVE = re.compile(r"^[ \t]*#")
# Directives from their `#` (see `_directives` for the blanks before it on its line):
#: a directive and the lines its trailing backslashes continue it onto
_DIRECTIVE_BLOCK = re.compile(r"#[^\n]*(?:(?<=\\)\n[^\n]*)*")
_DEFINE_LINE = re.compile(r"#[ \t]*define[ \t]")
#: a comment between `#`, `define` and the name (rare: the common case skips stripping)
_COMMENT_IN_DIRECTIVE = re.compile(r"#[ \t]*(?:define[ \t]*)?/\*")
_INCLUDE = re.compile(r'#[ \t]*include[ \t]*"([^"]+)"')
_DEFINE_OR_UNDEF = re.compile(r"[ \t]*#[ \t]*(?:define|undef)[ \t]")


@dataclass(frozen=True)
class Macro:
    params: tuple[str, ...] | None  # None: object-like
    body: str
    variadic: bool = False


def _directives(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """(start of the line, match) of `pattern`, which starts at a `#`, on lines where only
    blanks come before that `#`: what `^[ \t]*` followed by the pattern finds line by line
    (re.M), found by searching for `#` instead of trying the pattern at every line start."""
    pos = 0
    while (match := pattern.search(text, pos)) is not None:
        hash_at = match.start()
        line_start = text.rfind("\n", 0, hash_at) + 1
        if text[line_start:hash_at].strip(" \t"):
            pos = hash_at + 1  # code before the `#`: not a directive
            continue
        yield line_start, match
        pos = match.end()


def includes(text: str) -> list[str]:
    return [match.group(1) for _, match in _directives(_INCLUDE, text)]


def collect_macros(text: str) -> dict[str, Macro]:
    """#define lines (with backslash continuations) -> macros; comments removed from bodies.

    The regex jumps from one `#define` to the next instead of Python visiting every line."""
    macros: dict[str, Macro] = {}
    if "define" not in text:
        return macros
    if _COMMENT_IN_DIRECTIVE.search(text):
        text = strip_comments(text)  # `#define /* c */ N 1` defines N, as cpp reads it
    text = text.replace("\\\r\n", "\\\n")
    for start, _ in _directives(_DEFINE_LINE, text):
        if start >= 2 and text[start - 2] == "\\":
            continue  # this line continues the previous one: not a directive of its own
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        while line.endswith("\\") and end >= 0:
            nxt = text.find("\n", end + 1)
            line = line[:-1] + " " + (text[end + 1 :] if nxt < 0 else text[end + 1 : nxt])
            end = nxt
        found_macro = _macro_of(line)
        if found_macro is None:
            continue
        name, macro = found_macro
        if name in macros and macros[name].body:
            continue  # first non-empty definition wins: the first arm of `#ifdef A ... #else`
        macros[name] = macro
    return macros


def _macro_of(line: str) -> tuple[str, Macro] | None:
    """The macro a `#define` line (continuations joined) defines; comments removed."""
    match = _DEFINE.match(line)
    if not match:
        return None
    name, params, body = match.group(1), match.group(2), match.group(3)
    body = re.sub(r"/\*.*?\*/", " ", body)
    body = body.split("//")[0].strip()
    if params is None:
        return name, Macro(None, body)
    names = [p.strip() for p in params[1:-1].split(",") if p.strip()]
    variadic = bool(names) and names[-1].endswith("...")
    if variadic:
        names[-1] = names[-1][:-3].strip() or "__VA_ARGS__"
    return name, Macro(tuple(names), body, variadic)


def strip_comments(text: str) -> str:
    """Comments become spaces (newlines kept): what the compiler and the model should see."""
    if "/" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        found = m.group(0)
        if found[0] != "/":
            return found  # a string or character literal
        return " " * len(found) if "\n" not in found else _NOT_NEWLINE.sub(" ", found)

    return _COMMENTS.sub(repl, text)


@lru_cache(maxsize=2048)
def _macro_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """Uses of these macro names not followed by an identifier character: the regex engine
    steps over every other identifier, rather than Python looking at each one. A pattern is
    compiled for every new set of names met, so it holds nothing else: string literals are
    found by `_STRING`, and what precedes a use is checked by `_continues_a_word` (a pattern
    that starts with a look-behind cannot skip ahead to the names' first characters)."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?:{alternatives})(?!\w)")


def _continues_a_word(text: str, start: int) -> bool:
    """Whether a name found at `start` is the tail of a longer identifier or a member (`s.N`)."""
    if start == 0:
        return False
    before = text[start - 1]
    return before.isalnum() or before in "_."


_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')


def _string_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each string or character literal, scanned left to right as the
    compiler does: a macro name inside one is not a use."""
    if '"' not in text and "'" not in text:
        return []
    return [m.span() for m in _STRING.finditer(text)]


class _Expander:
    def __init__(
        self,
        macros: Mapping[str, Macro],
        budget: int,
        deferred: frozenset[str] = frozenset(),
        pinned: frozenset[str] = frozenset(),
        reuse_calls: bool = True,
    ) -> None:
        self.macros = macros
        self.budget = budget
        self.pinned = pinned
        self.names = frozenset(macros).difference(deferred)  # deferred: active from a #define
        self.object_like: dict[tuple[str, frozenset[str], int], str] = {}
        #: a function-like call met again (`A(i, j)` on every line): (its expansion, the
        #: budget its expansion spent), reused while no expansion is ever refused (`refused`)
        self.calls: dict[tuple[str, tuple[str, ...], frozenset[str], int], tuple[str, int]] = {}
        self.reuse_calls = reuse_calls
        #: whether the budget refused an expansion: a run reusing calls is then redone
        #: without (reused calls spend their first expansion's budget, maybe more than anew)
        self.refused = False
        self._own_table: dict[str, Macro] | None = None  # a copy, once a directive changes it

    def directive(self, block: str) -> None:
        """A `#define` or `#undef` (in an arm the conditionals kept) has been passed: as with
        cpp, the macro expands with this definition, or no longer, from here on. A deferred
        macro starts expanding at its first `#define`; `pinned` ones (--define) never change."""
        if undef := _UNDEF.match(block):
            name = undef.group(1)
            if name in self.names and name not in self.pinned:
                self.names = self.names - {name}
                self.object_like.clear()  # a cached expansion may hold the old body
                self.calls.clear()
            return
        found = _macro_of(block.replace("\\\r\n", "\\\n").replace("\\\n", " "))
        if found is None or found[0] in self.pinned:
            return
        name, macro = found
        if name in self.names and self.macros.get(name) == macro:
            return  # the definition the text was already expanded with
        # the caller's table (shared by files) stays as it is
        table = self._own_table if self._own_table is not None else dict(self.macros)
        table[name] = macro
        self.macros = self._own_table = table
        self.names = self.names | {name}
        self.object_like.clear()
        self.calls.clear()

    def expand(self, text: str, hidden: frozenset[str] = frozenset(), depth: int = 0) -> str:
        out: list[str] = []
        pos = 0
        if depth > MAX_DEPTH:
            return text
        if len(self.names) <= _FEW_NAMES:
            # substring tests (C speed) give a superset of the names used, just as good for
            # building the pattern: it matches whole tokens only
            present = frozenset(name for name in self.names if name in text)
        else:
            present = self.names.intersection(_WORD.findall(text))
        if not present:
            return text
        strings = _string_spans(text)
        k = 0  # the first literal that does not end before the match
        for m in _macro_pattern(present).finditer(text):
            start = m.start()
            while k < len(strings) and strings[k][1] <= start:
                k += 1
            if k < len(strings) and strings[k][0] < start:
                continue  # inside a string literal
            if _continues_a_word(text, start):
                continue
            name = m.group(0)
            if name in hidden or start < pos:  # a macro being expanded, or already replaced
                continue
            macro = self.macros[name]
            end = m.end()
            if macro.params is None:
                key = (name, hidden, depth)
                replacement = self.object_like.get(key)
                if replacement is None:  # the same constant is met hundreds of times
                    replacement = self.expand(macro.body, hidden | {name}, depth + 1)
                    self.object_like[key] = replacement
            else:
                call = _call_args(text, end)
                if call is None or not _arity_fits(macro, call[0]):
                    continue  # not a call, or one cpp would reject (`static T min()`)
                args, end = call
                replacement = self._call(name, macro, args, hidden, depth)
            consumed = text[m.start() : end]
            growth = len(replacement) - len(consumed)
            if growth > 16 and self.budget - growth < 0:
                self.refused = True
                continue  # over budget: keep only expansions that do not grow the text
            self.budget -= max(0, growth)
            out.append(text[pos : m.start()])
            out.append(replacement.replace("\n", " ") + "\n" * consumed.count("\n"))
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def _call(
        self, name: str, macro: Macro, args: list[str], hidden: frozenset[str], depth: int
    ) -> str:
        """A function-like macro call's expansion. One met before with the same arguments
        (and the same macros: a directive forgets them) expanded to the same text, as long
        as no expansion was refused; it spends that expansion's budget again, if there is
        as much left (else it is expanded anew)."""
        key = (name, tuple(args), hidden, depth)
        found = self.calls.get(key) if self.reuse_calls else None
        if found is not None and self.budget >= found[1]:
            self.budget -= found[1]
            return found[0]
        budget = self.budget
        replacement = self.expand(
            self.substitute(macro, args, hidden, depth), hidden | {name}, depth + 1
        )
        if self.reuse_calls:
            self.calls[key] = (replacement, budget - self.budget)
        return replacement

    def substitute(self, macro: Macro, args: list[str], hidden: frozenset[str], depth: int) -> str:
        params = macro.params or ()
        values: dict[str, str] = {}
        for i, p in enumerate(params):
            if macro.variadic and i == len(params) - 1:
                values[p] = ", ".join(args[i:])
            else:
                values[p] = args[i].strip() if i < len(args) else ""
        body = macro.body
        body = _STRINGIZE.sub(
            lambda m: '"' + values[m.group(1)] + '"' if m.group(1) in values else m.group(0),
            body.replace("##", "\0"),
        )
        expanded = {p: self.expand(v, hidden, depth + 1) for p, v in values.items()}

        def token(m: re.Match[str]) -> str:
            word = m.group(0)
            return expanded.get(word, word)

        body = _WORD.sub(token, body)
        return _PASTE.sub("", body) if "\0" in body else body


_ARGUMENT_PUNCTUATION = re.compile(r'[()\[\]{},"]')
_SPACE = re.compile(r"[ \t\r\n]*")


def _call_args(text: str, pos: int) -> tuple[list[str], int] | None:
    """Arguments of a function-like macro call starting at `pos` (after the name)."""
    i = _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # matches the empty string
    if i >= len(text) or text[i] != "(":
        return None
    depth, start, args = 0, i + 1, []
    j = i
    while (found := _ARGUMENT_PUNCTUATION.search(text, j)) is not None:
        j = found.start()
        ch = text[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[start:j])
                return (args if args != [""] else []), j + 1
        elif ch == ",":
            if depth == 1:
                args.append(text[start:j])
                start = j + 1
        else:  # a string literal: its commas and parentheses are not the call's
            j += 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
        j += 1
    return None


def _arity_fits(macro: Macro, args: list[str]) -> bool:
    """Whether cpp would expand this call: a function-like macro takes exactly its parameters'
    number of arguments (a variadic one at least the named ones; `f()` is one empty argument).
    A method that shares a macro's name (`min()` in a class, `min` a two-parameter macro
    elsewhere in the file) is left alone, as cpp would refuse it."""
    wanted = len(macro.params or ())
    given = len(args) if args else (1 if wanted else 0)  # `f()`: one empty argument
    if wanted == 0 and len(args) == 1 and not args[0].strip():
        given = 0  # `F( )` for `#define F() ...`
    if macro.variadic:
        return given >= wanted - 1
    return given == wanted


_UNDEF = re.compile(r"^[ \t]*#[ \t]*undef[ \t]+(\w+)")
_PRAGMA = re.compile(r"^[ \t]*#[ \t]*pragma\b")
_STRINGIZE = re.compile(r"#\s*([A-Za-z_]\w*)")
_PASTE = re.compile(r"\s*\0\s*")
_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
#: what nvcc / an OpenMP compiler predefine; other unknown names make a condition undecidable
KNOWN_DEFINED = frozenset({"__CUDACC__", "__NVCC__", "__CUDA_ARCH__", "_OPENMP", "__cplusplus"})
KNOWN_UNDEFINED = frozenset(
    {
        "__HIPCC__",
        "__HIP_PLATFORM_AMD__",
        "__HIP_PLATFORM_HCC__",
        "__SYCL_DEVICE_ONLY__",
        "SYCL_LANGUAGE_VERSION",
        "_WIN32",
        "_MSC_VER",
    }
)


#: what the standard and CUDA headers define (files include them; their values stay unknown)
HEADER_DEFINED = frozenset(
    {
        "NULL", "EXIT_SUCCESS", "EXIT_FAILURE", "RAND_MAX", "CHAR_BIT", "SIZE_MAX",
        "INT_MAX", "INT_MIN", "UINT_MAX", "LONG_MAX", "LONG_MIN", "ULONG_MAX", "LLONG_MAX",
        "INT32_MAX", "INT64_MAX", "UINT32_MAX", "UINT64_MAX",
        "FLT_MAX", "FLT_MIN", "FLT_EPSILON", "DBL_MAX", "DBL_MIN", "DBL_EPSILON",
        "HUGE_VAL", "HUGE_VALF", "INFINITY", "NAN", "M_PI", "M_E", "M_SQRT2", "M_LN2",
        "CUDART_VERSION", "CUDA_VERSION", "CUDART_PI_F", "CUDART_INF_F",
    }
)  # fmt: skip


def _status(name: str, undefined: frozenset[str]) -> str:
    """What is known of a name no `#define` or --define gave: `-U`, the compilers' builtins
    and the standard headers' macros first; any other name is absent (undefined, as cpp)."""
    if name in undefined:
        return "undefined"
    if name in KNOWN_DEFINED or name in HEADER_DEFINED:
        return "defined"
    if name in KNOWN_UNDEFINED:
        return "undefined"
    return "absent"


def _decide(
    kind: str,
    condition: str,
    defined: Mapping[str, str | None],
    undefined: frozenset[str] = frozenset(),
) -> Condition:
    """The truth of `#if`/`#ifdef`/`#ifndef condition` as cpp decides it: a macro that nothing
    defined (no --define, no `#define` above, no header, not a builtin) is undefined, 0 in an
    expression. Undecidable (None): a builtin's value, a name the implementation reserves
    (`__GNUC__`), a function-like macro called, a malformed or non-C condition."""
    if kind not in ("ifdef", "ifndef"):
        return evaluate_condition(condition, defined, lambda n: _status(n, undefined))
    words = condition.split()
    name = words[0] if words else ""
    if not _IDENTIFIER.fullmatch(name):
        return Condition(None)
    notes: list[str] = []
    if name in defined:
        truth: bool | None = True
    else:
        status = _status(name, undefined)
        if status == "absent" and not is_reserved(name):
            truth = False
            notes.append(name)
        else:
            truth = {"defined": True, "undefined": False}.get(status)
    if truth is None:
        return Condition(None)
    return Condition(truth if kind == "ifdef" else not truth, notes)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def resolve_conditionals(
    text: str,
    defined: Mapping[str, str | None],
    undefined: frozenset[str] = frozenset(),
    notes: list[str] | None = None,
) -> str:
    """Keep one arm of every `#if`: the one cpp keeps where that is decidable, else the first.
    Dropped lines and the conditional directives become empty lines, so line numbers do not
    move. `defined`: macro -> body (None: function-like); `undefined`: names `-U` removed.
    `notes` receives the undefined macros whose absence chose an arm (not an `#ifndef X`
    whose arm defines X: an include guard or a default value)."""
    lines = text.split("\n")
    defined = {k: v for k, v in defined.items() if k not in undefined}
    stack: list[list[bool]] = []  # per level: [this arm active, an arm already taken]
    out: list[str] = []
    active = True  # all(level[0] for level in stack), kept up to date
    chose: dict[str, bool] = {}  # undefined macro that chose an arm -> only by its #ifndef
    i = 0
    while i < len(lines):
        line = lines[i]
        if "#" not in line:  # most lines: no directive, kept or blanked as the arm says
            out.append(line if active else "")
            i += 1
            continue
        block = [line]
        while block[-1].endswith("\\") and i + 1 < len(lines) and _DIRECTIVE.match(line):
            i += 1
            block.append(lines[i])
        i += 1
        match = _CONDITIONAL.match(line)
        if match:
            kind, rest = (
                match.group(1),
                " ".join(b.rstrip("\\") for b in [match.group(2), *block[1:]]),
            )
            if kind in ("if", "ifdef", "ifndef"):
                take = False
                if active:
                    decision = _decide(kind, rest, defined, undefined)
                    _note(chose, decision, kind == "ifndef")
                    take = True if decision.value is None else decision.value
                stack.append([take and active, take])
            elif kind == "elif" and stack:
                take = False
                if not stack[-1][1] and all(level[0] for level in stack[:-1]):
                    decision = _decide("if", rest, defined, undefined)
                    _note(chose, decision, False)
                    take = decision.value is True
                stack[-1] = [take, stack[-1][1] or take]
            elif kind == "else" and stack:
                stack[-1] = [not stack[-1][1], True]
            elif kind == "endif" and stack:
                stack.pop()
            active = all(level[0] for level in stack)
            out.extend([""] * len(block))
            continue
        if active:
            match_define = _DEFINE.match(line)
            if match_define:
                name = match_define.group(1)
                if chose.get(name):
                    del chose[name]  # `#ifndef X / #define X`: a guard or a default
                if match_define.group(2) is None:
                    body = match_define.group(3).split("//")[0].strip()
                    defined.setdefault(name, body or "1")
                else:
                    defined.setdefault(name, None)
            undef = _UNDEF.match(line)
            if undef:
                defined.pop(undef.group(1), None)
        out.extend(block if active else [""] * len(block))
    if notes is not None:
        notes.extend(chose)
    return "\n".join(out)


def _note(chose: dict[str, bool], decision: Condition, by_ifndef: bool) -> None:
    """Record the undefined macros a decided condition relied on."""
    if decision.value is None:
        return
    for name in decision.undefined:
        chose[name] = chose.get(name, True) and by_ifndef


def preprocess(
    text: str,
    macros: Mapping[str, Macro],
    comments_stripped: bool = False,
    defined: Mapping[str, str | None] | None = None,
    deferred: frozenset[str] = frozenset(),
    pinned: frozenset[str] = frozenset(),
    undefined: frozenset[str] = frozenset(),
    notes: list[str] | None = None,
) -> str:
    """Comments stripped, conditionals resolved, macros expanded outside directives (and
    inside `#pragma` lines).

    `deferred` macros (the file's own, unknown to its headers) expand only after their
    `#define` line, as with cpp: a `#define PI ...` or `#define min(a,b) ...` at the end of a
    header, or in an arm the conditionals dropped, leaves the code above it as written.
    A later `#define` of a macro (after `#undef`) expands with its own body from its line on,
    and `#undef` ends a macro, except `pinned` ones (set on the command line).
    `undefined` and `notes`: see `resolve_conditionals`."""
    if not comments_stripped:
        text = strip_comments(text)
    if "#" in text:
        text = resolve_conditionals(text, defined or {}, undefined, notes)
    if not macros:
        return text
    budget = max(len(text) * (MAX_GROWTH - 1), MIN_EXPANSION_BUDGET)
    expander = _Expander(macros, budget, deferred.intersection(macros), pinned)
    expanded = _expand_text(text, expander)
    if expander.refused:  # the budget decided: as it decides without reused calls
        expander = _Expander(macros, budget, deferred.intersection(macros), pinned, False)
        expanded = _expand_text(text, expander)
    return expanded


def _expand_text(text: str, expander: _Expander) -> str:
    """Code between directive lines is expanded a chunk at a time; a directive (with its
    continuation lines) stays as written, but a #pragma's macros are expanded too."""
    out: list[str] = []
    pos = 0
    for start, block in _directives(_DIRECTIVE_BLOCK, text):
        end = block.end()
        if start > pos:
            out.append(expander.expand(text[pos : start - 1]))
        joined = text[start:end]
        if _PRAGMA.match(joined):
            joined = expander.expand(joined)
        elif _DEFINE_OR_UNDEF.match(joined):
            expander.directive(joined)
        out.append(joined)
        pos = end + 1
    if pos <= len(text):
        out.append(expander.expand(text[pos:]))
    return "\n".join(out)
