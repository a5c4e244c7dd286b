"""The roofline rule re-run with some of our launch totals replaced by the measured ones.

Which count costs the most accuracy? Substituting one measured quantity at a time (and
pairs of them) for ours, and scoring the analytic rule again, bounds what fixing that count
could gain. The rule is `roofline_verdict`, the `roofline` predictor's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from roofcast.evaluation.counts import launch_totals
from roofcast.evaluation.metrics import label_metrics
from roofcast.predictors.roofline import roofline_verdict

if TYPE_CHECKING:
    from roofcast.evaluation.runner import RowOutcome
    from roofcast.gpu_specs import GPU

#: A substitutable quantity -> the measured columns it replaces.
QUANTITIES: dict[str, tuple[str, ...]] = {
    "bytes": ("dram_bytes",),
    "int": ("int_ops",),
    "flops": ("sp_flops", "dp_flops", "hp_flops"),
}
_CLASS_COLUMN = {"sp": "sp_flops", "dp": "dp_flops", "hp": "hp_flops", "int": "int_ops"}


def substituted_verdict(outcome: RowOutcome, gpu: GPU, measured: Iterable[str] = ()) -> str:
    """'compute' / 'bandwidth' / 'unknown' for one row, with the columns of the quantities
    named in `measured` taken from the row's measurements instead of our counts. Rows we did
    not analyze stay 'unknown' (a miss), as in `evaluate`."""
    totals = launch_totals(outcome)
    if not totals or "dram_bytes" not in totals:
        return "unknown"
    for quantity in measured:
        for column in QUANTITIES[quantity]:
            if column in outcome.row.measured:
                totals[column] = outcome.row.measured[column]
    nbytes = totals["dram_bytes"]
    intensities = {}
    for cls, column in _CLASS_COLUMN.items():
        ops = totals.get(column, 0.0)
        intensities[cls] = ops / nbytes if nbytes > 0 else (float("inf") if ops > 0 else 0.0)
    return roofline_verdict(intensities, gpu, moves_bytes=nbytes > 0).bound


def substitution_sets() -> list[tuple[str, ...]]:
    """Nothing substituted, each quantity alone, each pair, and all three."""
    names = tuple(QUANTITIES)
    return [(), *[(n,) for n in names], *combinations(names, 2), names]


def oracle_accuracy(
    outcomes: Sequence[RowOutcome], gpu: GPU, measured: Iterable[str] = ()
) -> float | None:
    """Balanced accuracy of the rule over the matched rows with `measured` substituted."""
    chosen = tuple(measured)
    matched = [o for o in outcomes if o.matched]
    scores = label_metrics(
        [o.row.label for o in matched], [substituted_verdict(o, gpu, chosen) for o in matched]
    )
    return scores["balanced_accuracy"]
