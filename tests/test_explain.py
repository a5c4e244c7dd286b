"""`roofcast explain`: per-line counts, the traffic model's arrays and the deciding class, on a
kernel written here and counted by hand; and SARIF's relatedLocations from the same model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SOURCE = textwrap.dedent(
    """\
    __global__ void saxpy_loop(const float* x, float* y, float a) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      float v = x[i];
      for (int k = 0; k < 64; ++k) {
        v = a * v + 1.0f; v = a * v + 1.0f; v = a * v + 1.0f; v = a * v + 1.0f;
      }
      y[i] = v;
    }
    """
)
ENV = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}


def roofcast(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "roofcast.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )


@pytest.fixture(scope="module")
def kernel_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("explain") / "k.cu"
    path.write_text(SOURCE)
    return path


LAUNCH = ("--block", "256", "--grid", "65536")  # 2^24 threads: 64 MiB per array


def test_json_gives_each_lines_counts_arrays_and_the_deciding_class(kernel_file):
    done = roofcast("explain", f"{kernel_file}:saxpy_loop", "-g", "a100", "-f", "json", *LAUNCH)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    lines = {row["line"]: row for row in data["lines"]}
    threads = 256 * 65536
    # line 5: four a * v + 1.0f, 64 times: 512 SP FLOPs per thread, under the trip count 64
    assert lines[5]["per_thread"] == {"sp": 512}
    assert lines[5]["per_launch"] == {"sp": 512 * threads}
    # each count names the one rule that produced it (docs/counting.md)
    assert lines[5]["trips"] == ["64"] and lines[5]["rules"] == ["F2"]
    assert lines[2]["rules"] == ["I1"]  # blockIdx.x * blockDim.x + threadIdx.x
    assert lines[3]["per_thread"]["load B"] == 4 and lines[3]["rules"] == ["M2"]
    # the loop's test and increment, per trip (64 trips: not unrolled fully, rule I4)
    assert lines[4]["per_thread"] == {"int": 128} and lines[4]["rules"] == ["I3"]
    assert lines[7]["per_thread"]["store B"] == 4
    arrays = {a["array"]: a for a in data["dram_bytes"]["arrays"]}
    assert arrays["x"]["dram_bytes"]["load"] == 4 * threads and arrays["x"]["lines"] == [3]
    assert arrays["y"]["dram_bytes"]["store"] == 4 * threads
    assert data["dram_bytes"]["l2_decision"] in ("fits L2", "wave fits L2", "spills L2")
    # 512 FLOPs per 8 bytes: 64 FLOP/B, far above the A100's SP balance: SP decides, compute
    assert data["decided_by"] == "sp" and data["bound"] == "compute"
    assert data["intensities"]["sp"] == pytest.approx(512 * threads / (8 * threads + 4096))


def test_table_fits_80_columns_and_names_the_decision(kernel_file):
    done = roofcast("explain", str(kernel_file), "-g", "h100", *LAUNCH)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "v = a * v + 1.0f;" in text and "trips: 64" in text
    assert "<- decides" in text and "DRAM per launch" in text


def test_unknown_kernel_is_one_line_and_exit_2(kernel_file):
    done = roofcast("explain", f"{kernel_file}:nope", "-g", "a100")
    assert done.returncode == 2
    assert "no kernel named 'nope'" in done.stderr and "saxpy_loop" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_sarif_related_locations_are_the_lines_that_move_the_most(kernel_file):
    done = subprocess.run(
        [sys.executable, "-m", "roofcast.cli", "analyze", str(kernel_file), "-g", "a100",
         "-f", "sarif", *LAUNCH],
        capture_output=True, text=True, env=ENV, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)["runs"][0]["results"]
    related = result["relatedLocations"]
    assert [r["physicalLocation"]["region"]["startLine"] for r in related] == [3, 7]
    assert "x:" in related[0]["message"]["text"]
