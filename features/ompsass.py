"""Compile-mode counts of an OpenMP target region: its offloaded kernel's SASS (device
runtime included, analyzer.ompcompile) per unit of work and per launched thread
(docs/counting.md, rules S11-S13).

The counter's unit of work is one iteration of the region's work-shared loop nest (U2), but
the kernel also runs loops the source does not have: the runtime's distribute and
worksharing-loop chunk loops around the body. Kept loops whose back edge lies on a line that
is in no source loop of the region are those: what runs inside one runs once per unit of
work (S5 applies to the user's loops within), and what runs outside every kept loop (entry,
team and thread setup, teardown) runs once per launched thread, which `resolve` spreads
over the units of work as rule U4 does.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping

import sympy
from roofcast.analyzer.compile import Compiler, template_args
from roofcast.analyzer.model import KernelIR
from roofcast.analyzer.ompcompile import offload_for
from roofcast.analyzer.sass import KernelSass, LineCounts
from roofcast.features.sasscount import apply_sass, flop_counts, line_class_counts, own_lines
from roofcast.features.vector import FeatureVector

Where = tuple[str, int]


def _frames(loops: Mapping[Where, tuple], where: Where | None) -> tuple:
    if where is None:
        return ()
    return loops.get((os.path.realpath(where[0]), where[1]), ())


def split_region(
    sass: KernelSass, line_loops: Mapping[Where, tuple]
) -> tuple[KernelSass, Counter[str]]:
    """Rule S13: (the kernel's SASS per unit of work, its classes per launched thread).

    A kept loop is the user's when its back edge lies on a line inside a source loop of
    the region (S3); the others (the runtime's distribute and chunk loops, whose branches
    lie on the pragma's or the work-shared loop's lines) are taken out of each group's
    nest, so S5 multiplies only the user's trips. Instructions outside every kept loop go
    to the per-thread counts, but for a called function's and the calls of one (S15:
    they count per executed call, with the work). S9's branched-over regions are kept
    only where every kept loop inside lies outside the files the counter walked: a
    forward branch over the runtime's loops skips a thread with no iterations, not a
    slow path."""
    loops = {(os.path.realpath(f), n): t for (f, n), t in line_loops.items()}
    walked = {f for f, _ in loops}
    user = {
        loop.start: loop for loop in sass.loops if not loop.remainder and _frames(loops, loop.line)
    }
    body: list[LineCounts] = []
    per_thread: Counter[str] = Counter()
    for group in sass.groups:
        if not group.loops and group.callee < 0 and not group.calls and not group.odd:
            per_thread.update(group.counts)
            continue
        keep = [i for i, start in enumerate(group.loops) if start in user]
        body.append(
            LineCounts(
                group.where,
                len(keep),
                math.prod(user[group.loops[i]].unroll for i in keep),
                group.counts,
                tuple(group.copies[i] for i in keep if i < len(group.copies)),
                group.regions,
                tuple(group.loops[i] for i in keep),
                group.callee,
                group.calls,
                odd=group.odd,  # S54: the odd trip's copy runs as line_class_counts says
            )
        )
    regions = {
        region: wheres
        for region, wheres in sass.regions.items()
        if not any(os.path.realpath(f) in walked for where in wheres for f, _ in where)
    }
    kept = [loop for loop in sass.loops if loop.start in user]
    return KernelSass(sass.name, body, kept, sass.dropped, regions), per_thread


def per_thread_counts(counts: Mapping[str, int]) -> dict[str, float]:
    """S13's per-launched-thread FLOPs and int ops, keyed as `resolve`'s numbers."""
    totals = flop_counts({k: sympy.Integer(v) for k, v in counts.items()})
    return {
        "flops_sp": float(totals["flops_sp"]),
        "flops_dp": float(totals["flops_dp"]),
        "flops_hp": float(totals["flops_hp"]),
        "flops_int": float(totals["int_ops"]),
    }


def recount_openmp(
    ir: KernelIR,
    features: FeatureVector,
    compiler: Compiler,
    bound: Mapping[str, str] | None = None,
) -> None:
    """Compile mode for one OpenMP region: FLOPs and int ops per unit of work from its
    kernel's SASS, and what each launched thread runs besides (`runtime_per_thread`, in
    place of U4's constant); else the source counts stay, with the reason why."""
    offload = offload_for(compiler)
    sass, why = offload.region(ir.file, ir.name, ir.line, template_args(ir, bound or {}))
    if sass is None:
        features.counted_from, features.counted_why = "source", why
        return
    body, per_thread = split_region(sass, features.line_loops)
    by_line = line_class_counts(body, features.line_loops, features.line_sites)
    summed: dict[str, sympy.Expr] = {}
    for counts in by_line.values():
        for cls, n in counts.items():
            summed[cls] = summed.get(cls, sympy.Integer(0)) + n
    apply_sass(features, summed)
    features.runtime_per_thread = per_thread_counts(per_thread)
    features.sass_by_line = own_lines(by_line, ir.file)
    features.counted_from = "sass"
    features.counted_why = offload.describe()
