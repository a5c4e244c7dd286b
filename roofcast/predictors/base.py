"""One protocol for every predictor (roofline rule, learned baseline, LLM), as kerncraft does
for its performance models, so `analyze`, `evaluate`, `hook` and the LLM scenarios never
special-case one.

Batch-first: a predictor gets every (kernel, launch) pair of a run in one call, so a model
with a fixed cost per call (the learned forests, an LLM endpoint with requests in flight)
pays it once, and a one-kernel predictor is just the loop. `tests/predictor_contract.py`
holds every predictor to this contract."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from roofcast.gpu_specs import GPU
from roofcast.results import Bound, KernelResult, LaunchContext, Verdict

__all__ = ["Bound", "Item", "LaunchContext", "Predictor", "Verdict", "check_items"]

#: one kernel to judge and the launch it is judged for (None: nothing known beyond the source)
Item = tuple[KernelResult, LaunchContext | None]


class Predictor(Protocol):
    """Kernels -> verdicts. `name` is what `--predictor` and reports call it.

    `predict(items, gpu)` returns one verdict per item, in the items' order; the same items
    give the same verdicts. A kernel the predictor cannot judge gets an `unknown` verdict
    whose reason says why and whose `predictor` is `name`, never an exception; a batch that
    is not a sequence of (KernelResult, LaunchContext | None) pairs, or a `gpu` that is not
    a GPU, raises TypeError (`check_items`)."""

    name: str

    def predict(self, items: Sequence[Item], gpu: GPU) -> list[Verdict]: ...


def check_items(items: Sequence[Item], gpu: GPU) -> list[Item]:
    """The batch as a list, or TypeError naming what is wrong: the contract's one check of
    its inputs, shared so that every predictor refuses the same things the same way."""
    if not isinstance(gpu, GPU):
        raise TypeError(f"gpu must be a GPU, not {type(gpu).__name__}")
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise TypeError(f"items must be a sequence of pairs, not {type(items).__name__}")
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError(f"item {i} is not a (KernelResult, LaunchContext | None) pair")
        kernel, context = item
        if not isinstance(kernel, KernelResult):
            raise TypeError(f"item {i}: kernel must be a KernelResult, not {type(kernel).__name__}")
        if context is not None and not isinstance(context, LaunchContext):
            raise TypeError(
                f"item {i}: context must be a LaunchContext or None, not {type(context).__name__}"
            )
    return list(items)
