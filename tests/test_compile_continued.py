"""Compile mode, a statement written over several lines inside an arm some threads run
(docs/counting.md S35): the compiler places part of its instructions on the continuation
lines, and those count for the arm's share of the threads, as the statement's first line
does (S16)."""

from __future__ import annotations

from pathlib import Path

import pytest
from roofcast.analyzer.compile import Compiler
from roofcast.analyzer.discover import discover_files
from roofcast.features import count_features
from roofcast.features.sasscount import recount
from roofcast.features.symbolic import symbol

# Written for this test: the first warp of each block runs a sum of products that spans
# three lines (its multiplies and adds fall on all three); every thread stores after it.
KERNEL = """\
__global__ void first_warp(const float* x, float* y, float a, float b, float c) {
  float s = 0.0f;
  if (threadIdx.x < 32) {
    s = x[threadIdx.x] * a * b
        + x[threadIdx.x + 32] * b * c
        + x[threadIdx.x + 64] * c * a;
  }
  y[threadIdx.x] = s;
}
"""


@pytest.mark.rule("S35")
def test_continuation_lines_count_for_the_arms_share_of_the_threads(tmp_path: Path) -> None:
    source = tmp_path / "kernel.cu"
    source.write_text(KERNEL)
    compiler = Compiler("sm_86", cache_root=tmp_path / "cache")
    if compiler.unavailable():
        pytest.skip(f"no compiler: {compiler.unavailable()}")
    (ir,) = discover_files([source], [tmp_path], {}, frozenset(), None).kernels
    fv = count_features(ir, {}, line_loops=True)
    recount(ir, fv, compiler, {})
    assert fv.counted_from == "sass", fv.counted_why
    lines = {line: counts["flops_sp"] for line, counts in fv.sass_by_line.items()}
    assert {4, 5, 6} <= {line for line, flops in lines.items() if flops != 0}
    # six multiplies and two adds (some fused) by 32 of blockDim.x threads: 6 to 8 FLOPs of
    # a warp thread, an eighth of that per thread of a 256-thread block, on every line
    per_thread = float(fv.flops_sp.subs(symbol("blockDim_x"), 256))
    assert 6 / 8 <= per_thread <= 8 / 8
