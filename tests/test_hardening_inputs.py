"""Input is data: -D values, sidecar and host expressions are parsed by a strict C grammar and
never run; absurd values are refused or warned about, not silently replaced; folders that
cannot be listed are named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sympy
from roofcast.analyzer import discover
from roofcast.analyzer.cexpr import MAX_DEPTH, CExprError, tokenize
from roofcast.analyzer.cvalue import SIDECAR_FUNCTIONS, parse_value
from roofcast.analyzer.defines import check_define
from roofcast.features.entry import host_expression
from roofcast.features.resolve import MAX_COUNT, numeric_bindings

KERNEL = """\
__global__ void scale(float* y) {
  for (int i = 0; i < N; i++) y[i] = 2.0f * y[i];
}
"""


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "roofcast.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "k.cu"
    path.write_text(KERNEL)
    return path


# --------------------------------------------------------------------------- no code runs


def test_python_payload_in_a_define_is_refused_and_never_runs(kernel: Path, tmp_path: Path):
    marker = tmp_path / "pwned"
    payload = f"X=__import__('os').system('touch {marker}')"
    done = run_cli("analyze", str(kernel), "--gpu", "a100", "-D", payload, cwd=tmp_path)
    assert done.returncode == 2
    assert not marker.exists()
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "malformed --define" in lines[0] and "Traceback" not in done.stderr


@pytest.mark.rule("D1")
@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('id')",
        "().__class__",
        "lambda: 1",
        "2**4096",
        "x[0]",
        '"string"',
        "a.b",
        "N = 3",
        "f(1)",  # no call without an allowlist
    ],
)
def test_the_value_parser_accepts_only_c_expressions(text: str):
    with pytest.raises(CExprError):
        parse_value(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1<<20", 1 << 20),
        ("0x100", 256),
        ("010", 8),
        ("1024u", 1024),
        ("4096ULL", 4096),
        ("(2 + 3) * 4", 20),
        ("7/2", 3),  # integer constants divide as in C
        ("-7/2", -3),
        ("-7%3", -1),
        ("1 ? 5 : 1/0", 5),  # the arm not taken is not evaluated
        ("sizeof(double) * 8", 64),
        ("'A'", 65),
        ("~0 & 0xff", 255),
        ("3 > 2 && 2 > 1", 1),
    ],
)
def test_the_value_parser_has_c_meaning(text: str, value: int):
    assert parse_value(text) == value


def test_names_stay_symbols_and_sympy_names_mean_nothing():
    n = sympy.Symbol("N")
    assert parse_value("N*2 + 1") == 2 * n + 1
    assert parse_value("N/2") == n / 2  # with a symbol, division is exact (as counted)
    # E, I, pi, S are names in C, not sympy's constants
    assert parse_value("E + I + pi + S").free_symbols == {
        sympy.Symbol(x) for x in ("E", "I", "pi", "S")
    }


def test_deep_nesting_and_long_input_are_errors_not_crashes():
    for text in ("(" * 5000 + "1" + ")" * 5000, "-" * 3 + "(" * (MAX_DEPTH + 1) + "1"):
        with pytest.raises(CExprError):
            parse_value(text)
    with pytest.raises(CExprError, match="tokens"):
        tokenize("1+" * 5000 + "1")
    with pytest.raises(CExprError):
        parse_value("1e99999999999")  # no huge number is built


def test_sidecar_and_host_expressions_use_the_strict_parser():
    expr = parse_value("2*ceiling(n/(blockDim_x*gridDim_x))", functions=SIDECAR_FUNCTIONS)
    assert expr.subs({"n": 1000, "blockDim_x": 10, "gridDim_x": 10}) == 20
    with pytest.raises(CExprError):
        parse_value("__import__('os')", functions=SIDECAR_FUNCTIONS)
    assert host_expression("argv_1 * 4") == 4 * sympy.Symbol("argv_1", positive=True)
    assert host_expression("__import__('os').getcwd()") is None
    value = sympy.Symbol("argv_2", positive=True) * 8
    assert host_expression(value) is value  # the analyzer hands over expressions, not text


def test_host_values_reach_the_ir_as_expressions(tmp_path: Path):
    path = tmp_path / "k.cu"
    path.write_text(
        textwrap.dedent("""\
        #include <cstdlib>
        __global__ void k(int n, float* y) { if (threadIdx.x < n) y[threadIdx.x] = 0; }
        int main(int argc, char** argv) {
          int n = atoi(argv[1]) * 2;
          float* y; cudaMalloc(&y, n * sizeof(float));
          k<<<1, 256>>>(n, y);
        }
        """)
    )
    ir = discover([path]).kernels[0]
    argv_1 = sympy.Symbol("argv_1", positive=True)
    # the argument, and the launch's <<<1, 256>>> (rule D11), as sympy values
    assert ir.host_bindings["n"] == 2 * argv_1
    geometry = {k: v for k, v in ir.host_bindings.items() if k != "n"}
    assert geometry == {f"{d}_{a}": 1 for d in ("blockDim", "gridDim") for a in "xyz"} | {
        "blockDim_x": 256
    }
    assert all(isinstance(v, sympy.Basic) for v in ir.host_bindings.values())
    assert ir.footprint == 8 * argv_1


# --------------------------------------------------------------------------- absurd values


@pytest.mark.rule("D2")
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1e400", "out of range"),
        ("1<<62", "out of range"),
        ("2**4096", "not a C expression"),
        ("nan", "not a finite number"),
        ("inf", "not a finite number"),
        ("INFINITY", "not a finite number"),
        ("1+", "not a C expression"),
    ],
)
def test_meaningless_define_values_are_one_line_errors(value: str, message: str, tmp_path, kernel):
    with pytest.raises(ValueError, match=message):
        check_define("N", value)
    done = run_cli("analyze", str(kernel), "--gpu", "a100", "-D", f"N={value}", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr and "N=" in done.stderr


@pytest.mark.parametrize(
    ("value", "words"),
    [("0", "not a positive size"), ("-1", "not a positive size"), ("abc", "not a number")],
)
def test_surprising_define_values_are_warned_about(value: str, words: str, tmp_path, kernel):
    warning = check_define("N", value)
    assert warning is not None and words in warning and f"N={value}" in warning
    done = run_cli(
        "analyze", str(kernel), "--gpu", "a100", "-D", f"N={value}", "-f", "json", cwd=tmp_path
    )
    assert done.returncode == 0
    assert f"roofcast: warning: --define N={value}" in done.stderr and words in done.stderr


@pytest.mark.parametrize("value", ["4096", "1<<12", "double", "unsigned int", "2.5f"])
def test_ordinary_define_values_pass_silently(value: str):
    assert check_define("N", value) is None


def test_numeric_bindings_read_c_values():
    bound = numeric_bindings({"N": "1<<10", "T": "double", "M": "abc", "H": "0.5f"})
    assert bound == {"N": 1024, "H": 0.5}


@pytest.mark.rule("D3")
def test_a_clamped_count_is_reported_with_the_value_used(tmp_path: Path):
    # a macro bomb: 2**60 trips of one multiply, beyond the counts' range
    lines = [f"#define A{i} (A{i + 1} * A{i + 1})" for i in range(6)] + ["#define A6 2"]
    lines += [
        "__global__ void bomb(float* y) {",
        "  for (long i = 0; i < A0 * A0 * A0; i++) y[0] = y[0] * 1.5f;",
        "}",
    ]
    path = tmp_path / "bomb.cu"
    path.write_text("\n".join(lines) + "\n")
    done = run_cli("analyze", str(path), "--gpu", "a100", "-f", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    kernel = json.loads(done.stdout)["kernels"][0]
    assert kernel["flops_per_thread"]["sp"] == MAX_COUNT
    assert any("flops_sp" in w and "1e+18 used" in w for w in kernel["warnings"])
    assert "flops_sp" in done.stderr and "warning" in done.stderr


# --------------------------------------------------------------------------- #ifdef and -U / -I

REAL = """\
#ifdef USE_DOUBLE
typedef double real;
#else
typedef float real;
#endif
__global__ void scale(real* y) { y[threadIdx.x] = y[threadIdx.x] * 2; }
"""


def test_an_undefined_macro_takes_the_else_arm_and_is_noted(tmp_path: Path):
    path = tmp_path / "k.cu"
    path.write_text(REAL)
    done = run_cli("analyze", str(path), "--gpu", "a100", "-f", "json", cwd=tmp_path)
    kernel = json.loads(done.stdout)["kernels"][0]
    assert kernel["flops_per_thread"]["sp"] == 1 and kernel["flops_per_thread"]["dp"] == 0
    assert kernel["undefined_macros"] == ["USE_DOUBLE"]
    assert "USE_DOUBLE" in done.stderr
    done = run_cli(
        "analyze", str(path), "--gpu", "a100", "-f", "json", "-D", "USE_DOUBLE=1", cwd=tmp_path
    )
    kernel = json.loads(done.stdout)["kernels"][0]
    assert kernel["flops_per_thread"]["dp"] == 1 and kernel["undefined_macros"] == []


def test_undefine_removes_a_builtin_and_a_define(tmp_path: Path):
    path = tmp_path / "k.cu"
    path.write_text(REAL.replace("USE_DOUBLE", "__CUDACC__"))
    found = discover([path])
    assert found.kernels[0].undefined_macros == []  # a builtin: defined, nothing to note
    done = run_cli(
        "analyze",
        str(path),
        "--gpu",
        "a100",
        "-f",
        "json",
        "-D",
        "__CUDACC__=1",
        "--undefine",
        "__CUDACC__",
        cwd=tmp_path,
    )
    kernel = json.loads(done.stdout)["kernels"][0]
    assert kernel["flops_per_thread"]["sp"] == 1 and kernel["flops_per_thread"]["dp"] == 0
    with_it = run_cli("analyze", str(path), "--gpu", "a100", "-f", "json", cwd=tmp_path)
    assert json.loads(with_it.stdout)["kernels"][0]["flops_per_thread"]["dp"] == 1


def test_include_dir_is_searched_for_quoted_includes(tmp_path: Path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "real.h").write_text("typedef double real;\n")
    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "k.cu"
    path.write_text('#include "real.h"\n__global__ void scale(real* y) { y[threadIdx.x] *= 2; }\n')
    args = ("analyze", str(path), "--gpu", "a100", "-f", "json")
    without = json.loads(run_cli(*args, cwd=tmp_path).stdout)["kernels"][0]
    found = json.loads(run_cli(*args, "-I", str(tmp_path / "inc"), cwd=tmp_path).stdout)
    assert without["flops_per_thread"]["dp"] == 0
    assert found["kernels"][0]["flops_per_thread"]["dp"] == 1
    missing = run_cli(*args, "-I", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_malformed_undefine_is_a_usage_error(kernel: Path, tmp_path: Path):
    done = run_cli("analyze", str(kernel), "--gpu", "a100", "-U", "1X", cwd=tmp_path)
    assert done.returncode == 2 and "--undefine" in done.stderr


# --------------------------------------------------------------------------- unlistable folders


def test_an_unlistable_folder_is_named_in_a_warning(tmp_path: Path, monkeypatch, capsys):
    from roofcast.analyzer import sources
    from typer.testing import CliRunner

    from roofcast.cli.main import app

    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "k.cu").write_text(KERNEL)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "hidden.cu").write_text(KERNEL)
    real_scandir = os.scandir

    def scandir(path):  # as chmod 000 behaves for a user other than root
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(sources.os, "scandir", scandir)
    unlistable: list[Path] = []
    assert sources.expand_paths([tmp_path], unlistable) == [tmp_path / "ok" / "k.cu"]
    assert unlistable == [locked]
    result = CliRunner().invoke(
        app, ["analyze", str(tmp_path), "--gpu", "a100", "-j", "1", "-f", "json"]
    )
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if str(locked) in line]
    assert len(warnings) == 1 and "warning" in warnings[0]
    assert json.loads(result.stdout)["problems"][0]["file"] == str(locked)


def test_a_unicode_digit_in_a_define_is_bad_input_not_a_crash():
    """Python's str.isdigit() takes "¹" for a digit; C does not (found by the property tests)."""
    from roofcast.analyzer.cexpr import CExprError, tokenize

    with pytest.raises(CExprError):
        tokenize("¹")
    with pytest.raises(CExprError):
        tokenize("2²")
