"""Running independent groups of files over processes, with the same result as one process.

The pipeline hands over a job (a group of files -> its outcome, and `judge`, which gives the
verdicts of many outcomes at once) and the groups; this module decides which process runs
which batch of groups, brings the outcomes back in group order (sympy expressions as plain
tuples), and keeps full garbage collections out of the way. It knows nothing of kernels."""

from __future__ import annotations

import gc
import io
import multiprocessing
import os
import pickle
import re
import sys
from collections.abc import Callable, Iterator
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


class Job(Protocol):
    """One group's work, and the verdicts of many groups' outcomes in one call."""

    def __call__(self, files: list[Path]) -> Outcome: ...

    def judge(self, outcomes: list[Outcome]) -> None: ...


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

    def reducer_override(self, obj: object) -> Any:
        if not isinstance(obj, sympy.Basic):
            return NotImplemented
        data = expr_to_tuple(obj)
        if isinstance(data, tuple) and data[0] == "P":
            return NotImplemented  # a node kind without a tuple form: sympy's own pickling
        return expr_from_tuple, (data,)


def run_parallel(
    job: Job,
    groups: list[list[Path]],
    workers: int,
    on_group_done: Callable[[int, int], None] | None,
) -> list[Outcome]:
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


@dataclass
class _SharedBatches:
    """The batches every process of a parallel analysis takes from, with counters shared
    between the processes: batches taken, and groups done (for progress)."""

    job: Job
    groups: list[list[Path]]
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
            found = [self.job(self.groups[i]) for i in batch]
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
