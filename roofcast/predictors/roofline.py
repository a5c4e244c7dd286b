"""The analytic roofline rule, the same as the ground truth's, applied to static counts."""

from __future__ import annotations

import math
from collections.abc import Sequence

from roofcast.gpu_specs import GPU
from roofcast.gpu_specs.opclasses import RULE_CLASSES
from roofcast.predictors.base import Item, Verdict, check_items
from roofcast.results import KernelResult

_UNITS = {"sp": "FLOP/B", "dp": "FLOP/B", "hp": "FLOP/B", "int": "op/B"}
_LABEL = {"sp": "SP", "dp": "DP", "hp": "HP", "int": "INT"}


def roofline_verdict(
    intensities: dict[str, float], gpu: GPU, predictor: str = "roofline", moves_bytes: bool = True
) -> Verdict:
    """compute when any class's intensity reaches its balance point, else bandwidth."""
    balance = gpu.balance_points
    ratios = {c: intensities.get(c, 0.0) / balance[c] for c in RULE_CLASSES if c in balance}
    if all(intensities.get(c, 0.0) == 0 for c in RULE_CLASSES):
        if not moves_bytes:
            return Verdict(
                "unknown",
                "no arithmetic and no memory traffic counted",
                predictor,
                intensities=dict(intensities),
            )
        return Verdict(
            "bandwidth",
            "moves memory with no arithmetic counted (AI 0)",
            predictor,
            intensities=dict(intensities),
            details={"class": "none", "ratio": 0.0},
        )
    top = max(ratios, key=lambda c: ratios[c])
    ai = intensities.get(top, 0.0)
    shown = "inf (no DRAM bytes)" if math.isinf(ai) else f"{ai:.3g} {_UNITS[top]}"
    if ratios[top] >= 1:
        reason = f"{_LABEL[top]} AI {shown} >= balance {balance[top]:.3g}"
        return Verdict(
            "compute",
            reason,
            predictor,
            intensities=dict(intensities),
            details={"class": top, "ratio": ratios[top]},
        )
    reason = f"{_LABEL[top]} AI {shown} < balance {balance[top]:.3g} (closest class)"
    return Verdict(
        "bandwidth",
        reason,
        predictor,
        intensities=dict(intensities),
        details={"class": top, "ratio": ratios[top]},
    )


class RooflinePredictor:
    """Static counts -> intensities -> the GPU's balance points."""

    name = "roofline"

    def predict(self, items: Sequence[Item], gpu: GPU) -> list[Verdict]:
        return [self.verdict(kernel, gpu) for kernel, _ in check_items(items, gpu)]

    def verdict(self, kernel: KernelResult, gpu: GPU) -> Verdict:
        """The rule for one kernel (the launch changes no static intensity)."""
        verdict = roofline_verdict(
            kernel.resolved.intensities, gpu, self.name, moves_bytes=kernel.resolved.bytes > 0
        )
        if kernel.resolved.defaults:
            shown = ", ".join(f"{k}={v}" for k, v in sorted(kernel.resolved.defaults.items())[:4])
            more = "..." if len(kernel.resolved.defaults) > 4 else ""
            verdict.reason += f"; symbolic counts, defaults {shown}{more}"
        return verdict
