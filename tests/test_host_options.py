"""A command-line option read with cxxopts (docs/counting.md D38), and a struct local whose
declaration calls its constructor with expressions (`P p(nullptr, 7);`, D25)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import sympy
from roofcast.gpu_specs import load_gpu
from test_host_values import LOOP_KERNEL, _host_arguments

from roofcast.pipeline import analyze_paths
from roofcast.predictors.base import LaunchContext
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult

#: the options a cxxopts program declares, as tsne-like programs do (a macro reads them)
DECLARED = """\
#define STRINGIFY(X) #X
#define IOPT(x) result[STRINGIFY(x)].as<int>()
#define HASH(x) result[#x].as<int>()
#define NOT_READ(x) other(STRINGIFY(x))
"""
OPTIONS = """\
  cxxopts::Options options("demo", "a demo");
  options.add_options()
    ("k,num-points", "How many points", cxxopts::value<int>()->default_value("6000"))
    ("u,nearest-neighbors", "Neighbors", cxxopts::value<int>()->default_value("32"))
    ("f,fname", "Input file", cxxopts::value<std::string>()->default_value("in.txt"))
    ("scale", "A scale", cxxopts::value<float>()->default_value("2.5"));
  auto result = options.parse(argc, argv);
"""


@pytest.mark.rule("D38")
def test_a_cxxopts_option_is_its_declared_default_or_the_command_lines_value():
    """`result["num-points"].as<int>()` and `IOPT(nearest-neighbors)` (stringized by a
    macro) are piecewise: the command line's `--name`/short `-k` value, else the declared
    default; with neither flag given they are 6000 and 32, `HASH(scale)` 2.5. An option whose
    default is not a number, one no file declares, and a macro that reads no option stay
    unknown."""
    found = _host_arguments(
        DECLARED
        + "int main(int argc, char** argv) {\n"
        + OPTIONS
        + """\
          int n = result["num-points"].as<int>();
          use(n, IOPT(nearest-neighbors), HASH(scale), IOPT(fname), IOPT(missing),
              NOT_READ(num-points));
        }
        """
    )
    absent = {
        sympy.Symbol(f"given${flag}"): 0
        for flag in ("--num-points", "-k", "--nearest-neighbors", "-u", "--scale")
    }
    n, k, scale = found[0], found[1], found[2]
    assert (n.subs(absent), k.subs(absent), scale.subs(absent)) == (6000, 32, 2.5)
    long = {**absent, sympy.Symbol("given$--num-points"): 1}
    assert n.subs(long).subs(sympy.Symbol("option$--num-points", positive=True), 900) == 900
    short = {**absent, sympy.Symbol("given$-u"): 1}
    assert k.subs(short).subs(sympy.Symbol("option$-u", positive=True), 8) == 8
    assert found[3:] == [None, None, None]


def _run(folder: Path, exe_args: str) -> KernelResult:
    (folder / "main.cu").write_text(
        DECLARED
        + LOOP_KERNEL
        + "int main(int argc, char** argv) {\n"
        + OPTIONS
        + textwrap.dedent(
            """\
            float* a = 0;
            k<<<1, 1>>>(a, IOPT(nearest-neighbors));
            }
            """
        )
    )
    context = LaunchContext(exe_args=exe_args)
    report = analyze_paths([folder], load_gpu("a100"), {}, RooflinePredictor(), context)
    (kernel,) = report.kernels
    return kernel


@pytest.mark.rule("D38")
def test_an_option_sizes_the_kernel_from_the_command_line_or_its_default(tmp_path):
    """No arguments: the declared 32 neighbors, 32 SP adds; `-u 10` or `--nearest-neighbors
    10`: 10."""
    found = [_run(tmp_path, a).resolved for a in ("", "-u 10", "--nearest-neighbors 10 -k 5")]
    assert [(r.flops["sp"], r.defaults) for r in found] == [(32, {}), (10, {}), (10, {})]


@pytest.mark.rule("D25")
def test_a_constructor_called_with_expressions_sets_the_members():
    """`Options o(nullptr, 7, 3, nullptr);` (its arguments are expressions, so it is a
    declaration with an argument list, not a function's declarator) sets `n` from the
    constructor's initializer list; `Options d;` keeps the default member initializer."""
    found = _host_arguments(
        """
        struct Options {
          int n = 0;
          float* data;
          Options() {}
          Options(float* p, int size, int dims, float* r) : data(p), n(size * 2) {}
        };
        int main(int argc, char** argv) {
          Options o(nullptr, 7, 3, nullptr);
          Options d;
          use(o.n, d.n);
        }
        """
    )
    assert found == [14, 0]


@pytest.mark.parametrize(
    ("source", "macros"),
    [
        ("#define IOPT(x) r[#x].as<int>()\n", {"IOPT": (["x"], "r[#x].as<int>()")}),
        ("#  define IOPT(x) r[#x].as<int>()\n", {"IOPT": (["x"], "r[#x].as<int>()")}),
        ("#define \\\n  IOPT(x) r[#x].as<int>()\n", {"IOPT": (["x"], "r[#x].as<int>()")}),
        ("#define IOPT (x)\nint f(int x);\n", {}),  # object-like: its body is `(x)`
    ],
)
def test_function_like_macros_are_found_however_the_define_is_spelled(source, macros):
    """A file is queried for function-like macros only if its text may define one; the text
    check must let through every spelling the grammar reads as one (spaces, line splices)."""
    from roofcast.analyzer.hostoptions import _macros
    from roofcast.analyzer.parsing import parse

    assert _macros(parse(source, "cpp").root_node, "cpp") == macros
