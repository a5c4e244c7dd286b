"""analyze = discover kernels -> count features -> resolve symbols -> predict, for all verbs."""

from __future__ import annotations

import gc
import io
import multiprocessing
import os
import pickle
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import TYPE_CHECKING

import sympy

from roofcast.analyzer.compdb import CompileDatabase
from roofcast.analyzer.discover import discover_files, roots_of, unlistable_folder
from roofcast.analyzer.model import FileProblem, KernelIR
from roofcast.analyzer.parsing import forget_nodes
from roofcast.analyzer.partition import independent_groups
from roofcast.analyzer.sources import expand_paths, forget_resolved
from roofcast.features import count_features
from roofcast.features.resolve import ResolvedCounts, resolve_counts
from roofcast.features.symbolic import expr_from_tuple, expr_to_tuple
from roofcast.features.vector import FeatureVector
from roofcast.gpu_specs import GPU
from roofcast.predictors.base import LaunchContext, Predictor, Verdict

if TYPE_CHECKING:
    from roofcast.analyzer.compile import Compiler

SCHEMA_VERSION = 1


@dataclass
class KernelResult:
    """Everything roofcast knows about one kernel on one GPU."""

    ir: KernelIR
    features: FeatureVector
    resolved: ResolvedCounts
    verdict: Verdict | None = None
    extra_verdicts: dict[str, Verdict] = field(default_factory=dict)

    def to_json(self) -> dict:
        r = self.resolved
        out: dict = {
            "name": self.ir.name,
            "file": self.ir.file,
            "line": self.ir.line,
            "language": self.ir.language,
            "signature": self.ir.signature,
            "flops_per_thread": r.flops_json(),
            "special_per_thread": r.special_json(),
            "bytes_per_thread": r.bytes_json(),
            "arithmetic_intensity": r.intensity_json(),
            "bound": self.verdict.bound if self.verdict else "unknown",
            "reason": self.verdict.reason if self.verdict else "",
            "predictor": self.verdict.predictor if self.verdict else None,
            "confidence": self.verdict.confidence if self.verdict else None,
            "verdict_intensity": self.verdict.intensity_json() if self.verdict else {},
            "symbols": sorted(r.unbound),
            "defaults_applied": r.defaults_json(),
            "threads": r.threads_json(),
            "features": r.structure_json(self.features),
            "undefined_macros": list(self.ir.undefined_macros),
            # approximate counts (docs/counting.md N2-N4, B1), then clamped ones
            "warnings": [*self.features.warnings, *r.warnings()],
            "notes": list(self.features.notes),
        }
        if self.ir.compile_unit is not None:
            out["compile_command"] = dict(self.ir.compile_unit)
        if self.features.counted_from:  # --compile
            out["counted_from"] = self.features.counted_from
            out["counted_why"] = self.features.counted_why
        if self.extra_verdicts:
            out["verdicts"] = {k: v.to_json() for k, v in self.extra_verdicts.items()}
        return out


@dataclass
class AnalysisReport:
    gpu: GPU
    kernels: list[KernelResult]
    problems: list[FileProblem]
    #: the compile database the files were analysed with (relocated), if any
    database: CompileDatabase | None = None

    def to_json(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "gpu": {
                "name": self.gpu.name,
                "key": self.gpu.key,
                "balance_points": self.gpu.to_json()["balance_points"],
            },
            "kernels": [k.to_json() for k in self.kernels],
            "problems": [{"file": p.file, "message": p.message} for p in self.problems],
            **({"compile_commands": self.database.to_json()} if self.database else {}),
        }


def analyze_kernels(
    kernels: Iterable[KernelIR],
    gpu: GPU,
    defines: Mapping[str, str] | None = None,
    predictor: Predictor | None = None,
    context: LaunchContext | None = None,
    compiler: Compiler | None = None,
) -> list[KernelResult]:
    """Count, resolve and predict for kernels already discovered."""
    from roofcast.predictors import default_predictor

    results = count_kernels(kernels, defines, context, compiler)
    predict_verdicts(results, gpu, predictor or default_predictor(), context)
    return results


def count_kernels(
    kernels: Iterable[KernelIR],
    defines: Mapping[str, str] | None = None,
    context: LaunchContext | None = None,
    compiler: Compiler | None = None,
) -> list[KernelResult]:
    """Count and resolve, without verdicts (`predict_verdicts` gives them). A kernel's
    compile command's -D (`build_defines`) are bound too, under `defines`. With a
    `compiler` (--compile), FLOPs and int ops come from the kernel's SASS where it has some."""
    results = []
    for ir in kernels:
        bound = {**ir.build_defines, **(defines or {})}
        features = count_features(ir, bound)
        if compiler is not None:
            _recount(ir, features, compiler, bound)
        resolved = resolve_counts(features, bound, context)
        results.append(KernelResult(ir=ir, features=features, resolved=resolved))
    return results


def predict_verdicts(
    results: list[KernelResult],
    gpu: GPU,
    predictor: Predictor,
    context: LaunchContext | None = None,
) -> None:
    """Each result's verdict. A batching predictor (the learned model) takes them in one call:
    its fixed cost per call is paid once per task, not once per group of files."""
    predict_many = getattr(predictor, "predict_many", None)
    if predict_many is not None:
        verdicts = predict_many(results, gpu, context)
    else:
        verdicts = [predictor.predict(result, gpu, context) for result in results]
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
    compiler: Compiler | None = None,
) -> AnalysisReport:
    """The whole `analyze` job on files or folders.

    Files are split into groups that share nothing (see `analyzer.partition`); with `jobs`
    > 1 (None: one per available CPU) the groups run in that many processes. The report is
    the same for any `jobs`. `on_group_done(done, total)` is called as groups finish.
    `undefines` (-U) and `include_dirs` (-I) are as a compiler's. A compile `database`
    gives each file its compile command's flags too (relocated onto the listed files
    here); `defines` and `undefines` win over them."""
    from roofcast.predictors import default_predictor

    forget_resolved()  # files may have changed since the last analysis in this process
    listed = [Path(p) for p in paths]
    roots = [*roots_of(listed), *include_dirs]
    unlistable: list[Path] = []
    with _young_collections_only():
        files = expand_paths(listed, unlistable)
        unit_dirs = None
        if database is not None:
            database = database.relocate(files)
            unit_dirs = _unit_dirs(database)
        groups = independent_groups(files, roots, unit_dirs)
        defined = {k: v for k, v in (defines or {}).items() if k not in undefines}
        job = _GroupJob(
            roots,
            gpu,
            defined,
            predictor or default_predictor(),
            context,
            undefines,
            database,
            compiler,
        )
        workers = min(available_cpus() if jobs is None else max(1, jobs), len(groups))
        if workers > 1:
            outcomes = _run_parallel(job, groups, workers, on_group_done)
        else:
            outcomes = []
            for done, group in enumerate(groups, 1):
                outcomes.append(job(group))
                if on_group_done:
                    on_group_done(done, len(groups))
            job.judge(outcomes)
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


@contextmanager
def _young_collections_only() -> Iterator[None]:
    """No full garbage collections while analysing. A full collection walks every live
    object, and an analysis's results are a heap that only grows: over HeCBench's src/ they
    cost about 0.6 s of a 1-process run, and as much of the parent's CPU (which the workers
    need) in a parallel one, and found nothing: counting makes no reference cycles (a test
    holds it to that), and the few short-lived ones (sympy's) die young, where the young
    generations' collections, still running, free them."""
    thresholds = _put_off_full_collections()
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def _put_off_full_collections() -> tuple[int, int, int]:
    """Raise the oldest generation's threshold out of reach; returns the thresholds before."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1_000_000)
    return thresholds


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: a group's kernels (verdicts given by `_GroupJob.judge`) and the problems found in its files
_Outcome = tuple[list[KernelResult], list[FileProblem]]


@dataclass
class _GroupJob:
    """Discover, count, resolve and predict over one independent group of files."""

    roots: list[Path]
    gpu: GPU
    defines: dict[str, str]
    predictor: Predictor
    context: LaunchContext | None
    undefines: frozenset[str] = frozenset()
    database: CompileDatabase | None = None
    compiler: Compiler | None = None

    def __call__(self, files: list[Path]) -> _Outcome:
        """The group's results, without verdicts: `judge` gives those for many groups at once.
        An unexpected failure costs the file or kernel it happened in, not the run: it is
        one of the group's problems, and the rest of the group is analysed."""
        kernels, problems = self.discover(files)
        results = []
        for ir in kernels:
            bound = {**ir.build_defines, **self.defines}  # the compile command's -D, under ours
            try:
                features = count_features(ir, bound)
                if self.compiler is not None:
                    _recount(ir, features, self.compiler, bound)
                resolved = resolve_counts(features, bound, self.context)
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
        forget_nodes()
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


def _recount(
    ir: KernelIR, features: FeatureVector, compiler: Compiler, bound: Mapping[str, str]
) -> None:
    from roofcast.analyzer.compile import recount

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


_FLAVOUR = re.compile(r"[-_][A-Za-z0-9]+$")


def batch_groups(groups: list[list[Path]]) -> list[list[int]]:
    """Consecutive groups whose folders are named alike but for a last `-word` (`prog-cuda`,
    `prog-hip`, `prog-omp`) make one task: they often hold copies of the same files, and a
    process reuses a copy's expansion and parse (`parsing.RecentTexts`) only if it meets both."""
    batches: list[list[int]] = []
    last: tuple[str, ...] | None = None
    for i, group in enumerate(groups):
        stem = tuple(_FLAVOUR.sub("", part) for part in group[0].parent.parts)
        if batches and stem == last:
            batches[-1].append(i)
        else:
            batches.append([i])
        last = stem
    return batches


class _ExpressionPickler(pickle.Pickler):
    """Sympy expressions travel as nested tuples (`expr_to_tuple`): unpickling them the
    default way re-simplifies every node, in the parent, while the workers wait for a core."""

    def reducer_override(self, obj: object) -> object:
        if not isinstance(obj, sympy.Basic):
            return NotImplemented
        data = expr_to_tuple(obj)
        if isinstance(data, tuple) and data[0] == "P":
            return NotImplemented  # a node kind without a tuple form: sympy's own pickling
        return expr_from_tuple, (data,)


def _run_parallel(
    job: _GroupJob,
    groups: list[list[Path]],
    workers: int,
    on_group_done: Callable[[int, int], None] | None,
) -> list[_Outcome]:
    """Batches of groups, largest first, over `workers` processes: this one and `workers - 1`
    started here. Each process takes the next batch from a shared counter when it is free, so
    none waits for another to hand it work, and no process beyond one per CPU runs (a parent
    that only waited for results would still take CPU to read them back). A started process
    sends its outcomes once, when no batch is left. Outcomes come back in group order."""
    # On Linux, fork hands the loaded model, modules and groups to workers for free; elsewhere
    # (macOS, Windows) the platform's default start method pickles them once per worker.
    mp_context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
    batches = sorted(batch_groups(groups), key=lambda batch: -sum(len(groups[i]) for i in batch))
    counters = mp_context.Value("i", 0), mp_context.Value("i", 0)
    shared = _SharedBatches(job, groups, batches, *counters)
    outcomes: list = [None] * len(groups)

    def store(batch: list[int], found: list[_Outcome]) -> None:
        for i, outcome in zip(batch, found, strict=True):
            outcomes[i] = outcome

    started = []
    for _ in range(workers - 1):
        receive, send = mp_context.Pipe(duplex=False)
        process = mp_context.Process(target=_work_in_process, args=(shared, send), daemon=True)
        process.start()
        send.close()
        started.append((process, receive))
    try:
        for batch, found in shared.take():
            store(batch, found)
            if on_group_done:
                on_group_done(shared.finished.value, len(groups))
        for process, receive in started:
            for batch, found in _received(process, receive):
                store(batch, found)
            process.join()
    except BaseException:
        for process, _ in started:
            process.terminate()
        raise
    if on_group_done:
        on_group_done(len(groups), len(groups))
    return outcomes


@dataclass
class _SharedBatches:
    """The batches every process of a parallel analysis takes from, with counters shared
    between the processes: batches taken, and groups done (for progress)."""

    job: _GroupJob
    groups: list[list[Path]]
    batches: list[list[int]]
    claimed: Synchronized
    finished: Synchronized

    def take(self) -> Iterator[tuple[list[int], list[_Outcome]]]:
        """(batch, its outcomes) for each batch this process takes, until none is left."""
        while True:
            with self.claimed.get_lock():
                taken = self.claimed.value
                self.claimed.value += 1
            if taken >= len(self.batches):
                return
            batch = self.batches[taken]
            found = [self.job(self.groups[i]) for i in batch]
            self.job.judge(found)
            with self.finished.get_lock():
                self.finished.value += len(batch)
            yield batch, found


def _work_in_process(shared: _SharedBatches, send: Connection) -> None:
    """A started process: batches until none is left, then every outcome in one message,
    sympy expressions as plain tuples (results hold no parse trees: they cannot be pickled).
    Each batch is pickled as it is done, so that its objects can go."""
    _put_off_full_collections()  # as `_young_collections_only`, for the process's life
    done: list[bytes] = []
    try:
        for batch, found in shared.take():
            buffer = io.BytesIO()
            _ExpressionPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((batch, found))
            done.append(buffer.getvalue())
        message = pickle.dumps(("done", done), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # the parent raises it (or says what it was)
        try:
            message = pickle.dumps(("error", exc))
        except Exception:
            message = pickle.dumps(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    send.send_bytes(message)
    send.close()


def _received(process: BaseProcess, receive: Connection) -> list[tuple[list[int], list[_Outcome]]]:
    """A started process's outcomes, or its error raised here."""
    try:
        status, payload = pickle.loads(receive.recv_bytes())
    except EOFError:
        process.join()
        raise RuntimeError(
            f"an analysis process ended without its results (exit code {process.exitcode})"
        ) from None
    if status == "error":
        raise payload
    return [pickle.loads(data) for data in payload]
