"""`roofcast hook / baseline update / plot / matrix` end to end through the real analyzer."""
from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from roofcast.cli.main import app

#: 256 iterations of a float Horner step per 8 bytes moved: SP AI 64 > 32.97 on the RTX 3080.
POLY_COMPUTE = """\
__global__ void poly(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float acc = 0.0f;
        for (int k = 0; k < 256; ++k) acc = acc * v + 1.0f;
        y[i] = acc;
    }
}
"""
#: The same kernel after an edit that keeps 2 iterations: AI ~0.5, bandwidth-bound.
POLY_BANDWIDTH = POLY_COMPUTE.replace("k < 256", "k < 2")

#: 8 double Horner steps per 16 bytes: DP AI 1.0, above the RTX 3080's 0.515, below an A100's.
DPOLY = """\
__global__ void dpoly(const double* x, double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double v = x[i];
        double acc = 0.0;
        for (int k = 0; k < 8; ++k) acc = acc * v + 1.0;
        y[i] = acc;
    }
}
"""

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A user's project folder, as the cwd (pre-commit runs hooks from the repository root)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "poly.cu").write_text(POLY_COMPUTE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_baseline_then_hook_passes_unchanged_and_fails_on_flip(project):
    res = run("baseline", "update", "src", "--gpu", "rtx3080")
    assert res.exit_code == 0, res.output
    data = json.loads((project / ".roofcast-baseline.json").read_text())
    entry = data["gpus"]["rtx3080"]["kernels"]["src/poly.cu::poly"]
    assert entry["bound"] == "compute" and entry["line"] == 1

    res = run("hook", "--gpu", "rtx3080", "--fail-on", "change", "src/poly.cu")
    assert res.exit_code == 0 and res.stdout == ""

    (project / "src" / "poly.cu").write_text("// moved down\n\n" + POLY_BANDWIDTH)
    res = run("hook", "--gpu", "rtx3080", "--fail-on", "change", "src/poly.cu")
    assert res.exit_code == 1
    first = res.stdout.splitlines()[0]
    assert first.startswith("src/poly.cu:3: poly [rtx3080] compute-bound -> bandwidth-bound (")
    assert first.endswith("<- fails (--fail-on change)")
    assert "1 of 1 kernel verdicts changed" in res.stdout


def test_hook_fail_on_bandwidth_and_never(project):
    (project / "src" / "poly.cu").write_text(POLY_BANDWIDTH)
    res = run("hook", "--gpu", "rtx3080", "--fail-on", "bandwidth", "src/poly.cu")
    assert res.exit_code == 1 and "poly [rtx3080] bandwidth-bound (" in res.stdout
    res = run("hook", "--gpu", "rtx3080", "--fail-on", "never", "src/poly.cu")
    assert res.exit_code == 0 and "poly [rtx3080] bandwidth-bound" in res.stdout


@pytest.mark.parametrize("args,message", [
    (["--gpu", "rtx9999"], "unknown GPU 'rtx9999'"),
    (["--gpu", "rtx3080", "--fail-on", "change"], "no baseline file .roofcast-baseline.json"),
    (["--gpu", "rtx3080", "-D", "oops"], "malformed --define 'oops'"),
])
def test_hook_bad_input_is_one_line(project, args, message):
    res = run("hook", *args, "src/poly.cu")
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [res.stderr.strip()]
    assert message in res.stderr and "Traceback" not in res.output


def test_hook_with_no_files_is_silent(project):
    res = run("hook", "--gpu", "rtx3080", "--fail-on", "bandwidth")
    assert res.exit_code == 0 and res.stdout == ""


def test_matrix_shows_dp_flip_with_real_counts(project):
    (project / "src" / "dpoly.cu").write_text(DPOLY)
    res = run("matrix", "src/dpoly.cu", "--gpu", "rtx3080", "--gpu", "a100", "--format", "csv")
    assert res.exit_code == 0, res.output
    (row,) = csv.DictReader(io.StringIO(res.stdout))
    assert (row["rtx3080"], row["a100"], row["flips"]) == ("compute", "bandwidth", "yes")
    res = run("matrix", "src", "--gpu", "rtx3080", "--gpu", "h100", "--format", "json")
    data = json.loads(res.stdout)
    assert data["flipped"] == ["src/dpoly.cu::dpoly"]


def test_plot_writes_png_and_refuses_unknown_format(project):
    res = run("plot", "src", "--gpu", "rtx3080", "-o", "roof.png")
    assert res.exit_code == 0, res.output
    assert (project / "roof.png").stat().st_size > 20_000
    res = run("plot", "src", "--gpu", "rtx3080", "-o", "roof.gif")
    assert res.exit_code == 2 and "use one of" in res.stderr
