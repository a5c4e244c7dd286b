"""Cross-GPU matrix: a DP-heavy kernel flips between an RTX 3080 and an A100."""
from __future__ import annotations

import csv
import io

from rich.console import Console
from workflow_reports import SPECS, report

from roofcast.workflow import matrix as mx


def _matrix(tmp_path, gpus=("a100", "h100", "rtx3080")):
    return mx.build([report(g, SPECS, tmp_path) for g in gpus], tmp_path)


def test_dp_kernel_flips_between_rtx3080_and_a100(tmp_path):
    m = _matrix(tmp_path)
    assert [r.name for r in m.flipped] == ["dp_poly"]
    row = m.flipped[0]
    assert row.verdicts == {"a100_sxm4_80gb": "bandwidth", "h100_sxm": "bandwidth",
                            "rtx3080": "compute"}
    assert row.classes["rtx3080"] == "dp"


def test_csv_and_json_carry_every_kernel_on_every_gpu(tmp_path):
    m = _matrix(tmp_path)
    rows = list(csv.DictReader(io.StringIO(mx.to_csv(m))))
    assert [r["kernel"] for r in rows] == ["saxpy", "sgemm_tile", "dp_poly"]
    assert {r["kernel"]: r["flips"] for r in rows} == {"saxpy": "no", "sgemm_tile": "no",
                                                        "dp_poly": "yes"}
    assert rows[1]["rtx3080"] == "compute" and rows[0]["h100_sxm"] == "bandwidth"
    data = mx.to_json(m)
    assert data["flipped"] == ["src/poly.cu::dp_poly"]
    dp = next(k for k in data["kernels"] if k["name"] == "dp_poly")
    assert dp["verdicts"]["rtx3080"] == {"bound": "compute", "dominant_class": "dp",
                                         "intensity": 1.0}


def test_table_marks_the_flip(tmp_path):
    console = Console(record=True, width=200)
    console.print(mx.to_table(_matrix(tmp_path)))
    text = console.export_text()
    flip_lines = [line for line in text.splitlines() if "FLIP" in line]
    assert len(flip_lines) == 1 and "dp_poly" in flip_lines[0]
    assert "1 flip" in text


def test_single_gpu_never_flips(tmp_path):
    assert _matrix(tmp_path, ("rtx3080",)).flipped == []
