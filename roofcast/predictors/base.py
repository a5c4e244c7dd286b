"""One protocol for every predictor (roofline rule, learned baseline, LLM), as kerncraft does
for its performance models, so `analyze` and `evaluate` never special-case one."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU
    from roofcast.pipeline import KernelResult

Bound = Literal["compute", "bandwidth", "unknown"]


@dataclass
class LaunchContext:
    """What the caller knows about one launch beyond the source: from a manifest row, the
    command line, or host code. Any field may be missing."""

    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    exe_args: str = ""
    extra: dict[str, float] = field(default_factory=dict)


@dataclass
class Verdict:
    """A predictor's answer for one kernel on one GPU, with the reason a human can check."""

    bound: Bound
    reason: str
    predictor: str
    confidence: float | None = None
    intensities: dict[str, float | str] = field(default_factory=dict)
    details: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "bound": self.bound,
            "reason": self.reason,
            "predictor": self.predictor,
            "confidence": self.confidence,
        }

    def intensity_json(self) -> dict[str, float | str]:
        """The intensities the verdict compared with the balance points (the static ones for
        the rule, the corrected ones for the default), so every output shows the figure the
        decision used; `inf` as a string, since JSON has no infinity."""
        return {
            c: ("inf" if isinstance(v, float) and math.isinf(v) else round(float(v), 6))
            for c, v in self.intensities.items()
            if isinstance(v, (int, float))
        }


class Predictor(Protocol):
    """analyze -> verdict. `name` is what `--predictor` and reports call it."""

    name: str

    def predict(
        self, kernel: KernelResult, gpu: GPU, context: LaunchContext | None = None
    ) -> Verdict: ...
