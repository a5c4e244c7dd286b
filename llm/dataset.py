"""Manifest rows -> the kernels an LLM campaign asks about, via the evaluation's matching.

Rows are matched to the analyzer's kernels exactly as `evaluate` does (CUDA: target + kernel
name; OpenMP: target + bare enclosing function + pragma line). The static analysis (counts
and the default predictor's verdict) is only run where a scenario needs it (hybrid). Labels
and measured figures ride along as truth; only the profile scenario shows the figures to
the model.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from roofcast.llm.answers import BANDWIDTH, COMPUTE
from roofcast.llm.prompts import KernelInput

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU

    from roofcast.evaluation.manifest import ManifestRow
    from roofcast.evaluation.matching import SourceIndex


@dataclass
class Selection:
    """The campaign's kernels, and the rows that could not become one (with why)."""

    inputs: list[KernelInput] = field(default_factory=list)
    unmatched: list[tuple[str, str]] = field(default_factory=list)  # (row key, reason)
    rows: int = 0


def truth_label(label: str) -> str:
    return COMPUTE if label.lower() == "compute" else BANDWIDTH


def select_rows(
    rows: Sequence[ManifestRow],
    per_class: int | None = None,
    seed: int = 0,
    language: str | None = None,
    limit: int | None = None,
    index: SourceIndex | None = None,
) -> list[ManifestRow]:
    """Language filter, then a balanced sample (per class per language), then a cap.

    With an `index`, the sample is balanced over rows that match a kernel: a drawn row
    whose kernel is not found is replaced by the next row of its group in the same seeded
    order, so the campaign really asks `per_class` kernels of each class and language.
    """
    from roofcast.evaluation.sampling import balanced_sample

    chosen = list(rows)
    if language:
        wanted = {"cuda": "CUDA", "omp": "OMP", "openmp": "OMP"}.get(language.lower(), language)
        chosen = [r for r in chosen if r.language == wanted]
    if per_class is not None:
        if index is None:
            chosen = balanced_sample(chosen, per_class=per_class, seed=seed)
        else:
            chosen = balanced_matched(chosen, index, per_class, seed)
    if limit is not None:
        chosen = chosen[:limit]
    return chosen


def balanced_matched(
    rows: Sequence[ManifestRow], index: SourceIndex, per_class: int, seed: int
) -> list[ManifestRow]:
    """`per_class` matching rows per (language, label), drawn in a seeded order."""
    groups: dict[tuple[str, str], list[ManifestRow]] = defaultdict(list)
    for row in rows:
        groups[(row.language, row.label)].append(row)
    rng = random.Random(seed)
    picked: set[int] = set()
    for language in sorted({row.language for row in rows}):
        found: dict[str, list[ManifestRow]] = {}
        for label in ("compute", "bandwidth"):
            group = sorted(groups[(language, label)], key=lambda r: r.index)
            found[label] = []
            for row in rng.sample(group, len(group)):
                if len(found[label]) >= per_class:
                    break
                if index.match(row).matched:
                    found[label].append(row)
        take = min(len(found["compute"]), len(found["bandwidth"]))
        for label in found:
            picked.update(r.index for r in found[label][:take])
    return [row for row in rows if row.index in picked]


def kernel_inputs(
    rows: Sequence[ManifestRow],
    index: SourceIndex,
    gpu: GPU,
    analyze: bool = False,
) -> Selection:
    """Match rows to kernels; with `analyze`, attach roofcast's static result (hybrid)."""
    from roofcast.evaluation.runner import analyze_rows, launch_context

    selection = Selection(rows=len(rows))
    if analyze:
        predictor = _analytic_predictor()
        outcomes = analyze_rows(rows, index, gpu, predictor)
        pairs = [(o.match, o.result, o.error) for o in outcomes]
    else:
        pairs = [(m, None, "") for m in index.match_all(rows)]
    for match, result, error in pairs:
        row = match.row
        if match.kernel is None:
            selection.unmatched.append((row.key, match.reason))
            continue
        if analyze and result is None:
            selection.unmatched.append((row.key, f"static analysis failed: {error}"))
            continue
        selection.inputs.append(
            KernelInput(
                key=row.key,
                ir=match.kernel,
                launch=launch_context(row),
                result=result,
                measured=dict(row.measured),
                truth=truth_label(row.label),
                family=row.family,
                language=row.language,
            )
        )
    return selection


def _analytic_predictor():
    """The default predictor (the same static verdict `analyze` gives); the hybrid prompt
    names it."""
    from roofcast.predictors import default_predictor

    return default_predictor()


def load_selection(
    manifest: Path | str,
    sources: Path | str,
    gpu: GPU,
    analyze: bool,
    per_class: int | None = None,
    seed: int = 0,
    language: str | None = None,
    limit: int | None = None,
) -> tuple[Selection, SourceIndex, list[ManifestRow]]:
    """Read the manifest, pick rows, match (and analyze); returns the index for reuse."""
    from roofcast.evaluation.manifest import load_manifest
    from roofcast.evaluation.matching import SourceIndex

    all_rows = load_manifest(manifest)
    index = SourceIndex(sources)
    rows = select_rows(all_rows, per_class, seed, language, limit, index)
    return kernel_inputs(rows, index, gpu, analyze), index, all_rows
