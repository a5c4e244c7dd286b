"""The data the layers hand each other: a kernel's analysis (`KernelResult`), a whole run's
(`AnalysisReport`, whose JSON is the `analyze --format json` schema), the launch a verdict is
asked for (`LaunchContext`) and the verdict (`Verdict`).

They live below the predictors and the pipeline so that a predictor reads a kernel's counts
without importing the orchestrator that produced them, and the pipeline, evaluation, the LLM
scenarios and the CLI all share one definition."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from roofcast.analyzer.compdb import CompileDatabase
from roofcast.analyzer.model import FileProblem, KernelIR
from roofcast.features.resolve import ResolvedCounts
from roofcast.features.vector import FeatureVector
from roofcast.gpu_specs import GPU

Bound = Literal["compute", "bandwidth", "unknown"]


@dataclass
class LaunchContext:
    """What the caller knows about one launch beyond the source: from a manifest row, the
    command line, or host code. Any field may be missing."""

    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    exe_args: str = ""
    extra: dict[str, float] = field(default_factory=dict)
    #: which launch of the kernel was profiled, 1-based, where a manifest's protocol says
    #: (rule D34); None: not known
    ordinal: int | None = None


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
            # the launch's DRAM traffic (docs/counting.md T1-T7), when the model could run
            "dram_bytes": r.dram.to_json() if r.dram is not None else None,
            "traffic_model": r.traffic,
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
            "notes": [*self.features.notes, *r.notes],
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
