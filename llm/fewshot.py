"""Few-shot examples: k labelled kernels of the kernel's language, balanced between classes.

Sources of examples:
  - a training manifest (any file with dev.csv's columns) and its sources: labels are the
    profiled ones. Rows of any family under test are never used, nor the kernel itself;
  - the bundled corpus `kernels/`: labels are roofcast's analytic verdict on the target GPU
    (kernels it cannot decide are left out).
The order is a seeded hash, so every kernel of one language gets the same examples (servers
with prefix caching reuse them) and a run can be reproduced. Examples whose code would be
truncated at half the budget are passed over for ones that fit.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from roofcast.llm.answers import BANDWIDTH, COMPUTE
from roofcast.llm.context import render_kernel
from roofcast.llm.prompts import Example, KernelInput

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU

    from roofcast.evaluation.manifest import ManifestRow
    from roofcast.evaluation.matching import SourceIndex

MAX_TRIES_PER_CLASS = 12


class NoExamplesError(ValueError):
    """The pool has too few examples of a class for this language."""


def _rank(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


@dataclass
class ExamplePool:
    """Candidate examples (lazily materialised) and the per-language picks made so far."""

    candidates: list[tuple[str, str, str, str, object]]  # (key, family, language, label, ref)
    resolve: object  # callable(ref) -> KernelInput | None
    seed: int = 0
    exclude_families: set[str] = field(default_factory=set)
    _picked: dict[tuple, list[Example]] = field(default_factory=dict)

    def pick(self, kernel: KernelInput, k: int, budget: int) -> list[Example]:
        """k examples for `kernel` (k//2 per class, the odd one Bandwidth), never itself."""
        if k <= 0:
            return []
        cache_key = (kernel.lang, k, budget, frozenset(self.exclude_families))
        picked = self._picked.get(cache_key)
        if picked is None or any(_clashes(e, kernel) for e in picked):
            picked = self._choose(kernel, k, budget)
            if not any(_clashes(e, kernel) for e in picked):
                self._picked[cache_key] = picked
        return picked

    def _choose(self, kernel: KernelInput, k: int, budget: int) -> list[Example]:
        wanted = {COMPUTE: k // 2, BANDWIDTH: k - k // 2}
        chosen: list[Example] = []
        for label, count in wanted.items():
            pool = sorted(
                (c for c in self.candidates
                 if c[2] == kernel.lang and c[3] == label and c[0] != kernel.key
                 and c[1] not in self.exclude_families
                 and not (kernel.family and c[1] == kernel.family)),
                key=lambda c: _rank(self.seed, c[0]),
            )
            fitting: list[Example] = []
            spare: list[Example] = []
            for cand in pool[: MAX_TRIES_PER_CLASS * max(count, 1)]:
                if len(fitting) >= count:
                    break
                example_input = self.resolve(cand[4])  # type: ignore[operator]
                if example_input is None:
                    continue
                example = Example(example_input, label)
                rendered = render_kernel(
                    example_input.ir, example_input.launch, max(budget // 2, 64)
                )
                (fitting if rendered.truncated_lines == 0 else spare).append(example)
            fitting.extend(spare[: max(0, count - len(fitting))])
            if len(fitting) < count:
                raise NoExamplesError(
                    f"only {len(fitting)} {label} example(s) for {kernel.lang} in the pool "
                    f"(need {count}); give a larger training manifest or --examples kernels"
                )
            chosen.extend(fitting[:count])
        # alternate classes so neither label sits last by construction
        compute = [e for e in chosen if e.label == COMPUTE]
        bandwidth = [e for e in chosen if e.label == BANDWIDTH]
        mixed: list[Example] = []
        for i in range(max(len(compute), len(bandwidth))):
            mixed.extend(x[i] for x in (bandwidth, compute) if i < len(x))
        return mixed


def _clashes(example: Example, kernel: KernelInput) -> bool:
    same_family = bool(kernel.family) and example.kernel.family == kernel.family
    return example.kernel.key == kernel.key or same_family


def manifest_pool(
    rows: Sequence[ManifestRow],
    index: SourceIndex,
    exclude_families: Iterable[str] = (),
    seed: int = 0,
) -> ExamplePool:
    """Examples from manifest rows (profiled labels), matched to sources on demand."""
    from roofcast.llm.dataset import truth_label

    from roofcast.evaluation.runner import launch_context

    def resolve(row: ManifestRow) -> KernelInput | None:
        match = index.match(row)
        if match.kernel is None:
            return None
        return KernelInput(
            key=row.key, ir=match.kernel, launch=launch_context(row),
            truth=truth_label(row.label), family=row.family, language=row.language,
        )

    candidates: list[tuple[str, str, str, str, object]] = [
        (row.key, row.family, row.language, truth_label(row.label), row) for row in rows
    ]
    return ExamplePool(candidates, resolve, seed, set(exclude_families))


def corpus_dir() -> Path:
    return Path(str(resources.files("roofcast.kernels")))


def corpus_pool(gpu: GPU, seed: int = 0, folder: Path | None = None) -> ExamplePool:
    """Examples from the bundled kernels/, labelled by the analytic verdict on `gpu`."""
    from roofcast.pipeline import analyze_paths

    folder = folder or corpus_dir()
    paths = [p for p in (folder / "cuda", folder / "openmp") if p.is_dir()]
    report = analyze_paths(paths, gpu)
    candidates: list[tuple[str, str, str, str, object]] = []
    for result in report.kernels:
        verdict = result.verdict
        if verdict is None or verdict.bound not in ("compute", "bandwidth"):
            continue
        ir = result.ir
        key = f"kernels/{Path(ir.file).name}:{ir.name}:{ir.line}"
        kernel = KernelInput(
            key=key, ir=ir, family=f"kernels/{Path(ir.file).stem}",
            language="CUDA" if ir.language == "cuda" else "OMP",
        )
        label = COMPUTE if verdict.bound == "compute" else BANDWIDTH
        candidates.append((key, kernel.family, kernel.language, label, kernel))
    return ExamplePool(candidates, lambda ref: ref, seed)
