"""The paper's balanced protocol: per language, as many compute-bound as bandwidth-bound rows.

Bolet et al. scored their LLMs on 340 kernels: 85 compute + 85 bandwidth for CUDA and the
same for OpenMP. Sampling is seeded so a report can be reproduced exactly.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from roofcast.evaluation.manifest import ManifestRow

#: Rows per class per language in the paper's 340-kernel set.
PAPER_PER_CLASS = 85
DEFAULT_SEED = 0


def balanced_sample(
    rows: Sequence[ManifestRow],
    per_class: int | None = PAPER_PER_CLASS,
    seed: int = DEFAULT_SEED,
) -> list[ManifestRow]:
    """Draw `per_class` rows of each label for each language (fewer when a language has
    fewer rows of its smaller class; None = all of the smaller class). Output keeps the
    manifest's order; the same seed and rows always give the same sample."""
    groups: dict[tuple[str, str], list[ManifestRow]] = defaultdict(list)
    for row in rows:
        groups[(row.language, row.label)].append(row)
    rng = random.Random(seed)
    chosen: set[int] = set()
    for language in sorted({row.language for row in rows}):
        compute = groups[(language, "compute")]
        bandwidth = groups[(language, "bandwidth")]
        take = min(len(compute), len(bandwidth))
        if per_class is not None:
            take = min(take, per_class)
        for group in (compute, bandwidth):
            ordered = sorted(group, key=lambda r: r.index)
            chosen.update(r.index for r in rng.sample(ordered, take))
    return [row for row in rows if row.index in chosen]
