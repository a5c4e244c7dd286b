"""The kernel corpus: our own CUDA and OpenMP kernels with hand-counted sidecar files.

Every source `cuda/<stem>.cu` or `openmp/<stem>.cpp` has a `<stem>.toml` next to it listing
each kernel in the file and the per-thread counts a careful reader derives from
docs/counting.md. This module loads those sidecars and compares them with what the analyzer
counts, so the tests and `bench/corpus_exactness.py` share one definition of "a match".
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sympy
from roofcast.analyzer.cvalue import SIDECAR_FUNCTIONS, parse_value

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Source suffixes per language folder.
SOURCE_SUFFIXES: dict[str, tuple[str, ...]] = {"cuda": (".cu",), "openmp": (".cpp",)}
#: Keys every sidecar entry must give (the minimum the corpus promises).
REQUIRED_KEYS: tuple[str, ...] = ("flops_sp", "flops_dp", "flops_hp", "load_bytes", "store_bytes")


def corpus_root() -> Path:
    """The folder holding cuda/ and openmp/ (this package's own directory)."""
    return Path(__file__).resolve().parent


def source_files(root: Path | None = None) -> list[Path]:
    """Every kernel source of the corpus, sorted."""
    root = root or corpus_root()
    out: list[Path] = []
    for folder, suffixes in SOURCE_SUFFIXES.items():
        for suffix in suffixes:
            out.extend((root / folder).glob(f"*{suffix}"))
    return sorted(out)


@dataclass
class CorpusEntry:
    """One kernel of one sidecar: where it is, how to bind its symbols, what to expect."""

    source: Path
    name: str
    line: int
    language: str
    defines: dict[str, str] = field(default_factory=dict)
    expected: dict[str, Any] = field(default_factory=dict)
    special: dict[tuple[str, str], int] = field(default_factory=dict)
    symbolic: dict[str, str] = field(default_factory=dict)
    bound: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Readable, unique test id: file:line:name plus the defines that change counting."""
        base = f"{self.source.parent.name}/{self.source.name}:{self.line}:{self.name}"
        typed = {k: v for k, v in self.defines.items() if not _is_number(v)}
        if typed:
            base += "[" + ",".join(f"{k}={v}" for k, v in sorted(typed.items())) + "]"
        return base

    @property
    def key(self) -> tuple[str, str, int, str]:
        """What identifies the kernel in the analyzer's output: file, name, line, language."""
        return (str(self.source.resolve()), self.name, self.line, self.language)

    def value_count(self) -> int:
        """How many expected values this entry states (each special kind and verdict is one)."""
        return len(self.expected) + len(self.special) + len(self.symbolic) + len(self.bound)


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _parse_entry(source: Path, raw: dict[str, Any]) -> CorpusEntry:
    expected = dict(raw.get("expected", {}))
    symbolic = dict(raw.get("symbolic", {}))
    bound = dict(expected.pop("bound", {}) or symbolic.pop("bound", {}) or raw.get("bound", {}))
    special_raw = expected.pop("special", {})
    special: dict[tuple[str, str], int] = {}
    for key, value in special_raw.items():
        kind, _, prec = key.partition(".")
        special[(kind, prec)] = value
    return CorpusEntry(
        source=source,
        name=str(raw["name"]),
        line=int(raw["line"]),
        language=str(raw["language"]),
        defines={k: str(v) for k, v in raw.get("defines", {}).items()},
        expected=expected,
        special=special,
        symbolic={k: str(v) for k, v in symbolic.items()},
        bound={k: str(v) for k, v in bound.items()},
    )


def sidecar_for(source: Path) -> Path:
    return source.with_suffix(".toml")


def load_sidecar(source: Path) -> list[CorpusEntry]:
    """The entries of one source's sidecar (empty when it has none)."""
    path = sidecar_for(source)
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text("utf-8"))
    return [_parse_entry(source, raw) for raw in data.get("kernel", [])]


def load_corpus(root: Path | None = None) -> list[CorpusEntry]:
    """Every sidecar entry of the corpus, in file then line order."""
    entries: list[CorpusEntry] = []
    for source in source_files(root):
        entries.extend(load_sidecar(source))
    return entries


# --------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class Check:
    """One expected value against what the analyzer produced."""

    entry: str
    field: str
    expected: Any
    got: Any
    ok: bool

    def describe(self) -> str:
        return f"{self.entry} {self.field}: expected {self.expected}, got {self.got}"


def _symbols_by_name(expr: sympy.Expr) -> dict[str, sympy.Symbol]:
    return {s.name: s for s in expr.free_symbols if isinstance(s, sympy.Symbol)}


def _expr(value: Any) -> sympy.Expr:
    """A count (a sympy expression or a number) or a sidecar's text as a sympy expression."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, bool | int):
        return sympy.Integer(int(value))
    if isinstance(value, float):
        return sympy.Float(value)
    if isinstance(value, str):
        return sidecar_expression(value)
    raise TypeError(f"not an expression: {value!r}")


def subs_by_name(expr: Any, values: Mapping[str, str]) -> sympy.Expr:
    """Bind symbols by name (the analyzer's symbols may carry assumptions ours do not)."""
    expr = _expr(expr)
    numeric = {k: sidecar_expression(v) for k, v in values.items() if _is_number(v)}
    by_name = _symbols_by_name(expr)
    mapping = {sym: numeric[name] for name, sym in by_name.items() if name in numeric}
    return expr.xreplace(mapping) if mapping else expr


def _default_substitute() -> Callable[[Any, Mapping[str, str]], Any]:
    """The features package's own substitution when it has one, else binding by name."""
    try:
        from roofcast.features.resolve import substitute
    except ImportError:
        return subs_by_name

    def both(expr: Any, defines: Mapping[str, str]) -> Any:
        # Bind by name afterwards too, so symbols the resolver leaves alone still bind.
        return subs_by_name(substitute(expr, dict(defines)), defines)

    return both


def sidecar_expression(text: str) -> sympy.Expr:
    """A sidecar expression: C syntax, every identifier a plain symbol (N, S, E stay names),
    calls only to sympy's ceiling, floor, log, sqrt, Max, Min. Read by the strict C parser
    (a ValueError when malformed), never evaluated as Python."""
    return parse_value(text, functions=SIDECAR_FUNCTIONS)


def _as_number(value: Any) -> float | None:
    try:
        expr = _expr(value)
    except (ValueError, TypeError):
        return None
    if expr.free_symbols:
        return None
    try:
        return float(expr)
    except TypeError:
        return None


def _same(expected: Any, got: Any) -> bool:
    if isinstance(expected, bool):
        return bool(got) is expected
    got_n = _as_number(got)
    return got_n is not None and math.isclose(float(expected), got_n, rel_tol=1e-9, abs_tol=1e-9)


def _show(value: Any) -> Any:
    number = _as_number(value)
    if number is not None and not isinstance(value, bool):
        return int(number) if number.is_integer() else number
    return str(value)


def check_counts(
    entry: CorpusEntry,
    features: Any,
    substitute: Callable[[Any, Mapping[str, str]], Any] | None = None,
) -> list[Check]:
    """Compare every expected count and special of `entry` with a FeatureVector.

    Unlisted special kinds the analyzer reports as non-zero are mismatches too: a sidecar's
    `special` names every kind its kernel calls.
    """
    substitute = substitute or _default_substitute()
    checks: list[Check] = []
    for key, want in entry.expected.items():
        raw = getattr(features, key, None)
        if not isinstance(want, bool):
            raw = substitute(raw if raw is not None else 0, entry.defines)
        got = raw
        checks.append(Check(entry.id, key, want, _show(got), _same(want, got)))
    special = dict(getattr(features, "special", {}) or {})
    for (kind, prec), want in entry.special.items():
        got = substitute(special.get((kind, prec), 0), entry.defines)
        checks.append(Check(entry.id, f"special.{kind}.{prec}", want, _show(got), _same(want, got)))
    for (kind, prec), raw in special.items():
        if (kind, prec) in entry.special:
            continue
        got = substitute(raw, entry.defines)
        if not _same(0, got):
            checks.append(Check(entry.id, f"special.{kind}.{prec}", 0, _show(got), False))
    return checks


#: Values tried for every free symbol when comparing expressions (rotated per symbol).
_SAMPLES: tuple[int, ...] = (1048576, 256, 1024, 64, 4096, 12, 100)


def equivalent(expected: sympy.Expr, got: Any, trials: int = 3) -> bool:
    """Whether two expressions agree at several positive-integer points (symbols by name)."""
    try:
        got_expr = _expr(got)
    except (ValueError, TypeError):
        return False
    names = sorted(set(_symbols_by_name(expected)) | set(_symbols_by_name(got_expr)))
    for trial in range(trials):
        point = {n: str(_SAMPLES[(i + trial) % len(_SAMPLES)]) for i, n in enumerate(names)}
        a = _as_number(subs_by_name(expected, point))
        b = _as_number(subs_by_name(got_expr, point))
        if a is None or b is None or not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9):
            return False
    return True


def check_symbolic(entry: CorpusEntry, features: Any) -> list[Check]:
    """Compare the unbound expressions of `entry` (features counted without defines)."""
    checks = []
    for key, text in entry.symbolic.items():
        got = getattr(features, key, None)
        ok = got is not None and equivalent(sidecar_expression(text), got)
        checks.append(Check(entry.id, f"symbolic.{key}", text, str(got), ok))
    return checks


def find_kernel(kernels: Iterable[Any], entry: CorpusEntry) -> Any | None:
    """The analyzer's kernel (KernelIR or anything with file/name/line/language) for `entry`."""
    for k in kernels:
        if (
            k.name == entry.name
            and k.line == entry.line
            and k.language == entry.language
            and Path(k.file).resolve() == entry.source.resolve()
        ):
            return k
    return None


# --------------------------------------------------------------------------- whole-corpus run


@dataclass
class CorpusRun:
    """Everything one pass of the analyzer over the corpus produced, check by check."""

    checks: list[Check] = field(default_factory=list)
    missing: list[CorpusEntry] = field(default_factory=list)
    unlisted: list[tuple[str, str, int, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def matched(self) -> int:
        return sum(c.ok for c in self.checks)

    @property
    def total(self) -> int:
        return len(self.checks)

    @property
    def mismatches(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]


def _discover(source: Path, defines: Mapping[str, str]) -> Any:
    from roofcast.analyzer import discover

    return discover([source], dict(defines))


def entry_checks(entry: CorpusEntry, cache: dict[Any, Any] | None = None) -> list[Check] | None:
    """Counts and expressions of one entry against the analyzer; None when it is not found."""
    from roofcast.features import count_features

    cache = {} if cache is None else cache
    checks: list[Check] = []
    key = (entry.source, tuple(sorted(entry.defines.items())))
    if key not in cache:
        cache[key] = _discover(entry.source, entry.defines)
    ir = find_kernel(cache[key].kernels, entry)
    if ir is None:
        return None
    checks.extend(check_counts(entry, count_features(ir, dict(entry.defines))))
    if entry.symbolic:
        bare_key = (entry.source, ())
        if bare_key not in cache:
            cache[bare_key] = _discover(entry.source, {})
        bare = find_kernel(cache[bare_key].kernels, entry)
        if bare is None:
            return None
        checks.extend(check_symbolic(entry, count_features(bare, {})))
    return checks


def bound_checks(entry: CorpusEntry) -> tuple[list[Check], list[str]]:
    """The analytic verdict on each GPU the entry names; GPUs not bundled are skipped."""
    from roofcast.gpu_specs import UnknownGPUError, load_gpu

    from roofcast.pipeline import analyze_paths
    from roofcast.predictors.roofline import RooflinePredictor

    checks: list[Check] = []
    skipped: list[str] = []
    for gpu_name, want in sorted(entry.bound.items()):
        try:
            gpu = load_gpu(gpu_name)
        except UnknownGPUError:
            skipped.append(f"{entry.id} bound.{gpu_name}: GPU not bundled")
            continue
        report = analyze_paths([entry.source], gpu, entry.defines, predictor=RooflinePredictor())
        found = find_kernel([r.ir for r in report.kernels], entry)
        got = "not found"
        if found is not None:
            result = next(r for r in report.kernels if r.ir is found)
            got = result.verdict.bound if result.verdict else "unknown"
        checks.append(Check(entry.id, f"bound.{gpu_name}", want, got, want == got))
    return checks, skipped


def listed_keys(entries: Iterable[CorpusEntry]) -> set[tuple[str, str, int, str]]:
    return {e.key for e in entries}


def unlisted_kernels(
    entries: list[CorpusEntry], root: Path | None = None
) -> list[tuple[str, str, int, str]]:
    """Kernels the analyzer finds in the corpus that no sidecar lists (file, name, line, lang)."""
    from roofcast.analyzer import discover

    found = discover(source_files(root), {})
    listed = listed_keys(entries)
    out: list[tuple[str, str, int, str]] = []
    for k in found.kernels:
        key = (str(Path(k.file).resolve()), k.name, k.line, k.language)
        if key not in listed:
            out.append(key)
    return out


def run_corpus(entries: list[CorpusEntry] | None = None, with_bounds: bool = True) -> CorpusRun:
    """Run the analyzer over every entry: counts, expressions, verdicts, completeness."""
    entries = load_corpus() if entries is None else entries
    run = CorpusRun()
    cache: dict[Any, Any] = {}
    for entry in entries:
        checks = entry_checks(entry, cache)
        if checks is None:
            run.missing.append(entry)
            run.checks.extend(
                Check(entry.id, "(kernel)", "found", "not found", False)
                for _ in range(entry.value_count())
            )
            continue
        run.checks.extend(checks)
        if with_bounds and entry.bound:
            bchecks, skipped = bound_checks(entry)
            run.checks.extend(bchecks)
            run.skipped.extend(skipped)
    for result in cache.values():
        run.problems.extend(f"{p.file}: {p.message}" for p in getattr(result, "problems", []))
    run.unlisted = unlisted_kernels(entries)
    return run
