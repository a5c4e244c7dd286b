"""Coverage of real code: the share of manifest kernels the analyzer finds, and why it misses.

CUDA rows count as found when a `__global__` function of that name is discovered in the
row's target folder; OpenMP rows when a target region is discovered in the named function at
the profiled pragma line (strict), or within +-2 lines / under another function name
(lenient, what `roofcast evaluate` accepts). Every miss gets a diagnosis from a plain-text
scan of the folder, so the analyzer's gaps can be fixed one group at a time.

    python bench/coverage.py --sources /path/to/HeCBench/src \
        [--manifest dev.csv] [--misses misses.txt] [--json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from rich.progress import Progress

from roofcast.evaluation.manifest import ManifestError, ManifestRow, load_manifest
from roofcast.evaluation.matching import Match, SourceIndex, bare_function_name, parse_signature

REPO = Path(__file__).resolve().parents[1]
DEFAULT_MANIFEST = REPO.parent / "shared" / "datasets" / "gpuflopbench-rtx3080" / "dev.csv"
TEXT_SUFFIXES = {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx",
                 ".inl", ".inc", ".tpp", ".ipp", ".cpp.in", ".c++"}
_PRAGMA_TARGET = re.compile(r"^\s*#\s*pragma\s+omp\s+target\b(?!\s+(?:enter|exit|update|data)\b)")
_GLOBAL = re.compile(r"__global__")


@dataclass
class FolderText:
    """The target folder's files as lines, for diagnosing misses without the analyzer."""

    files: dict[Path, list[str]]

    @classmethod
    def read(cls, folder: Path) -> FolderText:
        files: dict[Path, list[str]] = {}
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file() and (path.suffix.lower() in TEXT_SUFFIXES):
                    try:
                        files[path] = path.read_text("utf-8", errors="replace").splitlines()
                    except OSError:
                        continue
        return cls(files)

    def mentions(self, name: str) -> list[tuple[Path, int, str]]:
        word = re.compile(rf"\b{re.escape(name)}\b")
        return [(p, i + 1, line) for p, lines in self.files.items()
                for i, line in enumerate(lines) if word.search(line)]

    def target_pragmas(self) -> list[tuple[Path, int]]:
        return [(p, i + 1) for p, lines in self.files.items()
                for i, line in enumerate(lines) if _PRAGMA_TARGET.match(line)]


def _rel(path: Path | str, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _in_define(lines: list[str], lineno: int) -> bool:
    """Is line `lineno` (1-based) part of a multi-line #define?"""
    i = lineno - 1
    while i >= 0:
        text = lines[i].rstrip()
        if re.match(r"^\s*#\s*define\b", text):
            return True
        if i < lineno - 1 and not text.endswith("\\"):
            return False
        i -= 1
    return False


def _squash(text: str, limit: int = 120) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _pragma_text(lines: list[str], lineno: int) -> str:
    """The pragma at `lineno` with its backslash continuations joined."""
    parts, i = [], lineno - 1
    while i < len(lines):
        parts.append(lines[i].rstrip().rstrip("\\"))
        if not lines[i].rstrip().endswith("\\"):
            break
        i += 1
    return _squash(" ".join(parts))


def _guard(lines: list[str], lineno: int) -> str:
    """The innermost open #if/#ifdef above `lineno`, or ''."""
    depth = 0
    for i in range(lineno - 2, -1, -1):
        text = lines[i].strip()
        if re.match(r"#\s*endif\b", text):
            depth += 1
        elif re.match(r"#\s*if", text):
            if depth == 0:
                return _squash(text, 60)
            depth -= 1
    return ""


def _enclosing_header(lines: list[str], lineno: int) -> str:
    """The nearest line above `lineno` that starts at column 0 with a function-like head
    (what a reader takes for the enclosing function), squashed; '' if none."""
    for i in range(lineno - 2, -1, -1):
        text = lines[i]
        if text[:1].isalpha() and "(" in text and not text.startswith(("#", "return")):
            before = lines[i - 1].strip() if i > 0 else ""
            head = f"{before} {text}" if before.startswith("template") else text
            return _squash(head, 100)
    return ""


def _analyzer_view(index: SourceIndex, target: str, path: Path) -> str:
    """What the analyzer reported for one file: its kernels and problems, briefly."""
    found = index.target(target)
    key = path.resolve()
    names = sorted({k.name for k in found.kernels if Path(k.file).resolve() == key})
    problems = [p.message for p in found.problems if Path(p.file).resolve() == key]
    out = f"analyzer found {len(names)} kernel(s) in this file"
    if names:
        out += f" ({', '.join(names[:4])}{', ...' if len(names) > 4 else ''})"
    if problems:
        out += f"; problem: {_squash(problems[0], 80)}"
    return out


def diagnose_cuda(row: ManifestRow, text: FolderText, index: SourceIndex, match: Match,
                  root: Path) -> tuple[str, str]:
    """(group, detail) for a CUDA row the analyzer did not find."""
    name = parse_signature(row.kernel_signature).name if row.kernel_signature else row.kernel
    hits = text.mentions(name)
    if match.reason.startswith(("no source folder", "discovery failed")):
        return "target folder not analyzable", match.reason
    if not hits:
        pasted = [(p, n) for p, lines in text.files.items() for n, line in enumerate(lines, 1)
                  if "##" in line and "__global__" in "".join(lines[max(0, n - 6):n + 6])]
        if pasted:
            p, n = pasted[0]
            return ("name absent from text: macro-generated (token pasting)",
                    f"{name}: `##` near __global__ at {_rel(p, root)}:{n}")
        return "name absent from text", f"{name}: not in any source file of {row.target}"
    definitions = []
    for path, lineno, _ in hits:
        lines = text.files[path]
        window = " ".join(lines[max(0, lineno - 4):lineno])
        if _GLOBAL.search(window) and re.search(rf"\b{re.escape(name)}\s*(<[^;{{]*>)?\s*\(",
                                                 " ".join(lines[lineno - 1:lineno + 1])):
            definitions.append((path, lineno))
    if not definitions:
        aliases = {m.group(1) for lines in text.files.values() for line in lines
                   if (m := re.match(r"\s*#\s*define\s+(\w+)\s+__global__\s*$", line))}
        for path, lineno, line in hits:
            if any(re.search(rf"\b{a}\b", line) for a in aliases):
                return ("kernel declared through a macro alias of __global__",
                        f"{name}: {_rel(path, root)}:{lineno}: `{_squash(line, 80)}` "
                        f"(aliases: {', '.join(sorted(aliases))})")
        where = ", ".join(f"{_rel(p, root)}:{n}" for p, n, _ in hits[:3])
        return "name in text, no __global__ definition seen", f"{name}: mentioned at {where}"
    path, lineno = definitions[0]
    head = " ".join(text.files[path][max(0, lineno - 3):lineno])
    loc = f"{_rel(path, root)}:{lineno} `{_squash(head, 110)}`"
    if _in_define(text.files[path], lineno):
        return "kernel defined inside a #define", f"{name}: {loc}"
    suffix = path.suffix.lower()
    if suffix not in {".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c", ".cxx", ".hh", ".hxx",
                      ".inl"}:
        return "kernel in a file with an unanalyzed suffix", f"{name}: {loc}"
    if suffix in {".cpp", ".cc", ".c", ".cxx"}:
        return "__global__ kernel in a C/C++-suffixed file (#included by a .cu)", f"{name}: {loc}"
    return ("__global__ definition in text, analyzer missed it",
            f"{name}: {loc}; {_analyzer_view(index, row.target, path)}")


def diagnose_omp(row: ManifestRow, text: FolderText, index: SourceIndex, match: Match,
                 root: Path) -> tuple[str, str]:
    """(group, detail) for an OpenMP row the analyzer did not find (strictly)."""
    name = bare_function_name(row.omp_function)
    line = row.omp_line or 0
    found = index.target(row.target)
    if found.error:
        return "target folder not analyzable", found.error
    regions = [k for k in found.kernels if k.language == "openmp"]
    in_function = sorted(k.line for k in regions if k.name.split("::")[-1] == name)
    at_line = [k for k in regions if k.line == line]
    raw_at_line = [(p, n) for p, n in text.target_pragmas() if n == line]
    raw_all = text.target_pragmas()
    if match.kernel is not None and match.note.startswith("line"):
        return ("pragma line off by <= 2 (lenient match)",
                f"{name}() l{line}: analyzer region at l{match.kernel.line} "
                f"({_rel(match.kernel.file, root)})")
    if at_line:
        names = ", ".join(sorted({f"{k.name}() in {_rel(k.file, root)}" for k in at_line}))
        return "region at that line, but under another function name", \
            f"{name}() l{line}: analyzer says {names}"
    if raw_at_line:
        p0 = raw_at_line[0][0]
        lines0 = text.files[p0]
        guard = _guard(lines0, line)
        where = ", ".join(f"{_rel(p, root)}" for p, _ in raw_at_line) + \
            f" `{_pragma_text(lines0, line)}`" + (f" under `{guard}`" if guard else "") + \
            f"; in `{_enclosing_header(lines0, line)}`"
        if in_function:
            return "pragma at that line not found as a region (function has other regions)", \
                f"{name}() l{line} in {where}; analyzer regions of {name}(): {in_function}"
        if line <= 3:
            return "pragma at top of an included file (no enclosing function)", \
                f"{name}() l{line} in {where}"
        return "pragma at that line not found as a region", f"{name}() l{line} in {where}"
    near = sorted(raw_all, key=lambda pn: abs(pn[1] - line))[:3]
    near_txt = ", ".join(f"{_rel(p, root)}:{n}" for p, n in near) or "none"
    if in_function:
        return "no pragma at that line; function has regions elsewhere", \
            f"{name}() l{line}: analyzer regions {in_function}; nearest raw pragmas {near_txt}"
    return "no `#pragma omp target` at that line in any file", \
        f"{name}() l{line}: nearest raw pragmas {near_txt}"


def run(manifest: Path, sources: Path, misses_path: Path | None, as_json: bool) -> int:
    rows = load_manifest(manifest)
    index = SourceIndex(sources)
    targets = sorted({r.target for r in rows})
    start = time.perf_counter()
    with Progress(transient=True, disable=not sys.stderr.isatty()) as progress:
        task = progress.add_task("discovering", total=len(targets))
        for target in targets:
            index.target(target)
            progress.advance(task)
    discover_s = time.perf_counter() - start
    matches = index.match_all(rows)
    texts: dict[str, FolderText] = {}
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    stats = {lang: {"rows": 0, "strict": 0, "lenient": 0} for lang in ("CUDA", "OMP")}
    for m in matches:
        row = m.row
        s = stats[row.language]
        s["rows"] += 1
        strict = m.matched and (row.language == "CUDA" or not m.note.startswith(
            ("line", "function named")))
        s["strict"] += strict
        s["lenient"] += m.matched
        if strict:
            continue
        text = texts.setdefault(row.target, FolderText.read(sources / row.target))
        if row.language == "CUDA":
            group, detail = diagnose_cuda(row, text, index, m, sources)
        else:
            group, detail = diagnose_omp(row, text, index, m, sources)
        status = "lenient-match" if m.matched else "MISS"
        groups[(row.language, group)].append(f"[{status}] {row.target}: {detail}")
    kernels = sum(len(index.target(t).kernels) for t in targets)
    total = sum(s["rows"] for s in stats.values())
    strict = sum(s["strict"] for s in stats.values())
    lenient = sum(s["lenient"] for s in stats.values())
    summary = {
        "rows": total,
        "strict_found": strict,
        "strict_coverage": strict / total,
        "lenient_found": lenient,
        "lenient_coverage": lenient / total,
        "by_language": {
            lang: {**s, "strict_coverage": s["strict"] / s["rows"] if s["rows"] else None}
            for lang, s in stats.items()
        },
        "targets": len(targets),
        "kernels_discovered": kernels,
        "discover_seconds": round(discover_s, 2),
        "kernels_per_second": round(kernels / discover_s, 1) if discover_s else None,
        "miss_groups": {f"{lang}: {g}": len(v) for (lang, g), v in
                        sorted(groups.items(), key=lambda kv: -len(kv[1]))},
    }
    report = _text_report(summary, groups)
    if misses_path is not None:
        misses_path.write_text(report, encoding="utf-8")
    if as_json:
        print(json.dumps({**summary, "misses": {f"{lang}: {g}": v for (lang, g), v in
                                                groups.items()}}, indent=2))
    else:
        print(report)
    return 0


def _text_report(summary: dict, groups: dict[tuple[str, str], list[str]]) -> str:
    lines = [
        f"coverage: strict {summary['strict_found']}/{summary['rows']} "
        f"= {summary['strict_coverage']:.1%} (goal >= 97%); lenient {summary['lenient_found']}"
        f"/{summary['rows']} = {summary['lenient_coverage']:.1%}",
    ]
    for lang, s in summary["by_language"].items():
        cov = s["strict_coverage"]
        lines.append(f"  {lang}: strict {s['strict']}/{s['rows']}"
                     f" = {cov:.1%}, lenient {s['lenient']}" if cov is not None else f"  {lang}: -")
    lines.append(f"discovery: {summary['targets']} targets, {summary['kernels_discovered']} "
                 f"kernels in {summary['discover_seconds']} s "
                 f"({summary['kernels_per_second']} kernels/s)")
    lines.append("")
    lines.append("misses by group (MISS = not matched at all; "
                 "lenient-match = evaluate accepts it):")
    for (lang, group), items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"\n## {lang}: {group} ({len(items)})")
        lines.extend(f"  {item}" for item in items)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    parser.add_argument("--sources", type=Path, required=True,
                        help="folder with one sub-folder per target (HeCBench src/)")
    parser.add_argument("--misses", type=Path, default=None, help="also write the report here")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    if not args.sources.is_dir():
        print(f"coverage: error: {args.sources}: no such folder", file=sys.stderr)
        return 2
    try:
        return run(args.manifest, args.sources, args.misses, args.json)
    except ManifestError as exc:
        print(f"coverage: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
