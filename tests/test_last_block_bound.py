"""A loop bound chosen by a thread position (docs/counting.md C8): `(blockIdx.x == gridDim.x -
1) ? n : start + region` gives the last block the remainder; over the launch, each arm for
its share of the threads."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult, LaunchContext

#: each block sums its region of `a`; the last block's region runs to n
REGIONS = """\
__global__ void k(const float* a, float* out, int n) {
  int region = n / gridDim.x;
  int start = blockIdx.x * region;
  int stop = (blockIdx.x == gridDim.x - 1) ? n : start + region;
  float s = 0.0f;
  for (int i = start; i < stop; i++) s += a[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
int main() {
  float *a = 0, *out = 0;
  k<<<4, 32>>>(a, out, 1003);
}
"""


def analyse(folder: Path, source: str) -> KernelResult:
    (folder / "main.cu").write_text(textwrap.dedent(source))
    context = LaunchContext(block=(32, 1, 1), grid=(4, 1, 1))
    report = analyze_paths([folder], load_gpu("a100"), {}, RooflinePredictor(), context)
    assert not [p for p in report.problems if p.fatal], report.problems
    (kernel,) = [k for k in report.kernels if k.ir.name == "k"]
    return kernel


@pytest.mark.rule("C8")
def test_the_last_blocks_bound_counts_for_its_share_of_the_launch(tmp_path):
    """Three blocks run `region` adds, the last the rest up to n: n adds per thread of a
    block over the four blocks, 1003 / 4 per thread on average (a trip count rounds up, C3),
    without a default trip."""
    kernel = analyse(tmp_path, REGIONS)
    assert 1003 / 4 <= kernel.resolved.flops["sp"] <= 1003 / 4 + 1
    assert not any(name.startswith("trip") for name in kernel.resolved.defaults)


@pytest.mark.rule("C8")
@pytest.mark.parametrize(
    "condition", ["a[0] > 0.0f", "blockIdx.x < gridDim.x - 1", "blockIdx.x == threadIdx.x"]
)
def test_a_condition_that_does_not_fix_positions_leaves_the_bound_unknown(tmp_path, condition):
    """A data test, an inequality, or an `==` of two positions fixes no thread: the bound
    has no value and the loop's trips are a default, as before."""
    kernel = analyse(tmp_path, REGIONS.replace("blockIdx.x == gridDim.x - 1", condition))
    assert any(name.startswith("trip") for name in kernel.resolved.defaults)
