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
from functools import partial
from pathlib import Path

from roofcast.analyzer.compdb import CompileDatabase
from roofcast.analyzer.model import FileProblem, KernelIR
from roofcast.evaluation.manifest import ManifestRow
from roofcast.evaluation.signatures import (
    Signature,
    bare_function_name,
    last_component,
    normalise_type,
    omp_entry_parts,
    parse_signature,
    type_score,
)

__all__ = [
    "Match",
    "SourceIndex",
    "TargetKernels",
    "bare_function_name",
    "discover_target",
    "last_component",
    "normalise_type",
    "omp_entry_parts",
    "parse_signature",
    "rank_candidates",
    "signature_score",
    "template_bindings",
]

#: How far a pragma line may be from the profiled `omp_line` and still match (recorded).
LINE_TOLERANCE = 2


def signature_score(signature: Signature, ir: KernelIR) -> float:
    """How well a kernel's declaration fits a profiled signature (higher is better)."""
    score = 0.0
    if signature.param_types is not None and len(signature.param_types) == len(ir.params):
        score += 10.0
        if ir.params:
            score += (
                5.0
                * sum(
                    type_score(p, q.type)
                    for p, q in zip(signature.param_types, ir.params, strict=True)
                )
                / len(ir.params)
            )
    if signature.template_args:
        if len(signature.template_args) == len(ir.template_params):
            score += 3.0
        elif ir.template_params:
            score += 1.0
    elif not ir.template_params:
        score += 1.0
    return score


def _build_mentions(folder: Path) -> str:
    """Text of the target's build files: which sources the program is really built from."""
    texts = []
    for name in ("Makefile", "makefile", "GNUmakefile", "CMakeLists.txt"):
        path = folder / name
        if path.is_file():
            texts.append(path.read_text("utf-8", errors="replace"))
    return "\n".join(texts)


def rank_candidates(
    signature: Signature | None, candidates: Sequence[KernelIR], build_text: str = ""
) -> list[KernelIR]:
    """Best first: signature fit, then a file the build names (`source = vmc2.cu`), then
    a kernel the program launches over an unused copy, then file order."""

    def key(ir: KernelIR) -> tuple[float, int, int, str]:
        fit = signature_score(signature, ir) if signature is not None else 0.0
        named = int(
            bool(build_text)
            and re.search(rf"(^|[\s/=]){re.escape(Path(ir.file).name)}\b", build_text, re.M)
            is not None
        )
        return (-fit, -named, -int(bool(ir.launches)), ir.file)

    return sorted(candidates, key=key)


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
        out: dict = {
            "row": self.row.index,
            "target": self.row.target,
            "language": self.row.language,
            "kernel": self.row.key,
        }
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
    build_text: str = ""  # Makefile / CMakeLists.txt text, to prefer built sources

    def by_name(self, language: str, name: str) -> list[KernelIR]:
        lang = "cuda" if language == "CUDA" else "openmp"
        return [k for k in self.kernels if k.language == lang and last_component(k.name) == name]


Discover = Callable[[Path, Mapping[str, str]], TargetKernels]


def discover_target(
    folder: Path,
    defines: Mapping[str, str],
    undefines: frozenset[str] = frozenset(),
    include_dirs: Sequence[Path] = (),
    database: CompileDatabase | None = None,
) -> TargetKernels:
    """Run the analyzer's discovery over one target folder; never raises. `database`: a
    compile database already relocated onto the sources (see `SourceIndex`)."""
    target = folder.name
    if not folder.is_dir():
        return TargetKernels(target, error=f"no source folder {folder}")
    try:
        from roofcast.analyzer import discover

        found = discover([folder], dict(defines), undefines, include_dirs, database)
    except Exception as exc:  # analyzer failure of a whole folder is a miss, not a crash
        return TargetKernels(target, error=f"discovery failed: {type(exc).__name__}: {exc}")
    return TargetKernels(
        target, list(found.kernels), list(found.problems), build_text=_build_mentions(folder)
    )


class SourceIndex:
    """Discovers each `sources/<target>/` once (cache) and matches rows against it.

    With a compile `database`, every target is discovered with its files' compile commands
    (the database is relocated once, onto all of `sources`); `defines` and `undefines` (the
    command line's) win over them."""

    def __init__(
        self,
        sources: Path | str,
        defines: Mapping[str, str] | None = None,
        discover: Discover | None = None,
        undefines: frozenset[str] = frozenset(),
        include_dirs: Sequence[Path] = (),
        database: CompileDatabase | None = None,
    ) -> None:
        self.sources = Path(sources)
        self.defines = {k: v for k, v in (defines or {}).items() if k not in undefines}
        self.database = None
        if database is not None and self.sources.is_dir():
            from roofcast.analyzer.sources import expand_paths

            self.database = database.relocate(expand_paths([self.sources]))
        self._discover = discover or partial(
            discover_target,
            undefines=undefines,
            include_dirs=tuple(include_dirs),
            database=self.database,
        )
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
        return Match(
            row, reason=f"no __global__ kernel named {names[0]!r} found" + _problems_hint(found)
        )
    note = ""
    best = candidates[0]
    if len(candidates) > 1:
        best = rank_candidates(signature, candidates, found.build_text)[0]
        note = f"{len(candidates)} candidates, chose {best.file}:{best.line}"
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
        return Match(
            row,
            exact[0],
            note=note,
            candidates=len(exact),
            defines=template_bindings(signature, exact[0]),
        )
    near = sorted(
        (k for k in in_function if abs(k.line - line) <= LINE_TOLERANCE),
        key=lambda k: abs(k.line - line),
    )
    if near:
        offset = near[0].line - line
        return Match(
            row,
            near[0],
            note=f"line {offset:+d}",
            candidates=len(near),
            defines=template_bindings(signature, near[0]),
        )
    same_line = [k for k in found.kernels if k.language == "openmp" and k.line == line]
    if len(same_line) == 1:
        other = same_line[0]
        return Match(
            row, other, note=f"function named {other.name!r} by the analyzer", candidates=1
        )
    if in_function:
        lines = ", ".join(str(k.line) for k in sorted(in_function, key=lambda k: k.line))
        return Match(
            row,
            reason=f"no target region at line {line} in {name}() (regions at lines {lines})",
            candidates=len(in_function),
        )
    return Match(
        row, reason=f"no target region in a function named {name!r}" + _problems_hint(found)
    )


def _problems_hint(found: TargetKernels) -> str:
    if not found.problems:
        return ""
    first = found.problems[0]
    return (
        f" ({len(found.problems)} file problem(s) in this target, first: "
        f"{Path(first.file).name}: {first.message})"
    )


def _pair_same_line_regions(matches: list[Match], index: SourceIndex) -> None:
    """Rows that share (target, function, line) with several regions at that line are
    paired with the regions in file order by the entries' file ids."""
    groups: dict[tuple[str, str, int], list[Match]] = defaultdict(list)
    for m in matches:
        if (
            m.kernel is not None
            and m.row.language == "OMP"
            and m.candidates > 1
            and not m.note.startswith("line")
        ):
            groups[(m.row.target, bare_function_name(m.row.omp_function), m.kernel.line)].append(m)
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
