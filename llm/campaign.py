"""A campaign: one scenario and model over many kernels, concurrent, resumable, scored.

Prompts are built first (cheap, no network), then asked through the store with N worker
threads and a progress bar showing tokens, estimated cost and store hits. An endpoint that
stops answering aborts the campaign with one line; everything answered so far is already
committed, so the same command resumes it.
"""
from __future__ import annotations

import statistics
import threading
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from roofcast.llm.answers import LABELS
from roofcast.llm.ask import Answer, Asker
from roofcast.llm.client import EndpointError
from roofcast.llm.context import DEFAULT_BUDGET
from roofcast.llm.prompts import KernelInput, Prompt, build_prompt

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU
    from roofcast.llm.fewshot import ExamplePool


class CampaignAborted(RuntimeError):
    """The endpoint failed for good mid-campaign; `done` answers are stored."""

    def __init__(self, message: str, done: int) -> None:
        super().__init__(message)
        self.done = done


@dataclass
class Item:
    kernel: KernelInput
    prompt: Prompt | None
    error: str = ""  # why no prompt could be built
    answer: Answer | None = None

    @property
    def predicted(self) -> str:
        """'compute' / 'bandwidth' / 'unknown' for the metrics."""
        if self.answer is None:
            return "unknown"
        return self.answer.bound


def build_items(
    kernels: Sequence[KernelInput],
    scenario: str,
    gpu: GPU,
    structured_mode: str,
    budget: int = DEFAULT_BUDGET,
    pool: ExamplePool | None = None,
    k: int = 2,
) -> list[Item]:
    """One prompt per kernel; a kernel whose prompt cannot be built keeps the reason."""
    items = []
    for kernel in kernels:
        try:
            examples = pool.pick(kernel, k, budget) if (scenario == "few-shot" and pool) else ()
            prompt = build_prompt(scenario, kernel, gpu, structured_mode, budget, examples)
        except ValueError as exc:
            items.append(Item(kernel, None, str(exc)))
            continue
        items.append(Item(kernel, prompt))
    return items


@dataclass
class _Tally:
    tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    hits: int = 0
    sent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, answer: Answer) -> None:
        with self.lock:
            self.tokens += answer.prompt_tokens + answer.completion_tokens
            if answer.cost_usd is None:
                self.cost_known = False
            else:
                self.cost += answer.cost_usd
            self.hits += answer.hits
            self.sent += answer.sent

    def text(self) -> str:
        cost = f"${self.cost:.4f}"
        if not self.cost_known:
            cost = f">= {cost} (some prices unknown)"
        return f"{self.tokens:,} tok  {cost}  store hits {self.hits}  sent {self.sent}"


def run_items(
    items: Sequence[Item],
    asker: Asker,
    concurrency: int = 1,
    progress: bool = True,
    label: str = "asking",
) -> list[Item]:
    """Ask every item with a prompt; answers land on the items (and in the store)."""
    todo = [item for item in items if item.prompt is not None]
    tally = _Tally()
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[stats]}"),
        console=Console(stderr=True),
        disable=not progress,
    )
    stop = threading.Event()

    def work(item: Item) -> Item:
        if stop.is_set():
            return item
        assert item.prompt is not None
        item.answer = asker.ask(item.prompt, item.kernel.key)
        tally.add(item.answer)
        return item

    with bar:
        task = bar.add_task(label, total=len(todo), stats=tally.text())
        pool = ThreadPoolExecutor(max_workers=max(1, concurrency))
        try:
            futures = {pool.submit(work, item) for item in todo}
            while futures:
                finished, futures = wait(futures, return_when=FIRST_EXCEPTION)
                for future in finished:
                    exc = future.exception()
                    if isinstance(exc, EndpointError):
                        answered = sum(1 for i in todo if i.answer is not None)
                        raise CampaignAborted(str(exc), answered)
                    if exc is not None:
                        raise exc
                    bar.update(task, advance=1, stats=tally.text())
        except BaseException:
            # stop at once (Ctrl-C, a dead endpoint): queued kernels are dropped, requests in
            # flight finish and store their answers
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    return list(items)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def summarise(items: Sequence[Item], scenario: str, model: str) -> dict:
    """Scores and costs of one campaign, in the evaluation's metric vocabulary."""
    from roofcast.evaluation.metrics import label_metrics

    scored = [i for i in items]
    truth = [i.kernel.truth.lower() if i.kernel.truth else "unknown" for i in scored]
    predicted = [i.predicted for i in scored]
    with_truth = [(t, p) for t, p in zip(truth, predicted, strict=True) if t != "unknown"]
    metrics = label_metrics([t for t, _ in with_truth], [p for _, p in with_truth])
    by_language = {}
    for language in sorted({i.kernel.lang for i in scored}):
        pairs = [(t, p) for i, t, p in zip(scored, truth, predicted, strict=True)
                 if i.kernel.lang == language and t != "unknown"]
        if pairs:
            by_language[language] = label_metrics([t for t, _ in pairs], [p for _, p in pairs])
    answers = [i.answer for i in scored if i.answer is not None]
    labels = [a.label for a in answers]
    fresh_latency = [s.latency_s for a in answers for s in a.samples
                     if s.latency_s is not None and s.error is None]
    costs = [a.cost_usd for a in answers]
    hits = sum(a.hits for a in answers)
    sent = sum(a.sent for a in answers)
    prompt_tokens = sum(a.prompt_tokens for a in answers)
    return {
        "scenario": scenario,
        "model": model,
        "kernels": len(scored),
        "answered": sum(1 for lab in labels if lab in LABELS),
        "unparsed": labels.count("unparsed"),
        "errors": labels.count("error"),
        "missing": labels.count("missing"),
        "no_prompt": sum(1 for i in scored if i.prompt is None),
        "metrics": metrics,
        "by_language": by_language,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": sum(a.completion_tokens for a in answers),
        "mean_prompt_tokens": round(prompt_tokens / len(answers), 1) if answers else None,
        "cost_usd": (
            None if any(c is None for c in costs) else round(sum(cast("list[float]", costs)), 6)
        ),
        "latency_s": {
            "median": _median(fresh_latency),
            "mean": round(statistics.fmean(fresh_latency), 3) if fresh_latency else None,
            "total": round(sum(fresh_latency), 2),
        },
        "store": {"hits": hits, "sent": sent,
                  "hit_rate": round(hits / (hits + sent), 4) if hits + sent else None},
    }


def item_rows(items: Sequence[Item]) -> list[dict]:
    """Per-kernel results for CSV/JSON output (no prompts, no secrets)."""
    out = []
    for item in items:
        answer = item.answer
        out.append({
            "kernel": item.kernel.key,
            "language": item.kernel.lang,
            "truth": item.kernel.truth or "",
            "answer": answer.label if answer else ("no_prompt" if item.prompt is None else ""),
            "confidence": answer.confidence if answer else None,
            "reason": (answer.reason if answer else item.error) or "",
            "prompt_tokens": answer.prompt_tokens if answer else None,
            "completion_tokens": answer.completion_tokens if answer else None,
            "latency_s": round(answer.latency_s, 3) if answer else None,
            "store_hits": answer.hits if answer else 0,
            "error": (answer.error if answer else item.error) or "",
        })
    return out
