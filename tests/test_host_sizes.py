"""Problem sizes chosen on the command line (docs/counting.md D44, D45): an element of a listed
array at an index from argv, and `sizeof` of a file-level alias of the element type."""

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

#: the benchmark's usual shape: a size picked from a list by argv[1], in MiB of T
PICKED = """\
#include <stdlib.h>
typedef unsigned short T;
int main(int argc, char** argv) {
  int select = atoi(argv[1]);
  int sizes[4] = {1, 2, 4, 8};
  int n = sizes[select];
  n = (n * 1024) / sizeof(T);
  float* a = 0;
  k<<<1, 32>>>(a, n);
}
"""


def analyse(folder: Path, main: str, exe_args: str) -> KernelResult:
    (folder / "main.cu").write_text(LOOP_KERNEL + textwrap.dedent(main))
    context = LaunchContext(block=(32, 1, 1), grid=(1, 1, 1), exe_args=exe_args)
    report = analyze_paths([folder], load_gpu("a100"), {}, RooflinePredictor(), context)
    assert not [p for p in report.problems if p.fatal], report.problems
    (kernel,) = [k for k in report.kernels if k.ir.name == "k"]
    return kernel


@pytest.mark.rule("D44", "D45")
@pytest.mark.parametrize(("args", "adds"), [("3", 8 * 512), ("1", 2 * 512), ("2 7", 4 * 512)])
def test_a_size_picked_by_a_command_line_index_is_that_element(tmp_path, args, adds):
    """`sizes[atoi(argv[1])]` is the element the run's first word picks, and `sizeof(T)` of
    `typedef unsigned short T` is 2: n = sizes[i] * 1024 / 2 adds, no default."""
    kernel = analyse(tmp_path, PICKED, args)
    assert kernel.resolved.flops["sp"] == adds
    assert "n" not in kernel.resolved.defaults


@pytest.mark.rule("D44")
@pytest.mark.parametrize("args", ["9", ""])
def test_an_index_past_the_list_or_not_given_leaves_the_size_unknown(tmp_path, args):
    """Past the list (argv[1] = 9) or without arguments the element is not known: `n` takes
    its default, as before."""
    kernel = analyse(tmp_path, PICKED, args)
    assert "n" in kernel.resolved.defaults


@pytest.mark.rule("D45")
def test_sizeof_follows_a_chain_of_aliases_and_using(tmp_path):
    """`using U = double; typedef U T;`: sizeof(T) is 8 (8 * 1024 / 8 = 1024 adds with
    argv[1] = 3); an alias of an unknown type, or of a struct defined there, leaves n
    unknown."""
    chained = PICKED.replace("typedef unsigned short T;", "using U = double;\ntypedef U T;")
    assert analyse(tmp_path, chained, "3").resolved.flops["sp"] == 1024
    opaque = PICKED.replace("typedef unsigned short T;", "typedef struct Pair T;")
    assert "n" in analyse(tmp_path, opaque, "3").resolved.defaults
    pair = PICKED.replace("typedef unsigned short T;", "typedef struct { double x; double y; } T;")
    assert "n" in analyse(tmp_path, pair, "3").resolved.defaults  # not sized as one double
