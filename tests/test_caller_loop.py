"""A kernel launched once per call of a host function that its caller calls in a for loop
(docs/counting.md D43): the profiled second launch is that loop's second trip."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult, LaunchContext

#: a kernel whose SP FLOPs per thread are its parameter `n`: one add per trip
LOOP_KERNEL = """\
__global__ void k(float* a, int n) {
  float s = 0.0f;
  for (int j = 0; j < n; j++) s += a[j];
  a[threadIdx.x] = s;
}
"""

#: `run` launches `k` once per call; main calls it with r = 16, 32, 64, ...
DOUBLING = """\
void run(float* a, int total, int r) { k<<<8, 32>>>(a, total / r); }
int main(int argc, char** argv) {
  float* a = 0;
  int total = 6400;
  for (int r = 16; r <= 4096; r = r * 2) {
    run(a, total, r);
  }
}
"""

SECOND = LaunchContext(block=(32, 1, 1), grid=(8, 1, 1), ordinal=2)


def analyse(folder: Path, main: str, context: LaunchContext | None) -> KernelResult:
    (folder / "main.cu").write_text(LOOP_KERNEL + textwrap.dedent(main))
    report = analyze_paths([folder], load_gpu("a100"), {}, RooflinePredictor(), context)
    assert not [p for p in report.problems if p.fatal], report.problems
    (kernel,) = [k for k in report.kernels if k.ir.name == "k"]
    return kernel


@pytest.mark.rule("D43")
def test_the_second_launch_is_the_callers_loops_second_trip(tmp_path):
    """Profiled as the second launch, `k` runs with r = 32 (6400 / 32 = 200 adds), with
    D43's note; as the first (no ordinal) with r = 16 (400), as before."""
    second = analyse(tmp_path, DOUBLING, SECOND)
    assert second.resolved.flops["sp"] == 200
    assert any(n.startswith("[D43]") for n in second.resolved.notes)
    first = analyse(tmp_path, DOUBLING, LaunchContext(block=(32, 1, 1), grid=(8, 1, 1)))
    assert first.resolved.flops["sp"] == 400
    assert not any(n.startswith("[D43]") for n in first.resolved.notes)


@pytest.mark.rule("D43")
@pytest.mark.parametrize(
    ("change", "why"),
    [
        ("r <= 4096", "r <= 16"),  # the loop runs once: its second launch is not there
        ("r = r * 2", "r++"),  # a step D24 does not value
        ("  for (int r = 16; r <= 4096; r = r * 2) {\n", "  int r = 16;\n  {\n"),  # no loop
    ],
)
def test_without_a_second_trip_host_code_shows_the_first_trip_binds(tmp_path, change, why):
    """Where the caller's loop runs once, steps in a way D24 does not follow, or is not
    there, the second launch keeps the first trip's values (400 adds), without a note."""
    kernel = analyse(tmp_path, DOUBLING.replace(change, why), SECOND)
    assert kernel.resolved.flops["sp"] == 400
    assert not any(n.startswith("[D43]") for n in kernel.resolved.notes)


@pytest.mark.rule("D43")
def test_a_launch_in_a_loop_of_its_own_function_is_left_to_d34(tmp_path):
    """`run` launches `k` in its own loop: its second launch is that loop's, not the
    caller's second trip, so the first trip's r binds (400)."""
    looped = DOUBLING.replace(
        "{ k<<<8, 32>>>(a, total / r); }",
        "{ for (int t = 0; t < 3; t++) k<<<8, 32>>>(a, total / r); }",
    )
    assert analyse(tmp_path, looped, SECOND).resolved.flops["sp"] == 400
