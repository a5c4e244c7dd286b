"""Demangled signatures taken apart: names, template arguments, parameter types.

ncu reports CUDA kernels by demangled signature (`void k<float>(T1 *, int)`) and OpenMP
regions by their enclosing function (`void RunTest<float>(std::string, OptionParser&)`);
the analyzer reports bare names and declared parameter types. These helpers bridge the two.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_ANON = re.compile(r"\(anonymous namespace\)::")
_MANGLED = re.compile(r"^_Z")
_OMP_ENTRY = re.compile(r"__omp_offloading_([0-9a-fA-F]+)_([0-9a-fA-F]+)_(.+)_l(\d+)$")


def _top_level_paren(text: str) -> int:
    """Index of the '(' that opens the parameter list (outside <...>), or -1."""
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "<":
            depth += 1
        elif ch == ">" and depth > 0:
            depth -= 1
        elif ch == "(" and depth == 0:
            if text[:i].rstrip().endswith("operator") and text.startswith("()", i):
                i += 2  # the name `operator()`, not its parameter list
                continue
            return i
        i += 1
    return -1


def _closing(text: str, start: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside <...>, (...), [...]."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail or out:
        out.append(tail)
    return [p for p in out if p]


def _demangle_name(symbol: str) -> str:
    """Function name out of an Itanium-mangled symbol (`_ZL14timedReductionPKf...`)."""
    s = symbol[2:]
    s = s.lstrip("L")
    nested = s.startswith("N")
    if nested:
        s = s[1:]
        while s and s[0] in "rVK":  # cv-qualifiers of member functions
            s = s[1:]
    parts: list[str] = []
    while s and s[0].isdigit():
        m = re.match(r"(\d+)", s)
        assert m is not None
        n = int(m.group(1))
        s = s[m.end() :]
        parts.append(s[:n])
        s = s[n:]
        if not nested:
            break
        if s.startswith("I"):  # template args of a nested component: stop, name is known
            break
    return "::".join(parts) if parts else symbol


@dataclass(frozen=True)
class Signature:
    """A demangled function signature taken apart."""

    qualified_name: str  # e.g. 'miniFE::dot' or 'allenCahn'
    template_args: tuple[str, ...] = ()
    param_types: tuple[str, ...] | None = None  # None when unknown (mangled, bare name)

    @property
    def name(self) -> str:
        """Last `::` component: what the analyzer calls the function."""
        return last_component(self.qualified_name)


def last_component(name: str) -> str:
    """'A::B<int>::f' -> 'f'; 'operator()' stays; templates args dropped."""
    parts = _split_scope(name)
    last = parts[-1] if parts else name
    return _strip_template(last).strip()


def _split_scope(name: str) -> list[str]:
    parts, depth, start, i = [], 0, 0, 0
    while i < len(name):
        ch = name[i]
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0 and name.startswith("::", i):
            parts.append(name[start:i])
            start = i + 2
            i += 1
        i += 1
    parts.append(name[start:])
    return [p for p in parts if p]


def _strip_template(name: str) -> str:
    name = name.strip()
    if name.endswith(">") and "<" in name and not name.startswith("operator"):
        depth = 0
        for j in range(len(name) - 1, -1, -1):
            if name[j] == ">":
                depth += 1
            elif name[j] == "<":
                depth -= 1
                if depth == 0:
                    return name[:j]
    return name


def parse_signature(text: str) -> Signature:
    """'void k<float, 2>(float *, int)' -> Signature('k', ('float', '2'), ('float *', 'int')).

    Handles return types (`void`, `miniFE::X<...>::type`), namespaces and class scopes,
    template arguments holding parentheses (`morphology<(Op)0>`), `operator()`,
    `(anonymous namespace)::`, and Itanium-mangled names (`_ZL3fooPf` -> 'foo').
    """
    text = _ANON.sub("", (text or "").strip())
    if _MANGLED.match(text):
        return Signature(_demangle_name(text))
    open_at = _top_level_paren(text)
    head = text if open_at < 0 else text[:open_at]
    params: tuple[str, ...] | None = None
    if open_at >= 0:
        close = _closing(text, open_at, "(", ")")
        inner = text[open_at + 1 : close].strip()
        params = () if inner in ("", "void") else tuple(_split_top(inner))
    head = head.strip()
    template_args: tuple[str, ...] = ()
    stripped = _strip_template(head)
    if stripped != head and not head.endswith("operator>"):
        template_args = tuple(_split_top(head[len(stripped) + 1 : -1]))
        head = stripped
    # the name is the last token at depth 0 (anything before it is the return type)
    depth, start = 0, 0
    for j, ch in enumerate(head):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch in " *&" and depth == 0:
            start = j + 1
    name = head[start:].strip() or head.strip()
    return Signature(name, template_args, params)


def bare_function_name(text: str) -> str:
    """Demangled function text -> the bare name the analyzer reports.

    'calculateForce(double (*) [400]...)' -> 'calculateForce';
    'void RunTest<float>(std::string, OptionParser&)' -> 'RunTest'; 'A::f()' -> 'f'.
    """
    return parse_signature(text).name


def omp_entry_parts(kernel_signature: str) -> tuple[int, str, int] | None:
    """'__omp_offloading_<dev>_<fileid>_<mangled>_l<line>' -> (file id, mangled, line)."""
    m = _OMP_ENTRY.match(kernel_signature or "")
    if not m:
        return None
    return int(m.group(2), 16), m.group(3), int(m.group(4))


# ---------------------------------------------------------------- type comparison

_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|class|"
                         r"typename|enum|__global__|__device__|__shared__)\b")
_PLACEHOLDER = re.compile(r"^T\d+$")


def normalise_type(text: str) -> str:
    """Spelling-insensitive type text: no qualifiers or spaces; each array rank reads as a
    pointer level (`double (*)[4][4]`, `double a[][4][4]` and `double ***` agree)."""
    t = _QUALIFIERS.sub(" ", text)
    t = re.sub(r"\s+", "", t)
    t = t.replace("(*)", "*")
    ranks = len(re.findall(r"\[\w*\]", t))  # array ranks read as pointer levels
    t = re.sub(r"\[\w*\]", "", t) + "*" * ranks
    t = t.replace("unsignedlonglong", "unsigned long long").replace("unsignedlong", "unsigned long")
    t = t.replace("unsignedint", "unsigned int").replace("unsignedchar", "unsigned char")
    t = t.replace("size_t", "unsigned long")
    return t


def type_score(profiled: str, declared: str) -> float:
    """1 for the same type, 0.75 for a template placeholder (T1 *) of the same pointer depth,
    0.5 for the same pointer depth only, 0 otherwise."""
    p, d = normalise_type(profiled), normalise_type(declared)
    if p == d:
        return 1.0
    if p.count("*") != d.count("*"):
        return 0.0
    base = p.replace("*", "").replace("&", "")
    return 0.75 if _PLACEHOLDER.match(base) else 0.5
