"""`check_predictor`: the contract every predictor keeps (`roofcast.predictors.base`), as
scikit-learn's `check_estimator` holds every estimator to one. A helper module, not collected
(its name does not start with `test_`); tests/test_predictor_contract.py runs it.

The contract, each part a check below:
- `predict(items, gpu)` returns a list of Verdicts, one per item (an empty batch: []);
- in the items' order (a reversed batch gives the reversed verdicts), and a batch gives what
  each item gives alone;
- the same batch gives the same verdicts again (bound, reason, confidence);
- every verdict, `unknown` included, names the predictor (`verdict.predictor == name`) and
  an `unknown` one says why;
- it reads its kernels and leaves them as they were (the caller sets `result.verdict`);
- a malformed batch or a `gpu` that is not a GPU raises TypeError, not some error of its own.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path

from roofcast.gpu_specs import GPU

from roofcast.pipeline import analyze_paths
from roofcast.predictors.base import Item, Predictor
from roofcast.results import KernelResult, LaunchContext, Verdict

BOUNDS = ("compute", "bandwidth", "unknown")

#: kernels of our own: streaming, arithmetic-heavy, a copy, and one that does nothing (the
#: static predictors cannot judge it: their `unknown`)
SOURCE = """\
__global__ void scale(float* __restrict__ y, const float* __restrict__ x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

__global__ void poly(float* __restrict__ y, const float* __restrict__ x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], acc = 0.0f;
    for (int k = 0; k < 256; ++k) acc = acc * v + 1.0f;
    y[i] = acc;
}

__global__ void copy(double* __restrict__ y, const double* __restrict__ x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}

__global__ void nothing() {}
"""


def contract_kernels(folder: Path, gpu: GPU) -> list[KernelResult]:
    """The contract's kernels, analysed as `analyze` does (verdicts cleared)."""
    path = folder / "contract.cu"
    path.write_text(SOURCE)
    kernels = analyze_paths([path], gpu).kernels
    for kernel in kernels:
        kernel.verdict = None
    return kernels


def contract_items(kernels: Sequence[KernelResult]) -> list[Item]:
    """Each kernel with a launch, and the first again without one (a context is optional)."""
    launch = LaunchContext(block=(256, 1, 1), grid=(4096, 1, 1), exe_args="1048576")
    return [*((k, launch) for k in kernels), (kernels[0], None)]


def _key(verdict: Verdict) -> tuple:
    return verdict.bound, verdict.reason, verdict.predictor, verdict.confidence


def check_predictor(predictor: Predictor, items: Sequence[Item], gpu: GPU) -> list[Verdict]:
    """Hold `predictor` to the contract on `items` (at least two); AssertionError naming the
    part broken. Returns the batch's verdicts, for the caller's own checks."""
    name = predictor.name
    assert isinstance(name, str) and name, "a predictor has a name"
    items = list(items)
    assert len(items) >= 2, "the contract needs a batch of at least two items"
    before = [copy.copy(kernel.__dict__) for kernel, _ in items]

    # length, types, names
    assert predictor.predict([], gpu) == [], "an empty batch gives no verdicts"
    verdicts = predictor.predict(items, gpu)
    assert isinstance(verdicts, list), f"{name}: predict returns a list"
    assert len(verdicts) == len(items), f"{name}: one verdict per item"
    for verdict in verdicts:
        assert isinstance(verdict, Verdict), f"{name}: {verdict!r} is not a Verdict"
        assert verdict.bound in BOUNDS, f"{name}: bound {verdict.bound!r}"
        assert verdict.predictor == name, f"{name}: a verdict names {verdict.predictor!r}"
        if verdict.bound == "unknown":
            assert verdict.reason.strip(), f"{name}: an unknown verdict says why"

    # determinism
    again = predictor.predict(items, gpu)
    assert [_key(v) for v in again] == [_key(v) for v in verdicts], f"{name}: not deterministic"

    # order: reversed batch, and each item alone
    reversed_verdicts = predictor.predict(items[::-1], gpu)
    assert [_key(v) for v in reversed_verdicts[::-1]] == [_key(v) for v in verdicts], (
        f"{name}: verdicts do not follow the items' order"
    )
    alone = [predictor.predict([item], gpu) for item in items]
    assert all(len(one) == 1 for one in alone), f"{name}: one item, one verdict"
    assert [_key(one[0]) for one in alone] == [_key(v) for v in verdicts], (
        f"{name}: a kernel's verdict depends on the rest of the batch"
    )

    # the kernels are read, not changed
    after = [kernel.__dict__ for kernel, _ in items]
    assert after == before, f"{name}: predict changed its kernels"

    # error types
    kernel, launch = items[0]
    malformed: list[tuple[object, object]] = [
        ([(kernel, launch)], gpu.key),  # a GPU's name, not a GPU
        ([kernel], gpu),  # a kernel, not a pair
        ([(kernel, launch, None)], gpu),  # three things
        ([(kernel.ir, launch)], gpu),  # the IR, not the analysis
        ([(kernel, {"block": (256, 1, 1)})], gpu),  # a dict, not a LaunchContext
        (kernel, gpu),  # one kernel, not a batch
    ]
    for batch, target in malformed:
        try:
            predictor.predict(batch, target)  # type: ignore[arg-type]
        except TypeError:
            continue
        except Exception as exc:  # noqa: BLE001 - the wrong type of error is the failure
            raise AssertionError(f"{name}: {type(exc).__name__}, not TypeError: {exc}") from exc
        raise AssertionError(f"{name}: accepted a malformed batch {batch!r:.80}")
    return verdicts
