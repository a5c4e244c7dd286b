"""bench/error_budget.py on a tiny hand-made manifest and source: every number by hand."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import pytest
from roofcast.gpu_specs import load_gpu

from roofcast.evaluation.manifest import load_manifest
from roofcast.evaluation.runner import BuildFlags, analyze_rows
from roofcast.predictors.roofline import RooflinePredictor

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "error_budget.py"

# One kernel: per thread 1 SP FLOP (a*x[i]), 3 int ops (blockIdx*blockDim+threadIdx, i<n),
# 4 bytes loaded and 4 stored.
SOURCE = """\
__global__ void scale(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
"""
HEAD = (
    "target,family,language,kernel,kernel_signature,omp_function,omp_line,block,grid,"
    "exe_args,xtime_ns,dram_bytes,sp_flops,dp_flops,int_ops,sp_ai,dp_ai,int_ai,label"
)
SIG = '"scale(int, float, const float *, float *)"'
# Predicted totals: 1024 threads -> 8192 B, 1024 SP, 3072 int; 10240 threads -> 10x that.
ROWS = [
    # exact on every count; truth bandwidth, the rule says bandwidth
    f'toy-cuda,toy,CUDA,scale,{SIG},,,"(256, 1, 1)","(4, 1, 1)",,1,8191,1023,0,3071,0,0,0,'
    "Bandwidth",
    # we move 10x the bytes and count a tenth of the int ops; measured int AI 37.5 -> compute
    f'toy-cuda,toy,CUDA,scale,{SIG},,,"(256, 1, 1)","(40, 1, 1)",,1,8191,10239,0,307199,0,0,0,'
    "Compute",
    # we count a tenth of the bytes; bandwidth either way
    f'toy-cuda,toy,CUDA,scale,{SIG},,,"(256, 1, 1)","(4, 1, 1)",,1,81919,1023,0,3071,0,0,0,'
    "Bandwidth",
]


def _load_script():
    spec = importlib.util.spec_from_file_location("error_budget", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("budget")
    (root / "src" / "toy-cuda").mkdir(parents=True)
    (root / "src" / "toy-cuda" / "scale.cu").write_text(SOURCE)
    manifest = root / "dev.csv"
    manifest.write_text("\n".join([HEAD, *ROWS]) + "\n")
    return manifest, root / "src"


@pytest.fixture(scope="module")
def outcomes(toy):
    manifest, sources = toy
    gpu = load_gpu("rtx3080")
    # per-thread traffic: the toy's hand-made totals are per-thread counts x threads
    build = BuildFlags(traffic="per-thread")
    rows = load_manifest(manifest)
    return analyze_rows(rows, sources, gpu, RooflinePredictor(), build=build), gpu


def test_per_row_signed_errors(outcomes):
    budget = _load_script()
    rows, _ = outcomes
    errors = [budget.row_errors(o) for o in rows]
    assert errors[0]["dram_bytes"] == pytest.approx(0, abs=1e-3)
    assert errors[1]["dram_bytes"] == pytest.approx(math.log10(81921 / 8192))  # 10x over
    assert errors[1]["int_ops"] == pytest.approx(math.log10(30721 / 307200))  # 10x under
    assert errors[2]["dram_bytes"] == pytest.approx(math.log10(8193 / 81920))
    # AI error = op error - byte error: 10x too few int ops on 10x too many bytes = 100x
    assert errors[1]["int_ai"] == pytest.approx(-2.0, abs=1e-3)
    assert errors[2]["sp_ai"] == pytest.approx(1.0, abs=1e-3)
    assert "hp_flops" not in errors[0]  # no hp column in the manifest


def test_budget_shares_and_medians(outcomes):
    budget = _load_script()
    rows, _ = outcomes
    table = budget.budget(rows)
    assert "hp_flops" not in table and "hp_ai" not in table
    dram = table["dram_bytes"]["CUDA"]
    assert dram["n"] == 3
    assert dram["within_2x"] == pytest.approx(1 / 3)
    assert dram["over_2x"] == pytest.approx(1 / 3) and dram["under_2x"] == pytest.approx(1 / 3)
    assert dram["median_signed"] == pytest.approx(0, abs=1e-3)
    assert dram["median_abs"] == pytest.approx(1.0, abs=1e-3)
    ints = table["int_ops"]["all"]
    assert (ints["within_2x"], ints["over_2x"], ints["under_2x"]) == pytest.approx(
        (2 / 3, 0, 1 / 3)
    )
    assert table["sp_flops"]["all"]["within_2x"] == 1.0
    int_ai = table["int_ai"]["all"]  # errors 0, -2, +1
    assert (int_ai["within_2x"], int_ai["over_2x"], int_ai["under_2x"]) == pytest.approx(
        (1 / 3, 1 / 3, 1 / 3)
    )
    assert table["dram_bytes"]["OMP"]["n"] == 0
    assert table["dram_bytes"]["OMP"]["within_2x"] is None


def test_oracle_substitutions(outcomes):
    budget = _load_script()
    rows, gpu = outcomes
    table = budget.oracle(rows, gpu)
    # as is: both bandwidth rows right, the compute row wrong -> (1 + 0) / 2
    assert table["as is"]["all"] == pytest.approx(0.5)
    assert table["as is"]["all"] == pytest.approx(table["as is"]["CUDA"])
    # one measured count alone is not enough for row 2 (int AI 3.75 either way)
    for alone in ("bytes", "int", "flops", "int+flops", "bytes+flops"):
        assert table[alone]["all"] == pytest.approx(0.5), alone
    assert table["bytes+int"]["all"] == pytest.approx(1.0)
    assert table["bytes+int+flops"]["all"] == pytest.approx(1.0)
    assert table["as is"]["OMP"] is None


def test_script_prints_tables_and_rejects_bad_input(toy, tmp_path):
    manifest, sources = toy
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(manifest), str(sources)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "ORACLE" in done.stdout and "bytes+int" in done.stdout
    missing = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "no.csv"), str(sources)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr


def test_dram_floor_from_long_kernels_and_the_rows_at_it(outcomes):
    """The floor is the lowest DRAM rate among kernels of 50 ms or more (a short kernel's
    rate says nothing of it); a row is at the floor when its bytes are within 2x of the
    floor over its own run."""
    from dataclasses import replace

    budget = _load_script()
    rows, _ = outcomes
    timed = [  # (seconds, measured DRAM bytes) per toy row
        (0.1, 5e8),  # 5 GB/s for 100 ms: long, above the floor
        (0.06, 6.6e7),  # 1.1 GB/s for 60 ms: long, the floor itself
        (1e-3, 1e3),  # 1 MB/s for 1 ms: too short to say what the floor is
    ]
    moved = [
        replace(
            o, row=replace(o.row, measured={**o.row.measured, "xtime_ns": t * 1e9, "dram_bytes": b})
        )
        for o, (t, b) in zip(rows, timed, strict=True)
    ]
    floor = budget.background_floor(moved)
    assert floor["kernels"] == 2 and floor["bytes_per_s"] == pytest.approx(1.1e9)
    assert [budget.at_floor(o, floor["bytes_per_s"]) for o in moved] == [False, True, True]
    split = budget.floor_split(moved, floor["bytes_per_s"])
    assert split["above floor"]["all"]["n"] == 1 and split["at floor"]["all"]["n"] == 2
