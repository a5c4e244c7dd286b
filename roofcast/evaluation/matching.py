"""Match manifest rows to the kernels the analyzer finds under `sources/<target>/`.

CUDA rows match by function name (taken from the profiled signature, since ncu's `-k` short
name is sometimes only a prefix), with parameter types and template arguments breaking ties.
OpenMP rows match by the bare enclosing-function name and the pragma line (exact first, then
within +-2 lines). Each target folder is discovered once and cached.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from roofcast.analyzer.model import FileProblem, KernelIR
from roofcast.evaluation.manifest import ManifestRow

#: How far a pragma line may be from the profiled `omp_line` and still match (recorded).
LINE_TOLERANCE = 2

_ANON = re.compile(r"\(anonymous namespace\)::")
_MANGLED = re.compile(r"^_Z")
_OMP_ENTRY = re.compile(r"__omp_offloading_([0-9a-fA-F]+)_([0-9a-fA-F]+)_(.+)_l(\d+)$")


# ---------------------------------------------------------------- signature parsing


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


def _type_score(profiled: str, declared: str) -> float:
    """1 for the same type, 0.75 for a template placeholder (T1 *) of the same pointer depth,
    0.5 for the same pointer depth only, 0 otherwise."""
    p, d = normalise_type(profiled), normalise_type(declared)
    if p == d:
        return 1.0
    if p.count("*") != d.count("*"):
        return 0.0
    base = p.replace("*", "").replace("&", "")
    return 0.75 if _PLACEHOLDER.match(base) else 0.5


def signature_score(signature: Signature, ir: KernelIR) -> float:
    """How well a kernel's declaration fits a profiled signature (higher is better)."""
    score = 0.0
    if signature.param_types is not None and len(signature.param_types) == len(ir.params):
        score += 10.0
        if ir.params:
            score += 5.0 * sum(
                _type_score(p, q.type)
                for p, q in zip(signature.param_types, ir.params, strict=True)
            ) / len(ir.params)
    if signature.template_args:
        if len(signature.template_args) == len(ir.template_params):
            score += 3.0
        elif ir.template_params:
            score += 1.0
    elif not ir.template_params:
        score += 1.0
    if ir.launches:
        score += 0.5  # a kernel the program launches beats an unused copy of it
    return score


def template_bindings(signature: Signature, ir: KernelIR) -> dict[str, str]:
    """Bind the kernel's template parameter names to the profiled instance's arguments,
    as `--define T=double` would: `void k<double, 128>` with `template <typename T, int B>`."""
    names = [_template_param_name(p) for p in ir.template_params]
    out: dict[str, str] = {}
    for name, value in zip(names, signature.template_args, strict=False):
        value = value.strip()
        value = re.sub(r"^\((?:[\w:]+)\)", "", value)  # '(MorphOpType)0' -> '0'
        if name and value:
            out[name] = value
    return out


def _template_param_name(text: str) -> str:
    text = text.split("=", 1)[0].strip().rstrip(".").strip()
    m = re.search(r"([A-Za-z_]\w*)\s*$", text)
    return m.group(1) if m else ""


# ---------------------------------------------------------------- matching


@dataclass
class Match:
    """Which kernel a row matched, or why none did; `note` records any leniency used."""

    row: ManifestRow
    kernel: KernelIR | None = None
    reason: str = ""  # why unmatched ('' when matched)
    note: str = ""  # e.g. 'line +1', 'ambiguous: 2 candidates, chose by signature'
    defines: dict[str, str] = field(default_factory=dict)  # template bindings for this row
    candidates: int = 0

    @property
    def matched(self) -> bool:
        return self.kernel is not None

    def to_json(self) -> dict:
        out: dict = {"row": self.row.index, "target": self.row.target, "language":
                     self.row.language, "kernel": self.row.key}
        if self.kernel is not None:
            out["file"] = self.kernel.file
            out["line"] = self.kernel.line
        if self.reason:
            out["reason"] = self.reason
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class TargetKernels:
    """What the analyzer found in one target folder."""

    target: str
    kernels: list[KernelIR] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    error: str = ""  # the folder could not be analyzed at all

    def by_name(self, language: str, name: str) -> list[KernelIR]:
        lang = "cuda" if language == "CUDA" else "openmp"
        return [k for k in self.kernels if k.language == lang and last_component(k.name) == name]


Discover = Callable[[Path, Mapping[str, str]], TargetKernels]


def discover_target(folder: Path, defines: Mapping[str, str]) -> TargetKernels:
    """Run the analyzer's discovery over one target folder; never raises."""
    target = folder.name
    if not folder.is_dir():
        return TargetKernels(target, error=f"no source folder {folder}")
    try:
        from roofcast.analyzer import discover

        found = discover([folder], dict(defines))
    except Exception as exc:  # analyzer failure of a whole folder is a miss, not a crash
        return TargetKernels(target, error=f"discovery failed: {type(exc).__name__}: {exc}")
    return TargetKernels(target, list(found.kernels), list(found.problems))


class SourceIndex:
    """Discovers each `sources/<target>/` once (cache) and matches rows against it."""

    def __init__(
        self,
        sources: Path | str,
        defines: Mapping[str, str] | None = None,
        discover: Discover = discover_target,
    ) -> None:
        self.sources = Path(sources)
        self.defines = dict(defines or {})
        self._discover = discover
        self._cache: dict[str, TargetKernels] = {}

    def target(self, name: str) -> TargetKernels:
        if name not in self._cache:
            self._cache[name] = self._discover(self.sources / name, self.defines)
        return self._cache[name]

    def match_all(self, rows: Sequence[ManifestRow]) -> list[Match]:
        """Match every row; ambiguous OpenMP regions sharing function+line are paired by
        the offload entry's file id order (file ids follow the files' order on disk)."""
        matches = [self.match(row) for row in rows]
        _pair_same_line_regions(matches, self)
        return matches

    def match(self, row: ManifestRow) -> Match:
        found = self.target(row.target)
        if found.error:
            return Match(row, reason=found.error)
        if row.language == "CUDA":
            return _match_cuda(row, found)
        return _match_omp(row, found)


def _match_cuda(row: ManifestRow, found: TargetKernels) -> Match:
    signature = parse_signature(row.kernel_signature) if row.kernel_signature else None
    names = [n for n in (signature.name if signature else "", row.kernel) if n]
    candidates: list[KernelIR] = []
    for name in dict.fromkeys(names):
        candidates = found.by_name("CUDA", name)
        if candidates:
            break
    if not candidates:
        return Match(row, reason=f"no __global__ kernel named {names[0]!r} found"
                     + _problems_hint(found))
    note = ""
    best = candidates[0]
    if len(candidates) > 1 and signature is not None:
        scored = sorted(candidates, key=lambda k: -signature_score(signature, k))
        best = scored[0]
        note = f"{len(candidates)} candidates, chose {best.file}:{best.line} by signature"
    elif len(candidates) > 1:
        note = f"{len(candidates)} candidates, chose the first"
    defines = template_bindings(signature, best) if signature else {}
    return Match(row, best, note=note, defines=defines, candidates=len(candidates))


def _match_omp(row: ManifestRow, found: TargetKernels) -> Match:
    name = bare_function_name(row.omp_function)
    line = row.omp_line or 0
    in_function = found.by_name("OMP", name)
    exact = [k for k in in_function if k.line == line]
    signature = parse_signature(row.omp_function)
    if exact:
        note = f"{len(exact)} regions at this line" if len(exact) > 1 else ""
        return Match(row, exact[0], note=note, candidates=len(exact),
                     defines=template_bindings(signature, exact[0]))
    near = sorted(
        (k for k in in_function if abs(k.line - line) <= LINE_TOLERANCE),
        key=lambda k: abs(k.line - line),
    )
    if near:
        offset = near[0].line - line
        return Match(row, near[0], note=f"line {offset:+d}", candidates=len(near),
                     defines=template_bindings(signature, near[0]))
    same_line = [k for k in found.kernels if k.language == "openmp" and k.line == line]
    if len(same_line) == 1:
        other = same_line[0]
        return Match(row, other, note=f"function named {other.name!r} by the analyzer",
                     candidates=1)
    if in_function:
        lines = ", ".join(str(k.line) for k in sorted(in_function, key=lambda k: k.line))
        return Match(row, reason=f"no target region at line {line} in {name}() "
                     f"(regions at lines {lines})", candidates=len(in_function))
    return Match(row, reason=f"no target region in a function named {name!r}"
                 + _problems_hint(found))


def _problems_hint(found: TargetKernels) -> str:
    if not found.problems:
        return ""
    return f" ({len(found.problems)} file problem(s), first: {found.problems[0].message})"


def _pair_same_line_regions(matches: list[Match], index: SourceIndex) -> None:
    """Rows that share (target, function, line) with several regions at that line are
    paired with the regions in file order by the entries' file ids."""
    groups: dict[tuple[str, str, int], list[Match]] = defaultdict(list)
    for m in matches:
        if m.kernel is not None and m.row.language == "OMP" and m.candidates > 1 \
                and not m.note.startswith("line"):
            groups[(m.row.target, bare_function_name(m.row.omp_function), m.kernel.line)] \
                .append(m)
    for (target, name, line), group in groups.items():
        regions = sorted(
            (k for k in index.target(target).by_name("OMP", name) if k.line == line),
            key=lambda k: k.file,
        )
        ids = [omp_entry_parts(m.row.kernel_signature) for m in group]
        if any(i is None for i in ids) or len(regions) < 2:
            continue
        ordered = sorted(zip(ids, group, strict=True), key=lambda pair: pair[0][0])  # type: ignore[index]
        if len(ordered) != len(regions):
            for _, m in ordered:
                m.note = f"{len(regions)} regions at this line for {len(ordered)} rows; first"
            continue
        for (_, m), region in zip(ordered, regions, strict=True):
            m.kernel = region
            m.note = "same function and line in several files: paired by file id order"
