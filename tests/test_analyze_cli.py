"""`analyze` / `roofcast analyze` end to end through the installed console scripts.

The fixture kernels in tests/data/analyzer/cli/ are our own; every expected count below is
derived by hand from docs/counting.md (the derivation is in the fixture's comments).
Bad input must give one `roofcast: error:` line on stderr, exit 2 and no traceback.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields
from pathlib import Path

import pytest
import sympy

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "data" / "analyzer" / "cli"
CUDA = FIXTURES / "kernels.cu"
OMP = FIXTURES / "omp_scale.cpp"
KERNELS = ["copy_f32", "row_sum", "gs_scale", "dp_poly", "scale"]
GOOD = ("__global__ void good(const float* x, float* y) {\n"
        "  int i = threadIdx.x;\n  y[i] = x[i] + 1.0f;\n}\n")
ENV = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}


def _command(prog: str) -> list[str]:
    """The console script of this interpreter's environment, else PATH, else the entry point."""
    beside = Path(sys.executable).parent / prog
    if beside.exists():
        return [str(beside)]
    found = shutil.which(prog)
    if found:
        return [found]
    entry = "analyze_entry" if prog == "analyze" else "app"
    return [sys.executable, "-c", f"from roofcast.cli.main import {entry}; {entry}()"]


def run_cli(
    *args: object, prog: str = "analyze", cwd: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*_command(prog), *(str(a) for a in args)],
        capture_output=True, text=True, cwd=cwd or REPO, env=ENV, timeout=120,
    )


def by_name(report: dict) -> dict[str, dict]:
    return {k["name"]: k for k in report["kernels"]}


def as_expr(value: object) -> sympy.Expr:
    return sympy.sympify(value)


def assert_one_error_line(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("roofcast: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def report() -> dict:
    proc = run_cli(FIXTURES, "--gpu", "a100", "--format", "json", "--predictor", "roofline")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return json.loads(proc.stdout)


# --------------------------------------------------------------------------- JSON contract


def test_json_top_level_contract(report):
    from roofcast.gpu_specs import load_gpu

    assert report["schema_version"] == 1
    gpu = load_gpu("a100")
    assert report["gpu"]["name"] == gpu.name
    points = report["gpu"]["balance_points"]
    assert {"sp", "dp", "int"} <= set(points)
    for cls in ("sp", "dp", "int"):
        assert isinstance(points[cls], (int, float)) and points[cls] > 0
        assert points[cls] == pytest.approx(gpu.balance_points[cls], rel=1e-3)
    assert [k["name"] for k in report["kernels"]] == KERNELS


def test_json_every_kernel_has_the_contract_fields(report):
    for k in report["kernels"]:
        assert isinstance(k["name"], str) and k["name"]
        assert isinstance(k["line"], int) and k["line"] >= 1
        assert k["language"] in ("cuda", "openmp")
        source_line = (REPO / k["file"]).read_text().splitlines()[k["line"] - 1]
        if k["language"] == "cuda":
            assert f"void {k['name']}(" in source_line
        else:
            assert source_line.strip().startswith("#pragma omp target")
        assert set(k["flops_per_thread"]) == {"sp", "dp", "hp", "int"}
        assert set(k["bytes_per_thread"]) == {"load", "store"}
        for value in [*k["flops_per_thread"].values(), *k["bytes_per_thread"].values()]:
            assert isinstance(value, (int, float, str)) and not isinstance(value, bool)
        assert {"sp", "dp", "int"} <= set(k["arithmetic_intensity"])
        for value in k["arithmetic_intensity"].values():
            assert isinstance(value, (int, float)) or value == "inf"
        assert k["bound"] in ("compute", "bandwidth", "unknown")
        assert isinstance(k["reason"], str) and k["reason"]
        assert isinstance(k["symbols"], list) and all(isinstance(s, str) for s in k["symbols"])


def test_json_resolved_counts_are_hand_counted_numbers(report):
    k = by_name(report)
    assert k["copy_f32"]["flops_per_thread"] == {"sp": 0, "dp": 0, "hp": 0, "int": 3}
    assert k["copy_f32"]["bytes_per_thread"] == {"load": 4, "store": 4}
    assert k["copy_f32"]["symbols"] == []
    # the intensity divides the launch's ops by its DRAM bytes (traffic model, T1-T7)
    dram = k["copy_f32"]["dram_bytes"]
    assert k["copy_f32"]["traffic_model"] == "launch"
    launch_ops = 3 * k["copy_f32"]["threads"]
    assert k["copy_f32"]["arithmetic_intensity"]["int"] == pytest.approx(
        launch_ops / (dram["load"] + dram["store"]), rel=1e-5
    )
    assert k["dp_poly"]["flops_per_thread"] == {"sp": 0, "dp": 5, "hp": 0, "int": 0}
    assert k["dp_poly"]["bytes_per_thread"] == {"load": 8, "store": 8}
    # x[threadIdx.x] on a launch nobody gave (the default 1024 blocks of 256): with the launch
    # a guess, so is the reuse between blocks; none is assumed (T8), and DP AI 5/16 is far
    # below any datacenter GPU's DP balance point
    assert k["dp_poly"]["bound"] == "bandwidth" and "DP" in k["dp_poly"]["reason"]
    assert not any(a["from_index"] for a in k["dp_poly"]["dram_bytes"]["arrays"])
    omp = k["scale"]
    assert omp["language"] == "openmp" and Path(omp["file"]).name == "omp_scale.cpp"
    assert omp["line"] == 5
    assert omp["flops_per_thread"]["sp"] == 1
    assert omp["bytes_per_thread"] == {"load": 4, "store": 4}


def test_traffic_option_chooses_the_bytes_the_intensity_uses():
    """--traffic per-thread: every thread's own first touches, no reuse between threads:
    dp_poly's 16 bytes per thread against 5 DP FLOPs is bandwidth-bound again."""
    proc = run_cli(
        FIXTURES / "kernels.cu", "--gpu", "a100", "-f", "json", "-p", "roofline",
        "--traffic", "per-thread",
    )
    assert proc.returncode == 0, proc.stderr
    k = by_name(json.loads(proc.stdout))["dp_poly"]
    assert k["traffic_model"] == "per-thread"
    assert k["arithmetic_intensity"]["dp"] == pytest.approx(5 / 16)
    assert k["bound"] == "bandwidth"
    bad = run_cli(FIXTURES / "kernels.cu", "--traffic", "cache")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_json_unresolved_counts_are_expression_strings(report):
    row = by_name(report)["row_sum"]
    n = sympy.Symbol("n")
    assert isinstance(row["flops_per_thread"]["sp"], str)
    assert sympy.simplify(as_expr(row["flops_per_thread"]["sp"]) - n) == 0
    assert sympy.simplify(as_expr(row["flops_per_thread"]["int"]) - 4 * n) == 0
    assert sympy.simplify(as_expr(row["bytes_per_thread"]["load"]) - 4 * n) == 0
    assert row["bytes_per_thread"]["store"] == 4
    assert row["symbols"] == ["n"]
    # classification used the documented default n = 1024 and says so
    assert row["defaults_applied"] == {"n": 1024}
    dram = row["dram_bytes"]
    assert row["arithmetic_intensity"]["sp"] == pytest.approx(
        1024 * row["threads"] / (dram["load"] + dram["store"]), rel=1e-4
    )
    assert "default" in row["reason"]
    for k in report["kernels"]:
        names: set[str] = set()
        for value in [*k["flops_per_thread"].values(), *k["bytes_per_thread"].values()]:
            if isinstance(value, str):
                names |= {s.name for s in as_expr(value).free_symbols}
        assert names <= set(k["symbols"]), k["name"]


def test_define_binds_a_symbol_to_a_number():
    proc = run_cli(CUDA, "--format", "json", "-D", "n=100", "--define", "UNUSED=3")
    assert proc.returncode == 0, proc.stderr
    k = by_name(json.loads(proc.stdout))
    assert k["row_sum"]["flops_per_thread"] == {"sp": 100, "dp": 0, "hp": 0, "int": 400}
    assert k["row_sum"]["bytes_per_thread"] == {"load": 400, "store": 4}
    assert k["row_sum"]["symbols"] == []
    assert k["row_sum"]["defaults_applied"] == {}
    # n is bound, the launch dimensions of the grid-stride loop are not
    assert k["gs_scale"]["symbols"] == ["blockDim_x", "gridDim_x"]
    assert isinstance(k["gs_scale"]["flops_per_thread"]["sp"], str)


def test_block_and_grid_bind_launch_dimensions_of_grid_stride_loops():
    proc = run_cli(CUDA, "--format", "json", "-D", "n=4096", "--block", "128", "--grid", "16")
    assert proc.returncode == 0, proc.stderr
    gs = by_name(json.loads(proc.stdout))["gs_scale"]
    trips = 2  # ceiling(4096 / (128 * 16))
    assert gs["flops_per_thread"] == {"sp": trips, "dp": 0, "hp": 0, "int": 2 + 3 * trips}
    assert gs["bytes_per_thread"] == {"load": 4 * trips, "store": 4 * trips}
    assert gs["symbols"] == []
    assert gs["threads"] == 128 * 16


def test_kernel_regex_filters_by_name():
    proc = run_cli(FIXTURES, "--format", "json", "--kernel", "^(row|gs)_")
    assert proc.returncode == 0, proc.stderr
    assert [k["name"] for k in json.loads(proc.stdout)["kernels"]] == ["row_sum", "gs_scale"]


def test_roofcast_analyze_is_the_same_command(report):
    proc = run_cli("analyze", FIXTURES, "--gpu", "a100", "--format", "json",
                   "--predictor", "roofline", prog="roofcast")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == report


def test_table_output_names_every_kernel_and_the_gpu():
    proc = run_cli("kernels.cu", "omp_scale.cpp", "--gpu", "h100", cwd=FIXTURES)
    assert proc.returncode == 0, proc.stderr
    for name in KERNELS:
        assert name in proc.stdout
    assert "H100" in proc.stdout
    assert "kernels.cu:6" in proc.stdout  # where copy_f32 is


# --------------------------------------------------------------------------- CSV export


def _csv(*args: object) -> tuple[list[str], list[dict[str, str]]]:
    proc = run_cli(*args, "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    reader = csv.DictReader(io.StringIO(proc.stdout))
    return list(reader.fieldnames or []), list(reader)


#: FeatureVector fields exported under another column name (or as several columns).
CSV_RENAMED = {"load_bytes": "bytes_load", "store_bytes": "bytes_store", "work_items": "threads"}
#: scalar features (per-kernel numbers); maps and lists (special, notes, bindings) are not columns
SCALAR_TYPES = {"sympy.Expr", "sympy.Expr | None", "int", "bool"}
#: see test_grid_stride_loops_are_recognised_and_exported
CSV_KNOWN_MISSING = {"grid_stride_loops"}


def test_csv_one_row_per_kernel_with_every_feature(report):
    from roofcast.features.vector import FeatureVector

    header, rows = _csv(FIXTURES, "--gpu", "a100", "--predictor", "roofline")
    assert [r["name"] for r in rows] == KERNELS
    scalar = [f.name for f in fields(FeatureVector) if str(f.type) in SCALAR_TYPES]
    assert {"flops_sp", "load_bytes", "loop_depth", "templated", "work_items"} <= set(scalar)
    wanted = {CSV_RENAMED.get(name, name) for name in scalar} - CSV_KNOWN_MISSING
    wanted |= {"name", "file", "line", "language", "bound", "reason", "symbols",
               "flops_sp", "flops_dp", "flops_hp", "flops_int", "ai_sp", "ai_dp", "ai_int"}
    assert wanted <= set(header), sorted(wanted - set(header))
    # the CSV is a view of the JSON
    for row in rows:
        k = by_name(report)[row["name"]]
        assert row["bound"] == k["bound"]
        assert int(row["line"]) == k["line"]
        for cls, value in k["flops_per_thread"].items():
            assert row[f"flops_{cls}"] == str(value)
        assert row["bytes_load"] == str(k["bytes_per_thread"]["load"])
        assert row["symbols"].split() == k["symbols"]


def test_csv_header_is_the_same_whatever_the_kernels(tmp_path):
    (tmp_path / "special.cu").write_text(
        "__global__ void root(const float* x, float* y) { y[0] = sqrtf(x[0]); }\n")
    plain, _ = _csv(CUDA)
    special, _ = _csv(tmp_path / "special.cu")
    assert plain == special


def test_grid_stride_loops_are_recognised_and_exported():
    header, rows = _csv(CUDA)
    assert "grid_stride_loops" in header
    counts = {r["name"]: r["grid_stride_loops"] for r in rows}
    assert float(counts["gs_scale"]) == 1 and float(counts["row_sum"]) == 0


# --------------------------------------------------------------------------- bad input


def _bad_cases(root: Path) -> dict[str, tuple[list[object], tuple[str, ...]]]:
    """name -> (arguments, substrings the one error line must contain)."""
    (root / "nokernels").mkdir()
    (root / "nokernels" / "host.cpp").write_text("int main() { return 0; }\n")
    (root / "binary.cu").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 4)
    (root / "utf16.cu").write_bytes(GOOD.encode("utf-16"))
    (root / "highbytes.cu").write_bytes(bytes(range(128, 256)) * 16)
    (root / "good.cu").write_text(GOOD)
    good = root / "good.cu"
    return {
        "missing": ([root / "no-such-file.cu"], ("no-such-file.cu",)),
        "no kernels": ([root / "nokernels"], ("no kernels",)),
        "binary": ([root / "binary.cu"], ("binary.cu",)),
        "utf16": ([root / "utf16.cu"], ("utf16.cu",)),
        "high bytes": ([root / "highbytes.cu"], ("highbytes.cu",)),
        "unknown gpu": ([good, "--gpu", "h10"], ("h10", "h100")),
        "define no =": ([good, "-D", "N"], ("--define", "'N'")),
        "define no name": ([good, "-D", "=3"], ("--define", "'=3'")),
        "define no value": ([good, "--define", "N="], ("--define", "'N='")),
        "block word": ([good, "--block", "abc"], ("--block", "abc")),
        "block zero": ([good, "--block", "0"], ("--block",)),
        "block 4 dims": ([good, "--block", "1,2,3,4"], ("--block",)),
        "grid word": ([good, "--grid", "many"], ("--grid", "many")),
        "kernel regex": ([good, "--kernel", "("], ("--kernel",)),
    }


@pytest.fixture(scope="module")
def bad_runs(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, tuple[str, ...]]]:
    """Every bad-input command, run concurrently (each is a fresh interpreter)."""
    cases = _bad_cases(tmp_path_factory.mktemp("bad"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(run_cli, *args) for name, (args, _) in cases.items()}
        return {name: (futures[name].result(), cases[name][1]) for name in cases}


@pytest.mark.parametrize("case", [
    "missing", "no kernels", "binary", "utf16", "high bytes", "unknown gpu", "define no =",
    "define no name", "define no value", "block word", "block zero", "block 4 dims",
    "grid word", "kernel regex",
])
def test_bad_input_is_one_error_line_and_exit_2(bad_runs, case):
    proc, needles = bad_runs[case]
    assert_one_error_line(proc, *needles)
    assert proc.stdout == ""


def test_truncated_file_reports_the_kernels_that_parsed(tmp_path):
    cut = GOOD + "__global__ void cut(float* a) {\n  int i = threadIdx.x;\n  a[i] = a[i] * "
    (tmp_path / "trunc.cu").write_text(cut)
    proc = run_cli(tmp_path / "trunc.cu", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    good = by_name(json.loads(proc.stdout))["good"]
    assert good["flops_per_thread"]["sp"] == 1
    assert good["bytes_per_thread"] == {"load": 4, "store": 4}
    lines = proc.stderr.strip().splitlines()
    assert lines and all(line.startswith("roofcast: ") and "trunc.cu" in line for line in lines)


def test_kernel_cut_in_its_body_is_reported_or_a_clear_error(tmp_path):
    (tmp_path / "cut.cu").write_text("__global__ void only(float* a) {\n  a[0] = a[1] * ")
    proc = run_cli(tmp_path / "cut.cu", "--format", "json")
    assert "Traceback" not in proc.stderr
    assert all(line.startswith("roofcast: ") for line in proc.stderr.strip().splitlines())
    if proc.returncode == 0:
        assert [k["name"] for k in json.loads(proc.stdout)["kernels"]] == ["only"]
    else:
        assert proc.returncode == 2
        errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("roofcast: error: ")]
        assert len(errors) == 1 and "cut.cu" in errors[0]


def test_a_bad_file_does_not_stop_the_others(tmp_path):
    (tmp_path / "good.cu").write_text(GOOD)
    (tmp_path / "garbage.cu").write_bytes(bytes(range(128, 256)) * 16)
    (tmp_path / "noise.cu").write_text("}}} {{{ ))) int int ;;; __global__ ( void\n" * 20)
    proc = run_cli(tmp_path / "good.cu", tmp_path / "garbage.cu", tmp_path / "noise.cu",
                   "--format", "json")
    assert "Traceback" not in proc.stderr
    kernels = by_name(json.loads(proc.stdout))
    assert kernels["good"]["bytes_per_thread"] == {"load": 4, "store": 4}
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("roofcast: error: ")]
    assert len(errors) == 1 and "garbage.cu" in errors[0]
    assert proc.returncode == 2  # a named file could not be read


def test_a_bad_file_in_a_folder_does_not_stop_the_others(tmp_path):
    (tmp_path / "good.cu").write_text(GOOD)
    (tmp_path / "blob.cu").write_bytes(b"\x00\x01\x02" * 100)
    proc = run_cli(tmp_path, "--format", "json")
    assert "Traceback" not in proc.stderr
    assert [k["name"] for k in json.loads(proc.stdout)["kernels"]] == ["good"]
    assert any("blob.cu" in line for line in proc.stderr.splitlines())


def test_a_stray_latin1_byte_in_a_comment_is_a_warning(tmp_path):
    (tmp_path / "latin.cu").write_bytes(b"// caf\xe9\n" + GOOD.encode())
    proc = run_cli(tmp_path / "latin.cu", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert [k["name"] for k in json.loads(proc.stdout)["kernels"]] == ["good"]
    assert proc.stderr.startswith("roofcast: warning: ") and "latin.cu" in proc.stderr


def test_exit_codes_are_documented_in_the_readme():
    from roofcast.cli import errors

    readme = (REPO / "README.md").read_text()
    match = re.search(r"Exit codes:(.*?)(?:\n\n|$)", readme, re.S)
    assert match, "README has no 'Exit codes:' paragraph"
    text = " ".join(match.group(1).split())
    for code, words in ((errors.EXIT_OK, "ok"), (errors.EXIT_FAIL_ON, "--fail-on"),
                        (errors.EXIT_USAGE, "bad input"), (errors.EXIT_RUNTIME, "outside tool")):
        assert re.search(rf"\b{code}\b[^;]*{re.escape(words)}", text), (code, text)
