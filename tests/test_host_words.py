"""Host values C's library computes from values host code shows (docs/counting.md D36, D37):
a rounding call of a number and the length of a command-line word."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import sympy
from roofcast.analyzer.hostvalues import argv_symbol
from roofcast.analyzer.hostwords import argv_length_symbol
from roofcast.gpu_specs import load_gpu
from test_host_values import LOOP_KERNEL, _host_arguments

from roofcast.pipeline import analyze_paths
from roofcast.predictors.base import LaunchContext
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult


def _run(folder: Path, main: str, exe_args: str) -> KernelResult:
    (folder / "main.cu").write_text(LOOP_KERNEL + textwrap.dedent(main))
    context = LaunchContext(exe_args=exe_args)
    report = analyze_paths([folder], load_gpu("a100"), {}, RooflinePredictor(), context)
    (kernel,) = report.kernels
    return kernel


@pytest.mark.rule("D36")
def test_ceil_and_floor_of_a_host_value_round_it():
    """`ceilf(n / 128.0f)` of `n = atoi(argv[1])` is ceiling(argv_1 / 128), `floor` of a
    constant quotient its floor, `std::ceil` as `ceil`; a rounding of something host code
    does not show, or a call of two arguments, stays unknown."""
    found = _host_arguments(
        """
        int main(int argc, char** argv) {
          int n = atoi(argv[1]);
          int a = ceilf(n / 128.0f);
          int b = floor(1000 / 128.0);
          int c = std::ceil(1000 / 128.0) * ceil(7.5);
          use(a, b, c, ceil(readSize()), floorf(n, 2));
        }
        """
    )
    n = argv_symbol(1)
    assert found[0] == sympy.ceiling(n / 128)
    assert found[0].subs(n, 1000) == 8 and found[0].subs(n, 1024) == 8
    assert found[1:] == [7, 8 * 8, None, None]


@pytest.mark.rule("D36")
def test_a_rounded_launch_argument_sizes_the_kernel(tmp_path):
    """`k<<<1, 1>>>(a, ceil(n / 256.0) * 2)` with the command line's 1000: 4 blocks of two
    trips, 8 SP adds; with 1024, still 8; with 1025, 10."""
    main = """\
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      const int blocks = ceil(n / 256.0);
      float* a = 0;
      k<<<1, 1>>>(a, blocks * 2);
    }
    """
    found = [_run(tmp_path, main, args).resolved for args in ("1000", "1024", "1025")]
    assert [(r.flops["sp"], r.defaults) for r in found] == [(8, {}), (8, {}), (10, {})]


@pytest.mark.rule("D37")
def test_the_length_of_a_command_line_word_is_a_host_value():
    """`strlen(argv[2])`, `s.length()` of `std::string s = std::string(argv[2])` and
    `t.size()` of `std::string t{argv[1]}` are those words' lengths; a string assigned since
    (`u = readLine()`), a container's `size()` and a word at a varying index stay unknown."""
    found = _host_arguments(
        """
        int main(int argc, char** argv) {
          std::string s = std::string(argv[2]);
          std::string t{argv[1]};
          std::string u = std::string(argv[2]);
          u = readLine();
          std::vector<int> v(100);
          use(strlen(argv[2]), s.length(), t.size(), u.length(), v.size(),
              strlen(argv[i]));
        }
        """
    )
    assert found == [
        argv_length_symbol(2),
        argv_length_symbol(2),
        argv_length_symbol(1),
        None,
        None,
        None,
    ]


@pytest.mark.rule("D37")
def test_a_search_patterns_length_from_the_command_line_sizes_the_kernel(tmp_path):
    """A pattern given as the program's second word (`clEnqueueNDRangeKernel`, 22 bytes)
    launches `k` over its length: 22 SP adds; `héllo` is 6 bytes (UTF-8); with no such word
    the length stays unknown (the documented default)."""
    main = """\
    int main(int argc, char** argv) {
      std::string pattern = std::string(argv[2]);
      unsigned len = pattern.length();
      float* a = 0;
      k<<<1, 1>>>(a, len);
    }
    """
    given = _run(tmp_path, main, "input.txt clEnqueueNDRangeKernel 20000").resolved
    assert (given.flops["sp"], given.defaults) == (22, {})
    utf8 = _run(tmp_path, main, "input.txt héllo").resolved
    assert utf8.flops["sp"] == 6
    missing = _run(tmp_path, main, "").resolved
    assert "n" in missing.defaults
