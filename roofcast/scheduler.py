"""Running independent groups of work over processes, with the same result as one process.

An analysis hands over a job (a group -> its outcome, and `judge`, which gives the verdicts
of many outcomes at once) and the groups: groups of files for `analyze`, manifest targets
for `evaluate` and `train`. `run_groups` runs them in this process or decides which process
runs which batch of groups, brings the outcomes back in group order (sympy expressions as
plain tuples), and keeps garbage collections out of the way (none while a group runs, young
ones between groups, no full ones). Each started process works
in its own copy of the analysis session (`analyzer.session`): its caches are its own. This
module knows nothing of kernels."""

from __future__ import annotations

import gc
import io
import multiprocessing
import os
import pickle
import re
import sys
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any, Protocol

import sympy

from roofcast.features.symbolic import expr_from_tuple, expr_to_tuple

#: what a job makes of one group (the pipeline's: its kernels and its files' problems)
Outcome = Any
#: one group of work: a list of files (the pipeline's) or a job's own kind of item
Group = Any


class Job(Protocol):
    """One group's work, and the verdicts of many groups' outcomes in one call."""

    def __call__(self, group: Any, /) -> Outcome: ...

    def judge(self, outcomes: list[Outcome]) -> None: ...


def run_groups(
    job: Job,
    groups: Sequence[Group],
    jobs: int | None,
    on_group_done: Callable[[int, int], None] | None = None,
    family: Callable[[Group], Hashable] | None = None,
) -> list[Outcome]:
    """Every group's outcome, in group order, judged: in this process, or over `jobs`
    processes (None: one per available CPU) when there is more than one group, with the
    same outcomes. `family(group)` names groups that likely share texts (a process takes a
    family's consecutive groups together); by default, the folder family of a file group."""
    workers = min(available_cpus() if jobs is None else max(1, jobs), len(groups))
    if workers > 1:
        return run_parallel(job, list(groups), workers, on_group_done, family)
    outcomes = []
    for done, group in enumerate(groups, 1):
        with collected_after():
            outcomes.append(job(group))
        if on_group_done:
            on_group_done(done, len(groups))
    job.judge(outcomes)
    return outcomes


@contextmanager
def young_collections_only() -> Iterator[None]:
    """No full garbage collections while analysing. A full collection walks every live
    object, and an analysis's results are a heap that only grows, so over a large tree the
    full collections cost time (and, in a parallel run, the parent's CPU that the workers
    need) and find nothing: counting makes no reference cycles (a test holds it to that),
    and the few short-lived ones (sympy's) die young, where the young generations'
    collections, still running, free them."""
    thresholds = put_off_full_collections()
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


@contextmanager
def collected_after() -> Iterator[None]:
    """No automatic garbage collection while one group is analysed, then one collection of
    the young generations. Automatic collections run every few hundred new objects and walk
    every young object still alive, so over a whole tree (HeCBench's src/) they took 0.76 s
    a run and freed almost nothing: what a group allocates lives until its outcome is made,
    or dies by reference count. The few short-lived cycles (sympy's) wait until the group
    ends; one young collection there walks only what the group kept, 0.32 s a run in all
    (docs/performance.md, session 22). A caller that turned collection off keeps it off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(1)


def put_off_full_collections() -> tuple[int, int, int]:
    """Raise the oldest generation's threshold out of reach; returns the thresholds before."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1_000_000)
    return thresholds


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_FLAVOUR = re.compile(r"[-_][A-Za-z0-9]+$")


def name_family(name: str) -> str:
    """A folder's name but for a last `-word` (`prog-cuda` -> `prog`)."""
    return _FLAVOUR.sub("", name)


def folder_family(group: list[Path]) -> tuple[str, ...]:
    """A file group's folder, each part named but for a last `-word`."""
    return tuple(name_family(part) for part in group[0].parent.parts)


def batch_groups(
    groups: list[Group], family: Callable[[Group], Hashable] | None = None
) -> list[list[int]]:
    """Consecutive groups of one family (by default, folders named alike but for a last
    `-word`: `prog-cuda`, `prog-hip`, `prog-omp`) make one task: they often hold copies of the
    same files, and a process reuses a copy's expansion and parse (the session's
    `RecentTexts`) only if it meets both."""
    family = family or folder_family
    batches: list[list[int]] = []
    last: Hashable = None
    for i, group in enumerate(groups):
        stem = family(group)
        if batches and stem == last:
            batches[-1].append(i)
        else:
            batches.append([i])
        last = stem
    return batches


class _ExpressionPickler(pickle.Pickler):
    """Sympy expressions travel as nested tuples (`expr_to_tuple`): unpickling them the
    default way re-simplifies every node, in the parent, while the workers wait for a core."""

    def reducer_override(self, obj: object) -> Any:
        if not isinstance(obj, sympy.Basic):
            return NotImplemented
        data = expr_to_tuple(obj)
        if isinstance(data, tuple) and data[0] == "P":
            return NotImplemented  # a node kind without a tuple form: sympy's own pickling
        return expr_from_tuple, (data,)


def run_parallel(
    job: Job,
    groups: list[Group],
    workers: int,
    on_group_done: Callable[[int, int], None] | None,
    family: Callable[[Group], Hashable] | None = None,
) -> list[Outcome]:
    """Batches of groups, largest first, over `workers` processes: this one and `workers - 1`
    started here. Each process takes the next batch from a shared counter when it is free, so
    none waits for another to hand it work, and no process beyond one per CPU runs (a parent
    that only waited for results would still take CPU to read them back). A started process
    sends its outcomes once, when no batch is left. Outcomes come back in group order."""
    # On Linux, fork hands the loaded model, modules and groups to workers for free; elsewhere
    # (macOS, Windows) the platform's default start method pickles them once per worker.
    mp_context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
    batches = sorted(
        batch_groups(groups, family), key=lambda batch: -sum(_size(groups[i]) for i in batch)
    )
    counters = mp_context.Value("i", 0), mp_context.Value("i", 0)
    shared = _SharedBatches(job, groups, batches, *counters)
    outcomes: list = [None] * len(groups)

    def store(batch: list[int], found: list[Outcome]) -> None:
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


def _size(group: Group) -> int:
    """How much work a group is, for the largest batches to start first: its files."""
    return len(group) if isinstance(group, list) else 1


@dataclass
class _SharedBatches:
    """The batches every process of a parallel analysis takes from, with counters shared
    between the processes: batches taken, and groups done (for progress)."""

    job: Job
    groups: list[Group]
    batches: list[list[int]]
    claimed: Synchronized
    finished: Synchronized

    def take(self) -> Iterator[tuple[list[int], list[Outcome]]]:
        """(batch, its outcomes) for each batch this process takes, until none is left."""
        while True:
            with self.claimed.get_lock():
                taken = self.claimed.value
                self.claimed.value += 1
            if taken >= len(self.batches):
                return
            batch = self.batches[taken]
            found = []
            for i in batch:
                with collected_after():
                    found.append(self.job(self.groups[i]))
            self.job.judge(found)
            with self.finished.get_lock():
                self.finished.value += len(batch)
            yield batch, found


def _work_in_process(shared: _SharedBatches, send: Connection) -> None:
    """A started process: batches until none is left, then every outcome in one message,
    sympy expressions as plain tuples (results hold no parse trees: they cannot be pickled).
    Each batch is pickled as it is done, so that its objects can go."""
    put_off_full_collections()  # as `young_collections_only`, for the process's life
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


def _received(process: BaseProcess, receive: Connection) -> list[tuple[list[int], list[Outcome]]]:
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
