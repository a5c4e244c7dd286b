"""analyze = discover kernels -> count features -> resolve symbols -> predict, for all verbs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from roofcast.analyzer import discover
from roofcast.analyzer.model import FileProblem, KernelIR
from roofcast.features import count_features
from roofcast.features.resolve import ResolvedCounts, resolve_counts
from roofcast.features.vector import FeatureVector
from roofcast.gpu_specs import GPU
from roofcast.predictors.base import LaunchContext, Predictor, Verdict

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
            "symbols": sorted(r.unbound),
            "defaults_applied": r.defaults_json(),
            "threads": r.threads_json(),
            "features": r.structure_json(self.features),
        }
        if self.extra_verdicts:
            out["verdicts"] = {k: v.to_json() for k, v in self.extra_verdicts.items()}
        return out


@dataclass
class AnalysisReport:
    gpu: GPU
    kernels: list[KernelResult]
    problems: list[FileProblem]

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
        }


def analyze_kernels(
    kernels: Iterable[KernelIR],
    gpu: GPU,
    defines: Mapping[str, str] | None = None,
    predictor: Predictor | None = None,
    context: LaunchContext | None = None,
) -> list[KernelResult]:
    """Count, resolve and predict for kernels already discovered."""
    from roofcast.predictors import default_predictor

    predictor = predictor or default_predictor()
    results = []
    for ir in kernels:
        features = count_features(ir, defines or {})
        resolved = resolve_counts(features, defines or {}, context)
        result = KernelResult(ir=ir, features=features, resolved=resolved)
        result.verdict = predictor.predict(result, gpu, context)
        results.append(result)
    return results


def analyze_paths(
    paths: Sequence[Path | str],
    gpu: GPU,
    defines: Mapping[str, str] | None = None,
    predictor: Predictor | None = None,
    context: LaunchContext | None = None,
) -> AnalysisReport:
    """The whole `analyze` job on files or folders."""
    found = discover([Path(p) for p in paths], defines or {})
    results = analyze_kernels(found.kernels, gpu, defines, predictor, context)
    return AnalysisReport(gpu=gpu, kernels=results, problems=found.problems)
