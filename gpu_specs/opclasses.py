"""The roofline's operation classes, named once for every layer.

It sits in gpu_specs, which imports nothing else of roofcast, so the counter, the
predictors, the profiler and the report helpers can all take the names from here without
an import edge upwards. The tuples keep the orders the outputs were written in: report
columns and JSON keys follow `CLASSES`, and the rule weighs classes in `RULE_CLASSES` order.
"""

from __future__ import annotations

#: Every class, in report order: the keys of a report's `flops` and `arithmetic_intensity`.
CLASSES: tuple[str, ...] = ("sp", "dp", "hp", "int")
#: The floating-point precisions among them (hp = fp16, sp = fp32, dp = fp64), report order.
PRECISIONS: tuple[str, ...] = ("sp", "dp", "hp")
#: The classes that decide gpuFLOPBench's label (its profiles carry no half precision);
#: the learned model predicts one intensity for each, in this order.
LABEL_CLASSES: tuple[str, ...] = ("sp", "dp", "int")
#: The order the analytic rule weighs the classes in: the label's classes, then hp. The rule
#: takes the first of equal ratios, so this order decides a tie.
RULE_CLASSES: tuple[str, ...] = (*LABEL_CLASSES, "hp")
#: A class's key in a machine file's `[lanes_per_sm]` table.
LANE_KEYS: dict[str, str] = {"sp": "fp32", "dp": "fp64", "hp": "fp16", "int": "int32"}
#: Bytes of one scalar of each precision.
PRECISION_BYTES: dict[str, int] = {"hp": 2, "sp": 4, "dp": 8}
