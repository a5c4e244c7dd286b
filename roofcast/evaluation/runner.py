"""The evaluation loop: match rows, analyze each matched kernel with the row's launch, then
predict them all in one call of the predictor (its batch contract, `predictors.base`).

A kernel that fails to analyze (an exception, or longer than the time limit) is recorded
and scored as a miss ('unknown'); the loop never stops for one kernel. Rows whose kernel is
not found are 'unmatched' and count against coverage.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from roofcast.analyzer.compdb import CompileDatabase
from roofcast.analyzer.model import KernelIR
from roofcast.analyzer.session import AnalysisSession, analysis_session
from roofcast.evaluation.manifest import ManifestRow
from roofcast.evaluation.matching import Match, SourceIndex
from roofcast.predictors.base import Predictor
from roofcast.results import KernelResult, LaunchContext, Verdict
from roofcast.scheduler import name_family, run_groups

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU

#: Seconds one kernel may take to count and predict before it is scored as a miss.
DEFAULT_KERNEL_TIMEOUT = 20.0


class KernelTimeout(Exception):
    """Counting one kernel took longer than the limit."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Interrupt the block after `seconds` (main thread on POSIX only; elsewhere no limit)."""
    usable = (
        seconds
        and seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def _raise(signum: int, frame: object) -> None:
        raise KernelTimeout(f"analysis took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))  # type: ignore[arg-type]
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True)
class BuildFlags:
    """How the sources are preprocessed besides -D: the command line's -U and -I, and a
    compile database (compile_commands.json) giving each file its own flags; and which
    DRAM traffic model the intensities use (`--traffic`)."""

    undefines: frozenset[str] = frozenset()
    include_dirs: tuple[Path, ...] = ()
    database: CompileDatabase | None = None
    traffic: str = "launch"
    #: --compile: an analyzer.compile.Compiler; FLOPs and int ops from SASS where it compiles
    compiler: object | None = None


@dataclass
class RowOutcome:
    """One manifest row after matching and analysis."""

    row: ManifestRow
    match: Match
    result: KernelResult | None = None
    error: str = ""  # why analysis failed ('' when it did not)
    seconds: float = 0.0

    @property
    def matched(self) -> bool:
        return self.match.matched

    @property
    def predicted(self) -> str | None:
        """'compute' / 'bandwidth' / 'unknown'; None when the row is unmatched."""
        if not self.matched:
            return None
        if self.result is None or self.result.verdict is None:
            return "unknown"
        return self.result.verdict.bound


#: which launch of a kernel a manifest row profiles (rule D34): gpuFLOPBench ran Nsight
#: Compute with `-c 2 -k <kernel>` (the kernel's first two launches) and its row is the second
PROFILED_LAUNCH = 2


def launch_context(row: ManifestRow) -> LaunchContext:
    """The inputs a predictor may use from a row: its launch and command line, never the
    measured columns or the label; and which launch the profile is (the protocol's)."""
    return LaunchContext(
        block=row.block, grid=row.grid, exe_args=row.exe_args, ordinal=PROFILED_LAUNCH
    )


def _context_key(row: ManifestRow, defines: Mapping[str, str]) -> tuple:
    return (row.block, row.grid, row.exe_args, tuple(sorted(defines.items())))


def _progress(enabled: bool) -> Progress:
    console = Console(stderr=True)
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[item]}"),
        console=console,
        transient=True,
        disable=not (enabled and console.is_terminal),
    )


def analyze_rows(
    rows: Sequence[ManifestRow],
    sources: Path | str | SourceIndex,
    gpu: GPU,
    predictor: Predictor | None = None,
    defines: Mapping[str, str] | None = None,
    progress: bool = False,
    kernel_timeout: float | None = DEFAULT_KERNEL_TIMEOUT,
    build: BuildFlags | None = None,
    compiler: object | None = None,
    jobs: int | None = 1,
) -> list[RowOutcome]:
    """Match and analyze every row. `predictor=None` gives counts without a verdict.

    Each row's kernel is counted with the row's launch (block, grid, exe_args) and with its
    template instance bound (`void k<double>` binds the kernel's `T` to double), on top of
    `defines`. Identical (kernel, launch) pairs are analyzed once. `build`: the command
    line's -U and -I and a compile database, for the sources' discovery. The counted kernels
    are predicted in one batch at the end (`predict_batch`). `compiler` (or
    `build.compiler`): --compile, the matched kernels' files compiled first, in parallel.

    `jobs` > 1 (None: one per available CPU) spreads the targets over that many processes,
    as `analyze` spreads its groups of files; the outcomes are the same for any `jobs`. With
    a compiler the targets are analysed in this process (nvcc runs `compiler.jobs` files at
    once). It runs in the current analysis session, or in a new one.
    """
    compiler = compiler or (build.compiler if build is not None else None)

    if isinstance(sources, SourceIndex):
        index = sources
    else:
        build = build or BuildFlags()
        index = SourceIndex(
            sources,
            defines,
            undefines=build.undefines,
            include_dirs=build.include_dirs,
            database=build.database,
        )
    traffic = build.traffic if build is not None else "launch"
    counting = _RowCounting(index, gpu, traffic, compiler, kernel_timeout)
    with analysis_session() as session, _progress(progress) as bar:
        if compiler is not None or jobs == 1:
            records = counting(rows, bar)
        else:
            records = _count_in_processes(counting, session, rows, jobs, bar)
        outcomes: list[RowOutcome] = []
        keys: list[tuple | None] = []  # each outcome's (kernel, launch) key, None if unmatched
        cache: dict[tuple, tuple[KernelResult | None, str]] = {}
        counted: list[tuple[tuple, LaunchContext]] = []  # keys with a result, in manifest order
        for outcome, key, entry in records:
            if key is not None and key not in cache:
                cache[key] = entry  # type: ignore[assignment]
                if entry is not None and entry[0] is not None:
                    counted.append((key, launch_context(outcome.row)))
            outcomes.append(outcome)
            keys.append(key)
        if predictor is not None and counted:
            bar.add_task(f"predicting ({predictor.name})", total=None, item="")
            start = time.perf_counter()
            results = [cache[key][0] for key, _ in counted]
            batch = [
                (result, context) for result, (_, context) in zip(results, counted, strict=True)
            ]
            predicted = predict_batch(predictor, batch, gpu)  # type: ignore[arg-type]
            share = (time.perf_counter() - start) / len(counted)
            for (key, _), result, (verdict, error) in zip(counted, results, predicted, strict=True):
                result.verdict = verdict  # type: ignore[union-attr]
                cache[key] = (result, error)
            for outcome, key in zip(outcomes, keys, strict=True):
                if key is not None and cache[key][0] is not None:
                    outcome.seconds += share
    for outcome, key in zip(outcomes, keys, strict=True):
        if key is not None:
            outcome.result, outcome.error = cache[key]
    return outcomes


#: a row's outcome (before prediction), its (kernel, launch) key (None if unmatched), and the
#: key's (result, error) as counted where the row was analysed
_Record = tuple[RowOutcome, tuple | None, tuple[KernelResult | None, str] | None]


@dataclass
class _RowCounting:
    """Discover, match and count rows: all of them at once, or one target's at a time."""

    index: SourceIndex
    gpu: GPU
    traffic: str
    compiler: object | None
    timeout: float | None

    def __call__(self, rows: Sequence[ManifestRow], bar: Progress) -> list[_Record]:
        """A record per row, in the rows' order. Each distinct (kernel, launch) is counted
        once, at its first row; its later rows share the result."""
        from roofcast.pipeline import count_kernels

        index = self.index
        targets = sorted({r.target for r in rows})
        task = bar.add_task("discovering", total=len(targets), item="")
        for target in targets:
            bar.update(task, item=target)
            index.target(target)
            bar.advance(task)
        matches = index.match_all(rows)
        bar.update(task, visible=False)
        if self.compiler is not None:
            if index.database is not None:  # relocated onto the sources
                self.compiler.database = index.database  # type: ignore[attr-defined]
            _compile_matched(self.compiler, matches, bar)
        task = bar.add_task("analyzing", total=len(rows), item="")
        cache: dict[tuple, tuple[KernelResult | None, str]] = {}
        records: list[_Record] = []
        for match in matches:
            row = match.row
            bar.update(task, item=row.key[:60])
            outcome = RowOutcome(row, match)
            key = None
            if match.kernel is not None:
                row_defines = {**index.defines, **match.defines}
                key = (match.kernel.id, _context_key(row, row_defines))
                start = time.perf_counter()
                if key not in cache:
                    cache[key] = _count_one(
                        count_kernels,
                        match,
                        row_defines,
                        launch_context(row),
                        self.timeout,
                        self.gpu,
                        self.traffic,
                        self.compiler,
                    )
                outcome.seconds = time.perf_counter() - start
            records.append((outcome, key, cache[key] if key is not None else None))
            bar.advance(task)
        bar.update(task, visible=False)
        return records


@dataclass
class _TargetJob:
    """One target's rows, for `scheduler.run_groups`; verdicts come after, in one batch."""

    counting: _RowCounting
    session: AnalysisSession  # a process has its own copy; node caches last one target
    rows_of: dict[str, list[ManifestRow]]

    def __call__(self, target: str) -> list[_Record]:
        with self.session, self.session.group(), _progress(False) as quiet:
            records = self.counting(self.rows_of[target], quiet)
        return _without_trees(records)

    def judge(self, outcomes: list[list[_Record]]) -> None:
        """Nothing: the parent predicts every counted kernel in one batch, in manifest order."""


def _without_trees(records: list[_Record]) -> list[_Record]:
    """The records with each kernel a copy that keeps no parse tree (trees cannot travel
    between processes); a kernel met in several records stays one object."""
    copies: dict[int, KernelIR] = {}

    def bare(ir: KernelIR) -> KernelIR:
        if id(ir) not in copies:
            copies[id(ir)] = replace(ir, ast=None, context=None)
        return copies[id(ir)]

    results: dict[int, KernelResult] = {}
    out: list[_Record] = []
    for outcome, key, entry in records:
        match = outcome.match
        if match.kernel is not None:
            match = replace(match, kernel=bare(match.kernel))
        if entry is not None and entry[0] is not None:
            result = entry[0]
            if id(result) not in results:
                results[id(result)] = replace(result, ir=bare(result.ir))
            entry = (results[id(result)], entry[1])
        out.append((replace(outcome, match=match), key, entry))
    return out


def _count_in_processes(
    counting: _RowCounting,
    session: AnalysisSession,
    rows: Sequence[ManifestRow],
    jobs: int | None,
    bar: Progress,
) -> list[_Record]:
    """`counting(rows)`, one target at a time over `jobs` processes, the records in the
    rows' order. A (kernel, launch) met in several targets (a kernel in a shared header)
    is counted in each; `analyze_rows` keeps the count of its first row, as one process does."""
    rows_of: dict[str, list[ManifestRow]] = {}
    position: dict[int, tuple[str, int]] = {}
    for i, row in enumerate(rows):
        found = rows_of.setdefault(row.target, [])
        position[i] = (row.target, len(found))
        found.append(row)
    targets = sorted(rows_of)
    task = bar.add_task("analyzing targets", total=len(targets), item="")
    done = run_groups(
        _TargetJob(counting, session, rows_of),
        targets,
        jobs,
        lambda finished, total: bar.update(task, completed=finished),
        family=name_family,
    )
    bar.update(task, visible=False)
    by_target = dict(zip(targets, done, strict=True))
    return [by_target[target][k] for target, k in (position[i] for i in range(len(rows)))]


def _count_one(
    count_kernels,
    match: Match,
    defines: Mapping[str, str],
    context: LaunchContext,
    timeout: float | None,
    gpu: GPU | None = None,
    traffic: str = "launch",
    compiler: object | None = None,
) -> tuple[KernelResult | None, str]:
    """Count one kernel under the time limit (prediction has none: an LLM may be slow)."""
    assert match.kernel is not None
    try:
        with time_limit(timeout):
            results = count_kernels([match.kernel], defines, context, gpu, traffic, compiler)
    except Exception as exc:  # one kernel's failure is a scored miss, never a crash
        return None, _one_line(exc)
    if not results:
        return None, "analysis returned no result"
    return results[0], ""


def _compile_matched(compiler, matches: Sequence[Match], bar: Progress) -> None:
    """--compile: the CUDA files (and the .cu files including them) of matched kernels, and
    the files of matched OpenMP regions, compiled before counting, `compiler.jobs` at a time."""
    from roofcast.analyzer.ompcompile import offload_for

    files: set[Path] = set()
    regions: set[Path] = set()  # OpenMP: compiled for offload (S11)
    for match in matches:
        ir = match.kernel
        if ir is not None and ir.language == "cuda":
            files.update(compiler.candidates(Path(ir.file).resolve()))
        elif ir is not None:
            regions.add(Path(ir.file).resolve())
    task = bar.add_task("compiling", total=len(files) + len(regions), item="")
    compiler.prepare(files, compiler.jobs, lambda done, total: bar.update(task, completed=done))
    offload_for(compiler).prepare(
        regions, compiler.jobs, lambda done, _: bar.update(task, completed=len(files) + done)
    )
    bar.update(task, visible=False)


def predict_batch(
    predictor: Predictor, batch: Sequence[tuple[KernelResult, LaunchContext | None]], gpu: GPU
) -> list[tuple[Verdict | None, str]]:
    """(verdict, '') or (None, error) for each item, from one call of the predictor. If the
    call fails, the kernels are predicted one by one, so that a predictor failing on one
    kernel costs that row (a miss, with no verdict) and not the others."""
    try:
        verdicts = predictor.predict(batch, gpu)
        if len(verdicts) == len(batch):
            return [(verdict, "") for verdict in verdicts]
    except Exception:  # noqa: BLE001 - retried kernel by kernel, where it is reported
        pass
    out: list[tuple[Verdict | None, str]] = []
    for item in batch:
        try:
            out.append((predictor.predict([item], gpu)[0], ""))
        except Exception as exc:  # a predictor failing on one kernel is a miss too
            out.append((None, f"predictor {getattr(predictor, 'name', '?')}: {_one_line(exc)}"))
    return out


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return (text.splitlines() or [text])[0][:300]


def iter_row_results(
    rows: Sequence[ManifestRow],
    sources: Path | str | SourceIndex,
    gpu: GPU,
    predictor: Predictor | None = None,
    defines: Mapping[str, str] | None = None,
    progress: bool = False,
    build: BuildFlags | None = None,
    jobs: int | None = 1,
) -> Iterator[tuple[ManifestRow, KernelResult | None]]:
    """(row, KernelResult or None) for every row, in manifest order: the matching and
    per-row analysis of `evaluate`, for training and the LLM scenarios to reuse."""
    outcomes = analyze_rows(
        rows, sources, gpu, predictor, defines, progress, build=build, jobs=jobs
    )
    for outcome in outcomes:
        yield outcome.row, outcome.result


@dataclass
class EvaluationResult:
    """Outcomes of one evaluation run and the scores computed from them."""

    outcomes: list[RowOutcome]
    gpu: GPU
    predictor: str
    seconds: float = 0.0
    options: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict:
        from roofcast.evaluation.scoring import score

        return score(self)


def evaluate(
    manifest_rows: Sequence[ManifestRow],
    sources: Path | str | SourceIndex,
    gpu: GPU,
    predictor: Predictor,
    defines: Mapping[str, str] | None = None,
    progress: bool = False,
    kernel_timeout: float | None = DEFAULT_KERNEL_TIMEOUT,
    build: BuildFlags | None = None,
    jobs: int | None = 1,
) -> EvaluationResult:
    """Score `predictor` on manifest rows against their profiled labels and counts; `jobs`
    processes for the targets (`analyze_rows`)."""
    start = time.perf_counter()
    outcomes = analyze_rows(
        manifest_rows, sources, gpu, predictor, defines, progress, kernel_timeout, build, jobs=jobs
    )
    return EvaluationResult(
        outcomes=outcomes,
        gpu=gpu,
        predictor=getattr(predictor, "name", type(predictor).__name__),
        seconds=time.perf_counter() - start,
    )
