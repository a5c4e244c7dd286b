"""analyze = discover kernels -> count features -> resolve symbols -> predict, for all verbs.

The result types are `roofcast.results`; running groups of files over processes is
`roofcast.scheduler`; what an analysis remembers while it runs is its session
(`roofcast.analyzer.session`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from roofcast.analyzer.compdb import CompileDatabase
from roofcast.analyzer.discover import discover_files, roots_of, unlistable_folder
from roofcast.analyzer.model import FileProblem, KernelIR
from roofcast.analyzer.partition import independent_groups
from roofcast.analyzer.session import AnalysisSession, analysis_session
from roofcast.analyzer.sources import expand_paths
from roofcast.features import count_features
from roofcast.features.resolve import resolve_counts
from roofcast.gpu_specs import GPU
from roofcast.predictors import default_predictor
from roofcast.predictors.base import Predictor
from roofcast.results import AnalysisReport, KernelResult, LaunchContext
from roofcast.scheduler import run_groups, young_collections_only

if TYPE_CHECKING:
    from roofcast.analyzer.compile import Compiler


def analyze_kernels(
    kernels: Iterable[KernelIR],
    gpu: GPU,
    defines: Mapping[str, str] | None = None,
    predictor: Predictor | None = None,
    context: LaunchContext | None = None,
    traffic: str = "launch",
    compiler: Compiler | None = None,
) -> list[KernelResult]:
    """Count, resolve and predict for kernels already discovered."""
    results = count_kernels(kernels, defines, context, gpu, traffic, compiler)
    predict_verdicts(results, gpu, predictor or default_predictor(), context)
    return results


def count_kernels(
    kernels: Iterable[KernelIR],
    defines: Mapping[str, str] | None = None,
    context: LaunchContext | None = None,
    gpu: GPU | None = None,
    traffic: str = "launch",
    compiler: Compiler | None = None,
) -> list[KernelResult]:
    """Count and resolve, without verdicts (`predict_verdicts` gives them). A kernel's
    compile command's -D (`build_defines`) are bound too, under `defines`. With a
    `compiler` (--compile), FLOPs and int ops come from the kernel's SASS where it has some."""
    results = []
    for ir in kernels:
        bound = {**ir.build_defines, **(defines or {})}
        features = count_features(ir, bound, line_loops=compiler is not None)
        if compiler is not None:
            _recount(ir, features, compiler, bound)
        resolved = resolve_counts(features, bound, context, gpu, traffic)
        results.append(KernelResult(ir=ir, features=features, resolved=resolved))
    return results


def predict_verdicts(
    results: list[KernelResult],
    gpu: GPU,
    predictor: Predictor,
    context: LaunchContext | None = None,
) -> None:
    """Each result's verdict, from one call of the predictor over them all: its fixed cost
    per call (the learned model's, an LLM's requests in flight) is paid once per task, not
    once per group of files."""
    verdicts = predictor.predict([(result, context) for result in results], gpu)
    for result, verdict in zip(results, verdicts, strict=True):
        result.verdict = verdict


def analyze_paths(
    paths: Sequence[Path | str],
    gpu: GPU,
    defines: Mapping[str, str] | None = None,
    predictor: Predictor | None = None,
    context: LaunchContext | None = None,
    jobs: int | None = 1,
    on_group_done: Callable[[int, int], None] | None = None,
    undefines: frozenset[str] = frozenset(),
    include_dirs: Sequence[Path] = (),
    database: CompileDatabase | None = None,
    traffic: str = "launch",
    by_line: bool = False,
    compiler: Compiler | None = None,
) -> AnalysisReport:
    """The whole `analyze` job on files or folders.

    Files are split into groups that share nothing (see `analyzer.partition`); with `jobs`
    > 1 (None: one per available CPU) the groups run in that many processes. The report is
    the same for any `jobs`. `on_group_done(done, total)` is called as groups finish.
    `undefines` (-U) and `include_dirs` (-I) are as a compiler's. A compile `database`
    gives each file its compile command's flags too (relocated onto the listed files
    here); `defines` and `undefines` win over them. It runs in the current analysis
    session, or in a new one (`analyzer.session`)."""
    listed = [Path(p) for p in paths]
    roots = [*roots_of(listed), *include_dirs]
    unlistable: list[Path] = []
    with analysis_session() as session, young_collections_only():
        files = expand_paths(listed, unlistable)
        unit_dirs = None
        if database is not None:
            database = database.relocate(files)
            unit_dirs = _unit_dirs(database)
        groups = independent_groups(files, roots, unit_dirs)
        defined = {k: v for k, v in (defines or {}).items() if k not in undefines}
        job = _GroupJob(
            session,
            roots,
            gpu,
            defined,
            predictor or default_predictor(),
            context,
            undefines,
            database,
            traffic,
            by_line,
            compiler,
        )
        outcomes = run_groups(job, groups, jobs, on_group_done)
        kernels = [k for results, _ in outcomes for k in results]
        kernels.sort(key=lambda k: (k.ir.file, k.ir.line))  # stable: a file lies in one group
        problems = [unlistable_folder(folder) for folder in unlistable]
        problems += [p for _, found in outcomes for p in found]
    return AnalysisReport(gpu=gpu, kernels=kernels, problems=problems, database=database)


def _unit_dirs(database: CompileDatabase) -> Callable[[Path], Sequence[Path]]:
    def dirs(path: Path) -> Sequence[Path]:
        unit = database.unit_for(path)
        return unit.include_dirs if unit is not None else ()

    return dirs


#: a group's kernels (verdicts given by `_GroupJob.judge`) and the problems found in its files
_Outcome = tuple[list[KernelResult], list[FileProblem]]


@dataclass
class _GroupJob:
    """Discover, count, resolve and predict over one independent group of files."""

    session: AnalysisSession  # its node caches last one group; a process has its own copy
    roots: list[Path]
    gpu: GPU
    defines: dict[str, str]
    predictor: Predictor
    context: LaunchContext | None
    undefines: frozenset[str] = frozenset()
    database: CompileDatabase | None = None
    traffic: str = "launch"  # which DRAM bytes the intensities use (features/traffic.py)
    by_line: bool = False  # each source line's counts too (`explain`)
    compiler: Compiler | None = None  # --compile: FLOPs and int ops from SASS

    def __call__(self, files: list[Path]) -> _Outcome:
        """The group's results, without verdicts: `judge` gives those for many groups at once.
        An unexpected failure costs the file or kernel it happened in, not the run: it is
        one of the group's problems, and the rest of the group is analysed."""
        with self.session, self.session.group():
            return self._analyse(files)

    def _analyse(self, files: list[Path]) -> _Outcome:
        kernels, problems = self.discover(files)
        results = []
        for ir in kernels:
            bound = {**ir.build_defines, **self.defines}  # the compile command's -D, under ours
            try:
                features = count_features(
                    ir, bound, by_line=self.by_line, line_loops=self.compiler is not None
                )
                if self.compiler is not None:
                    _recount(ir, features, self.compiler, bound)
                resolved = resolve_counts(features, bound, self.context, self.gpu, self.traffic)
            except Exception as exc:  # noqa: BLE001 - reported, see above
                problems.append(FileProblem(ir.file, f"{_kernel(ir)} not analysed: {_error(exc)}"))
                continue
            results.append(KernelResult(ir=ir, features=features, resolved=resolved))
            problems.extend(
                FileProblem(ir.file, f"{_kernel(ir)}: {warning}", fatal=False)
                for warning in features.warnings
            )
        for result in results:  # the group's parse trees can go: nothing after counting reads them
            result.ir.ast = None
            result.ir.context = None
        return results, problems

    def discover(self, files: list[Path]) -> tuple[list[KernelIR], list[FileProblem]]:
        """The group's kernels and file problems; if discovering the group fails, each file
        is discovered on its own (without the others' headers and call sites), and a file
        that still fails is a problem."""
        try:
            found = discover_files(files, self.roots, self.defines, self.undefines, self.database)
            return found.kernels, found.problems
        except Exception:  # noqa: BLE001 - retried file by file, where it is reported
            pass
        kernels: list[KernelIR] = []
        problems: list[FileProblem] = []
        seen: set[tuple[str, int, str]] = set()  # a header's kernels, found by each includer
        for path in files:
            try:
                found = discover_files(
                    [path], self.roots, self.defines, self.undefines, self.database
                )
            except Exception as exc:  # noqa: BLE001 - reported
                problems.append(FileProblem(str(path), f"not analysed: {_error(exc)}"))
                continue
            problems.extend(found.problems)
            for ir in found.kernels:
                if (ir.file, ir.line, ir.name) not in seen:
                    seen.add((ir.file, ir.line, ir.name))
                    kernels.append(ir)
        kernels.sort(key=lambda k: (k.file, k.line))
        return kernels, problems

    def judge(self, outcomes: list[_Outcome]) -> None:
        """Verdicts for many groups in one call; if that fails, kernel by kernel, and a
        kernel whose verdict fails has none (`unknown`) and is a problem of its group."""
        results = [result for found, _ in outcomes for result in found]
        try:
            predict_verdicts(results, self.gpu, self.predictor, self.context)
            return
        except Exception:  # noqa: BLE001 - retried kernel by kernel, where it is reported
            pass
        for found, problems in outcomes:
            for result in found:
                try:
                    predict_verdicts([result], self.gpu, self.predictor, self.context)
                except Exception as exc:  # noqa: BLE001 - reported
                    result.verdict = None
                    message = f"{_kernel(result.ir)}: no verdict: {_error(exc)}"
                    problems.append(FileProblem(result.ir.file, message))


def _recount(ir: KernelIR, features, compiler: Compiler, bound: Mapping[str, str]) -> None:
    from roofcast.features.sasscount import recount

    recount(ir, features, compiler, bound)


def _kernel(ir: KernelIR) -> str:
    return f"kernel {ir.name} (line {ir.line})"


def _error(exc: BaseException) -> str:
    """An unexpected error in one line: its class and the first line of its message."""
    lines = str(exc).strip().splitlines()
    message = lines[0] if lines else ""
    if len(message) > 200:
        message = message[:199] + "…"
    return f"internal error {type(exc).__name__}" + (f": {message}" if message else "")
