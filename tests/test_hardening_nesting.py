"""Deep nesting, one failing file, a runaway kernel: no traceback, the rest of the run kept.

Rules N1-N4 and B1 of docs/counting.md. Every kernel here is generated; the expected counts
are derived by hand from the rules (flat chains exactly; deeper nesting as each rule states).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import sympy
import tree_sitter
from roofcast.analyzer import discover
from roofcast.analyzer.hostvalues import HostScope, argv_symbol
from roofcast.analyzer.parsing import captures, language, parse
from roofcast.features import count_features
from roofcast.features import lowering as counter_module
from roofcast.features.lowering import (
    MAX_EXPRESSION_NESTING,
    MAX_MACRO_DEPTH,
    MAX_STATEMENT_NESTING,
    MAX_VALUE_DEPTH,
    WORK_BUDGET,
)
from roofcast.features.symbolic import symbol
from roofcast.features.vector import FeatureVector
from roofcast.gpu_specs import load_gpu
from typer.testing import CliRunner

import roofcast.pipeline as pipeline
from roofcast.cli.main import app
from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor

DEPTHS = (300, 500, 2000, 10000)
N = symbol("n")
_FORKS = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="patches reach by fork")


def cuda(body: str, before: str = "") -> str:
    head = "__global__ void k(float* a, float* b, int n) {\n  int i = threadIdx.x;\n"
    return f"{before}{head}{body}\n}}\n"


def omp(body: str) -> str:
    return (
        "void f(float* a, float* b, int n) {\n"
        "#pragma omp target teams distribute parallel for\n"
        f"  for (int i = 0; i < n; i++) {{\n{body}\n  }}\n}}\n"
    )


# the five shapes of the task, each `depth` deep (a flat sum: `depth` terms)
SHAPES: dict[str, Callable[[int], str]] = {
    "braces": lambda d: "{" * d + " b[i] = a[i] + 1.0f; " + "}" * d,
    "parens": lambda d: "b[i] = " + "(" * d + "a[i]" + ")" * d + " + 1.0f;",
    "ifs": lambda d: "".join(f"if (i > {k}) {{" for k in range(d)) + "b[i] = a[i];" + "}" * d,
    "fors": lambda d: (
        "".join(f"for (int j{k} = 0; j{k} < 2; j{k}++) " for k in range(d)) + "b[i] += a[i];"
    ),
    "sum": lambda d: "b[i] = " + " + ".join(f"a[{k}]" for k in range(d)) + ";",
}


def _count(tmp_path: Path, text: str, suffix: str = ".cu") -> FeatureVector:
    path = tmp_path / f"kernel{suffix}"
    path.write_text(text)
    kernels = discover([path]).kernels
    assert len(kernels) == 1
    return count_features(kernels[0])


def _warned(fv: FeatureVector, rule_text: str) -> bool:
    return any(rule_text in w and "approximated" in w for w in fv.warnings)


# ---------------------------------------------------------------- the command line, end to end
@pytest.fixture(scope="module")
def deep_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deep")
    for shape, make in SHAPES.items():
        for depth in (5000,) if shape == "sum" else DEPTHS:
            (root / f"{shape}_{depth}.cu").write_text(cuda(make(depth)))
            (root / f"{shape}_{depth}.cpp").write_text(omp(make(depth)))
    return root


def _analyze_cli(*args: object) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "analyze"
    command = (
        [str(script)] if script.exists() else [sys.executable, "-m", "roofcast.cli", "analyze"]
    )
    return subprocess.run(
        [*command, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_deep_input_gives_reports_not_tracebacks_and_the_same_for_any_jobs(deep_tree: Path):
    runs = [
        _analyze_cli(deep_tree, "--gpu", "a100", "--format", "json", "--jobs", j) for j in (1, 2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
        assert "Traceback" not in run.stderr and "RecursionError" not in run.stderr
    assert runs[0].stdout == runs[1].stdout
    report = json.loads(runs[0].stdout)
    kernels = {Path(k["file"]).name: k for k in report["kernels"]}
    assert len(kernels) == 2 * (4 * 4 + 1)  # every file's kernel, CUDA and OpenMP
    for name, kernel in kernels.items():
        approximated = name.startswith(("ifs", "fors"))  # nested statements: rule N2
        assert bool(kernel.get("warnings")) == approximated, (name, kernel.get("warnings"))
        if approximated:
            line = f"nesting deeper than {MAX_STATEMENT_NESTING} at line"
            assert line in kernel["warnings"][0]
            assert (
                f"{name}: kernel {kernel['name']} (line {kernel['line']}): {line}" in runs[0].stderr
            )
    assert kernels["sum_5000.cpp"]["flops_per_thread"]["sp"] == 4999
    assert kernels["braces_10000.cu"]["bytes_per_thread"] == {"load": 4, "store": 4}


# ---------------------------------------------------------------- N1: chains are exact
@pytest.mark.parametrize("suffix", [".cu", ".cpp"])
@pytest.mark.parametrize("depth", DEPTHS)
def test_redundant_braces_and_parentheses_are_exact(tmp_path: Path, depth: int, suffix: str):
    wrap = cuda if suffix == ".cu" else omp
    for shape in ("braces", "parens"):
        fv = _count(tmp_path, wrap(SHAPES[shape](depth)), suffix)
        assert (fv.flops_sp, fv.load_bytes, fv.store_bytes) == (1, 4, 4), shape
        assert fv.warnings == []


@pytest.mark.rule("N1")
@pytest.mark.parametrize("suffix", [".cu", ".cpp"])
@pytest.mark.parametrize("terms", [500, 5000])
def test_a_flat_sum_has_n_minus_1_adds_and_n_loads(tmp_path: Path, terms: int, suffix: str):
    wrap = cuda if suffix == ".cu" else omp
    fv = _count(tmp_path, wrap(SHAPES["sum"](terms)), suffix)
    assert fv.flops_sp == terms - 1
    assert (fv.loads, fv.load_bytes, fv.store_bytes) == (terms, 4 * terms, 4)
    assert fv.warnings == []
    # the same element N times: one load (docs/counting.md), N-1 adds, products likewise
    same = _count(tmp_path, wrap("b[i] = " + " * ".join(["a[1]"] * terms) + ";"), suffix)
    assert (same.flops_sp, same.loads, same.load_bytes) == (terms - 1, 1, 4)


def test_long_else_if_conditional_and_comma_chains_are_exact(tmp_path: Path):
    n = 5000
    else_ifs = "".join(f"if (i == {k}) b[i] = a[{k}]; else " for k in range(n)) + "b[i] = 0.0f;"
    fv = _count(tmp_path, cuda(else_ifs))
    # every arm as taken: n branches, n integer compares, n distinct loads, one store
    assert (fv.branches, fv.int_ops, fv.loads, fv.stores) == (n, n, n, 1)
    select = "b[i] = " + "".join(f"i == {k} ? a[{k}] : " for k in range(n)) + "0.0f;"
    fv = _count(tmp_path, cuda(select))
    assert (fv.branches, fv.int_ops, fv.loads, fv.flops_sp) == (n, n, n, 0)
    commas = "int c = 0; " + ", ".join("c += 2" for _ in range(n)) + "; b[c] = a[c] * a[c];"
    fv = _count(tmp_path, cuda(commas))
    assert (fv.int_ops, fv.flops_sp, fv.warnings) == (n, 1, [])


def test_a_long_sum_in_a_loop_bound_is_its_exact_trip_count(tmp_path: Path):
    bound = " + ".join(["n"] * 5000)
    fv = _count(tmp_path, cuda(f"for (int j = 0; j < {bound}; j++) b[i] += a[j];"))
    assert fv.flops_sp == 5000 * N and fv.warnings == []


# ---------------------------------------------------------------- N2: nested statements
@pytest.mark.rule("N2")
@pytest.mark.parametrize("suffix", [".cu", ".cpp"])
@pytest.mark.parametrize("depth", DEPTHS)
def test_ifs_nested_too_deep_are_counted_flat_all_of_them(tmp_path: Path, depth: int, suffix: str):
    wrap = cuda if suffix == ".cu" else omp
    fv = _count(tmp_path, wrap(SHAPES["ifs"](depth)), suffix)
    # counted flat, every `if` still counts: nothing of an if-nest is lost
    assert (fv.branches, fv.int_ops, fv.load_bytes, fv.store_bytes) == (depth, depth, 4, 4)
    line = 3 if suffix == ".cu" else 4  # the body's line
    assert _warned(fv, f"nesting deeper than {MAX_STATEMENT_NESTING} at line {line}")
    assert len(fv.warnings) == 1  # said once per kernel, not once per level


@pytest.mark.parametrize("suffix", [".cu", ".cpp"])
@pytest.mark.parametrize("depth", DEPTHS)
def test_loops_nested_too_deep_run_once(tmp_path: Path, depth: int, suffix: str):
    wrap = cuda if suffix == ".cu" else omp
    fv = _count(tmp_path, wrap(SHAPES["fors"](depth)), suffix)
    # the kernel body (CUDA) or the work-shared loop's body (OpenMP) is the first level
    assert fv.loop_depth == MAX_STATEMENT_NESTING - 1
    assert fv.flops_sp == 2**fv.loop_depth  # the loops past the limit count once
    assert (fv.load_bytes, fv.store_bytes) == (8, 4)  # b[i] += a[i]: hoisted out of all
    assert _warned(fv, f"nesting deeper than {MAX_STATEMENT_NESTING}")


def test_nesting_within_the_limits_is_walked_exactly(tmp_path: Path):
    depth = MAX_STATEMENT_NESTING - 2
    fv = _count(tmp_path, cuda(SHAPES["fors"](depth)))
    assert (fv.loop_depth, fv.flops_sp, fv.warnings) == (depth, 2**depth, [])
    nested = "b[i] = " + "a[i] * (1.0f + " * 20 + "a[i]" + ")" * 20 + ";"
    fv = _count(tmp_path, cuda(nested))
    assert (fv.flops_sp, fv.warnings) == (40, [])


# ---------------------------------------------------------------- N3, N4: expressions, values
@pytest.mark.rule("N3")
def test_an_expression_nested_too_deep_is_cut_with_a_warning(tmp_path: Path):
    levels = 2000
    nested = "b[i] = " + "a[i] * (a[i] + " * levels + "a[i]" + ")" * levels + ";"
    fv = _count(tmp_path, cuda(nested))
    assert _warned(fv, f"nesting deeper than {MAX_EXPRESSION_NESTING} at line 3")
    # each level is a `*`, a `+` and the parentheses: what lies above the limit counts
    assert 0 < fv.flops_sp < 2 * levels
    assert (fv.load_bytes, fv.store_bytes) == (4, 4)


@pytest.mark.rule("N4")
def test_a_value_nested_too_deep_is_unknown_not_a_crash(tmp_path: Path):
    nested = "n * (1 + " * 200 + "n" + ")" * 200
    fv = _count(tmp_path, cuda(f"for (int j = 0; j < {nested}; j++) b[i] += a[j];"))
    assert fv.flops_sp == symbol("trip_L3")  # an unknown trip count, named by its line
    assert _warned(fv, f"nesting deeper than {MAX_VALUE_DEPTH}")
    # products nested through variables: sympy would recurse (and grow) with each one
    chain = "int v0 = n;\n" + "".join(
        f"int v{k} = v{k - 1} * (v{k - 1} + 1);\n" for k in range(1, 300)
    )
    fv = _count(tmp_path, cuda(chain + "for (int j = 0; j < v299; j++) b[i] += a[j];"))
    assert fv.flops_sp.free_symbols == {symbol("trip_L303")}
    assert _warned(fv, "at line")


def test_a_long_chain_of_macros_is_followed_only_so_far(tmp_path: Path):
    depth = 3000
    macros = "#define A0 4\n" + "".join(f"#define A{k} (A{k - 1} + 1)\n" for k in range(1, depth))
    fv = _count(tmp_path, cuda(f"for (int j = 0; j < A{depth - 1}; j++) b[i] += a[j];", macros))
    assert fv.flops_sp == symbol("trip_L3003")  # 16 macros deep, no further: unknown
    # (which macro: as deep as the preprocessor left the chain, then 16 more)
    [warning] = fv.warnings
    assert warning.startswith(f"nesting deeper than {MAX_MACRO_DEPTH} in macro A")
    assert warning.endswith(": approximated (an integer value left unknown)")
    shallow = "#define B0 4\n" + "".join(f"#define B{k} (B{k - 1} + 1)\n" for k in range(1, 10))
    fv = _count(tmp_path, cuda("for (int j = 0; j < B9; j++) b[i] += a[j];", shallow))
    assert (fv.flops_sp, fv.warnings) == (13, [])


def test_host_values_unwrap_deep_parentheses(tmp_path: Path):
    args = "(" * 10000 + "(int)n" + ")" * 10000
    tree = parse(f"int main(int argc, char** argv) {{ int n = atoi(argv[1]); f({args}); }}", "cpp")
    query = tree_sitter.Query(language("cpp"), "(call_expression) @c")
    call = next(c for c in captures(query, tree.root_node)["c"] if c.text.startswith(b"f("))
    func = tree.root_node.named_children[0]
    arg = call.child_by_field_name("arguments").named_children[0]
    assert HostScope(func, "cpp").value(arg, call.start_byte) == argv_symbol(1)


def test_a_number_with_many_signs():
    assert counter_module._number("-" * 5001 + "7") == -7
    assert counter_module._number("+-" * 3000 + "2.5") == 2.5


# ---------------------------------------------------------------- B1: the work budget
INLINE_CHAIN = (
    "__device__ float f0(float x) { float s = x; "
    + "s = s * x + 1.0f; " * 40
    + "return s; }\n"
    + "".join(
        f"__device__ float f{k}(float x) {{ return f{k - 1}(x) + f{k - 1}(x + 1.0f)"
        f" + f{k - 1}(x + 2.0f) + f{k - 1}(x + 3.0f); }}\n"
        for k in range(1, 9)
    )
)


@pytest.mark.rule("B1")
def test_a_runaway_kernel_stops_at_the_work_budget_with_its_counts_so_far(tmp_path: Path):
    # 4^8 inlined copies of f0 (40 statements each): far past the budget
    fv = _count(tmp_path, cuda("b[i] = f8(a[i]);", INLINE_CHAIN))
    assert any(w.startswith(f"too complex (more than {WORK_BUDGET} ") for w in fv.warnings)
    walked_copies = fv.device_calls
    assert 0 < walked_copies < 4**8
    assert fv.flops_sp > 0 and fv.store_bytes == 0  # the store after the call: never reached


def test_the_budget_makes_the_same_report_for_any_jobs(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(counter_module, "WORK_BUDGET", 5000)  # forked workers inherit it
    for k in range(3):
        (tmp_path / f"p{k}-cuda").mkdir()
        (tmp_path / f"p{k}-cuda" / "k.cu").write_text(cuda("b[i] = f8(a[i]);", INLINE_CHAIN))
    reports = [
        analyze_paths([tmp_path], load_gpu("a100"), predictor=RooflinePredictor(), jobs=j).to_json()
        for j in (1, 2)
    ]
    assert reports[0] == reports[1]
    assert all("too complex (more than 5000 " in k["warnings"][0] for k in reports[0]["kernels"])


# ---------------------------------------------------------------- one failing file
GOOD = cuda("b[i] = a[i] * 2.0f;")


@pytest.fixture
def failing(tmp_path: Path, monkeypatch) -> Path:
    """good.cu and other.cu are fine; counting crash.cu fails; discovering broken.cu fails.
    (No input makes roofcast fail any more: the failures are injected.)"""
    for name in ("good.cu", "crash.cu", "broken.cu", "other.cu"):
        (tmp_path / name).write_text(GOOD.replace("void k", f"void {name[:-3]}_kernel"))
    count, discover_files = pipeline.count_features, pipeline.discover_files

    def counting(ir, defines=None, **options):
        if ir.file.endswith("crash.cu"):
            raise RecursionError("maximum recursion depth exceeded\nsecond line")
        return count(ir, defines, **options)

    def discovering(files, *args, **kwargs):
        if any(f.name == "broken.cu" for f in files):
            raise KeyError("no such node")
        return discover_files(files, *args, **kwargs)

    monkeypatch.setattr(pipeline, "count_features", counting)
    monkeypatch.setattr(pipeline, "discover_files", discovering)
    return tmp_path


@pytest.mark.rule("E1")
@_FORKS
def test_a_failing_file_is_a_problem_and_the_others_are_reported(failing: Path):
    reports = [
        analyze_paths([failing], load_gpu("a100"), predictor=RooflinePredictor(), jobs=j).to_json()
        for j in (1, 2)
    ]
    assert reports[0] == reports[1]
    names = sorted(k["name"] for k in reports[0]["kernels"])
    assert names == ["good_kernel", "other_kernel"]
    problems = {Path(p["file"]).name: p["message"] for p in reports[0]["problems"]}
    assert problems == {
        "crash.cu": "kernel crash_kernel (line 1) not analysed: internal error RecursionError: "
        "maximum recursion depth exceeded",
        "broken.cu": "not analysed: internal error KeyError: 'no such node'",
    }


@_FORKS
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_command_reports_the_rest_and_exits_2_as_for_a_binary_file(failing: Path, jobs: str):
    (failing / "blob.cu").write_bytes(b"\x00\x01binary")
    result = CliRunner().invoke(app, ["analyze", str(failing), "--format", "json", "--jobs", jobs])
    assert result.exit_code == 2
    assert sorted(k["name"] for k in json.loads(result.stdout)["kernels"]) == [
        "good_kernel",
        "other_kernel",
    ]
    errors = [line for line in result.stderr.splitlines() if line.startswith("roofcast: error:")]
    assert len(errors) == 3 and len(result.stderr.splitlines()) == 3  # one line each
    assert f"{failing / 'crash.cu'}: kernel crash_kernel (line 1) not analysed: " in result.stderr
    assert f"{failing / 'broken.cu'}: not analysed: internal error KeyError" in result.stderr
    assert "Traceback" not in result.stderr


def test_sympy_values_stay_small_through_long_products(tmp_path: Path):
    """A product nested through 300 variables is refused before sympy would recurse on it."""
    chain = "int v0 = n;\n" + "".join(f"int v{k} = v{k - 1} << v{k - 1};\n" for k in range(1, 300))
    fv = _count(tmp_path, cuda(chain + "for (int j = 0; j < v299; j++) b[i] += a[j];"))
    assert isinstance(fv.flops_sp, sympy.Symbol)
