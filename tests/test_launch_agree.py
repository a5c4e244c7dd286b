"""A kernel argument passed as a launch axis's own expression takes the extent the launch
was profiled with (docs/counting.md D39)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from roofcast.gpu_specs import load_gpu
from test_host_values import LOOP_KERNEL

from roofcast.pipeline import analyze_paths
from roofcast.predictors.base import LaunchContext
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult

#: `tune` (a function of the folder, not followed: rule D31) changes `blocks` from the
#: command line's value that host code reads; the program ran with what it left
MAIN = """\
void tune(int* p) { *p = *p * 2; }
__global__ void g(float* a, int n) {
  float s = 0.0f;
  for (int j = 0; j < n; j++) s *= a[j];
  a[threadIdx.x] = s;
}
int main(int argc, char** argv) {
  float* a = 0;
  int blocks = atoi(argv[1]);
  tune(&blocks);
  k<<<blocks, 1>>>(a, blocks);
  g<<<blocks, 1>>>(a, blocks * 2);
}
"""


def _kernels(
    folder: Path, grid: tuple[int, int, int] | None, defines: dict[str, str] | None = None
) -> dict[str, KernelResult]:
    (folder / "main.cu").write_text(LOOP_KERNEL + textwrap.dedent(MAIN))
    block = (1, 1, 1) if grid else None
    context = LaunchContext(block=block, grid=grid, exe_args="4")
    report = analyze_paths([folder], load_gpu("a100"), defines or {}, RooflinePredictor(), context)
    return {k.ir.name: k for k in report.kernels}


@pytest.mark.rule("D39")
def test_an_argument_that_is_the_grid_takes_the_profiled_grid(tmp_path):
    """Host code reads `blocks` as the command line's 4 (`tune` is not followed); launched
    with 8 blocks, `k`'s `n` (the grid's own `blocks`) is 8: 8 SP adds per thread, and a
    note says so. `g`'s `blocks * 2` is another expression and keeps host code's 8. With a
    launch of 4 blocks, or no profiled launch, host code's 4 stands; a `--define n=5` wins."""
    launched = _kernels(tmp_path, (8, 1, 1))
    k = launched["k"].resolved
    assert (k.flops["sp"], k.threads) == (8, 8)
    assert any("[D39] n = 8" in note for note in launched["k"].resolved.notes)
    assert launched["g"].resolved.flops["sp"] == 8
    agreeing = _kernels(tmp_path, (4, 1, 1))["k"].resolved
    assert (agreeing.flops["sp"], agreeing.threads) == (4, 4)
    unprofiled = _kernels(tmp_path, None)["k"].resolved
    assert unprofiled.flops["sp"] == 4
    defined = _kernels(tmp_path, (8, 1, 1), {"n": "5"})["k"].resolved
    assert defined.flops["sp"] == 5
