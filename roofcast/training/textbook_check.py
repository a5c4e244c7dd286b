"""Agreement of a predictor with the textbook set (kernels/textbook/): kernels written from
first principles, outside any benchmark, with the verdict a profiler would give on the A100
and H100. `roofcast train` scores each model on it beside the cross-validation, because a
model fitted to one suite's quirks can look good in CV and still be wrong on plain kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from roofcast.gpu_specs import GPU, load_gpu
from roofcast.kernels.textbook import GPUS, TextbookKernel, load_textbook
from roofcast.pipeline import analyze_paths, predict_verdicts
from roofcast.predictors.base import Predictor
from roofcast.results import KernelResult


@dataclass
class TextbookCase:
    """One kernel at its sidecar's sizes on one reference GPU, counted once."""

    entry: TextbookKernel
    gpu_key: str  # as the sidecar names it (`a100`, `h100`)
    gpu: GPU
    result: KernelResult | None

    @property
    def expected(self) -> str:
        return self.entry.verdicts[self.gpu_key]


def textbook_cases(gpus: Sequence[str] = GPUS) -> list[TextbookCase]:
    """Every entry counted on every GPU (the analysis is the pipeline's, as `analyze` runs)."""
    from roofcast.predictors.roofline import RooflinePredictor

    rule = RooflinePredictor()
    cases = []
    for entry in load_textbook():
        for key in gpus:
            gpu = load_gpu(key)
            report = analyze_paths([entry.source], gpu, entry.defines, predictor=rule)
            found = next(
                (k for k in report.kernels if k.ir.name == entry.name and k.ir.line == entry.line),
                None,
            )
            cases.append(TextbookCase(entry, key, gpu, found))
    return cases


def agreement(predictor: Predictor, cases: Sequence[TextbookCase]) -> dict:
    """Share of cases whose verdict equals the expected one, overall and per GPU, with the
    ids of the misses."""
    hits: dict[str, list[int]] = {}
    misses = []
    for case in cases:
        got = "not found"
        if case.result is not None:
            predict_verdicts([case.result], case.gpu, predictor)
            got = case.result.verdict.bound if case.result.verdict else "unknown"
        right = got == case.expected
        for label in ("all", case.gpu_key):
            tally = hits.setdefault(label, [0, 0])
            tally[0] += right
            tally[1] += 1
        if not right:
            misses.append(f"{case.entry.id} [{case.gpu_key}]: expected {case.expected}, got {got}")
    return {
        label: {"agree": a, "n": n, "share": a / n if n else 0.0} for label, (a, n) in hits.items()
    } | {"misses": misses}


def textbook_agreement(predictor: Predictor) -> dict:
    return agreement(predictor, textbook_cases())
