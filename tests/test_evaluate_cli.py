"""`roofcast evaluate` end to end: real fixture files, the real analyzer, real predictors."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from roofcast.gpu_specs import load_gpu
from typer.testing import CliRunner

from roofcast.cli.main import app
from roofcast.evaluation.counts import count_pairs
from roofcast.evaluation.manifest import load_manifest
from roofcast.evaluation.runner import analyze_rows, evaluate, iter_row_results
from roofcast.predictors.base import Verdict

DATA = Path(__file__).parent / "data" / "eval"
MANIFEST = DATA / "manifest.csv"
SOURCES = DATA / "sources"
REPO = Path(__file__).resolve().parents[1]
BASE = ["evaluate", "--manifest", str(MANIFEST), "--sources", str(SOURCES), "--gpu", "rtx3080",
        "--quiet"]


class TablePredictor:
    """Answers from a fixed table keyed by (file name, kernel name, line): lets the test
    know every prediction, so the scores can be computed by hand."""

    name = "table"

    def __init__(self, answers: dict[tuple[str, str, int], str], explode: str = "") -> None:
        self.answers = answers
        self.explode = explode

    def predict(self, items, gpu) -> list[Verdict]:
        return [self.verdict(kernel) for kernel, _ in items]

    def verdict(self, kernel) -> Verdict:
        ir = kernel.ir
        if ir.name == self.explode:
            raise RuntimeError("boom")
        bound = self.answers.get((Path(ir.file).name, ir.name, ir.line), "unknown")
        return Verdict(bound, "from the table", self.name)


ANSWERS = {
    ("kernels.cu", "saxpy", 4): "bandwidth",
    ("kernels.cu", "scale", 11): "bandwidth",
    ("kernels.cu", "count_loop", 17): "compute",
    ("second.cu", "reduce", 2): "compute",
    ("first.cu", "reduceFinal", 7): "bandwidth",
    ("main.cpp", "saxpy", 7): "bandwidth",
    ("main.cpp", "main", 43): "compute",
    ("main.cpp", "relax", 29): "bandwidth",
    # ("main.cpp", "scale", 15) is absent: 'unknown', a miss
}


@pytest.fixture(scope="module")
def rtx3080():
    return load_gpu("rtx3080")


def test_scores_through_the_loop_match_hand_computation(rtx3080):
    # Matched rows and truth (manifest.csv): saxpy b->b, scale<float> b->b, scale<double>
    # c->b, count_loop c->c, reduce b->c, reduceFinal b->b | omp saxpy b->b, main c->c,
    # relax c->b, scale b->unknown. 10 of 14 rows matched. Same numbers as the metrics test.
    rows = load_manifest(MANIFEST)
    summary = evaluate(rows, SOURCES, rtx3080, TablePredictor(ANSWERS)).to_json()
    assert summary["schema_version"] == 1
    assert summary["rows"] == 14 and summary["n"] == 10
    assert summary["coverage"] == pytest.approx(10 / 14)
    assert summary["accuracy"] == pytest.approx(0.6)
    assert summary["balanced_accuracy"] == pytest.approx((2 / 4 + 4 / 6) / 2)
    assert summary["mcc"] == pytest.approx(12 / math.sqrt(2592))
    assert summary["confusion"]["bandwidth"] == {"compute": 1, "bandwidth": 4}
    cuda, omp = summary["by_language"]["CUDA"], summary["by_language"]["OMP"]
    assert (cuda["rows"], cuda["n"], cuda["accuracy"]) == (9, 6, pytest.approx(4 / 6))
    assert cuda["balanced_accuracy"] == pytest.approx((1 / 2 + 3 / 4) / 2)
    assert (omp["rows"], omp["n"], omp["accuracy"]) == (5, 4, pytest.approx(0.5))
    assert sorted(u["row"] for u in summary["unmatched"]) == [6, 7, 12, 13]
    assert all(u["reason"] for u in summary["unmatched"])


def test_a_kernel_that_fails_is_a_miss_not_a_crash(rtx3080):
    rows = load_manifest(MANIFEST)
    result = evaluate(rows, SOURCES, rtx3080, TablePredictor(ANSWERS, explode="count_loop"))
    summary = result.to_json()
    assert [f["row"] for f in summary["failures"]] == [3]
    assert "RuntimeError: boom" in summary["failures"][0]["error"]
    assert summary["n"] == 10  # still matched, scored as unknown
    assert summary["unknown"] == 2
    assert summary["confusion"]["compute"]["compute"] == 1


def test_launch_totals_scale_per_thread_counts(rtx3080):
    """saxpy: 2 FLOPs and 12 bytes per thread x 256 x 4096 threads = the measured totals;
    the launch model reads x and y and writes y once each, plus the launch's 4 KiB (T7)."""
    rows = load_manifest(MANIFEST)[:1]
    [outcome] = analyze_rows(rows, SOURCES, rtx3080)
    assert outcome.result is not None and outcome.result.verdict is None
    pairs = {p.column: p for p in count_pairs(outcome)}
    assert pairs["sp_flops"].predicted == pytest.approx(2 * 256 * 4096)
    assert pairs["sp_flops"].measured == 2097152
    assert pairs["dram_bytes"].predicted == pytest.approx(12 * 256 * 4096 + 4096)
    assert pairs["sp_flops"].fully_resolved


def test_template_instance_is_counted_in_its_own_precision(rtx3080):
    rows = load_manifest(MANIFEST)[1:3]  # scale<float>, scale<double>
    pairs = [{p.column: p.predicted for p in count_pairs(o)}
             for o in analyze_rows(rows, SOURCES, rtx3080)]
    assert pairs[0]["sp_flops"] > 0 and pairs[0]["dp_flops"] == 0
    assert pairs[1]["dp_flops"] > 0 and pairs[1]["sp_flops"] == 0


def test_iter_row_results_pairs_every_row(rtx3080):
    rows = load_manifest(MANIFEST)
    pairs = list(iter_row_results(rows, SOURCES, rtx3080))
    assert [r.index for r, _ in pairs] == [r.index for r in rows]
    assert [res is None for _, res in pairs].count(True) == 4


def _invoke(*args: str):
    return CliRunner().invoke(app, [*BASE, *args])


def test_cli_json_contract():
    result = _invoke("--predictor", "roofline", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("schema_version", "n", "coverage", "accuracy", "balanced_accuracy", "f1", "mcc",
                "confusion", "by_language", "counts", "unmatched"):
        assert key in data
    assert set(data["f1"]) == {"compute", "bandwidth"}
    assert set(data["confusion"]) == {"compute", "bandwidth"}
    assert set(data["by_language"]) == {"CUDA", "OMP"}
    assert set(data["counts"]) == {"sp_flops", "dp_flops", "int_ops", "dram_bytes"}
    assert data["n"] == 10 and len(data["unmatched"]) == 4
    assert data["predictor"] == "roofline"


def test_cli_balanced_and_limit():
    data = json.loads(_invoke("--predictor", "roofline", "--balanced", "--per-class", "1",
                              "--seed", "3", "--format", "json").stdout)
    assert data["rows"] == 4 and data["sampling"] == {"balanced": True, "per_class": 1,
                                                      "seed": 3}
    again = json.loads(_invoke("--predictor", "roofline", "--balanced", "--per-class", "1",
                               "--seed", "3", "--format", "json").stdout)
    assert again["unmatched"] == data["unmatched"] and again["n"] == data["n"]
    limited = json.loads(_invoke("--predictor", "roofline", "--limit", "2", "--format",
                                 "json").stdout)
    assert limited["rows"] == 2


def test_cli_table_output():
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, [*BASE, "--predictor", "roofline"])
    assert result.exit_code == 0, result.output
    assert "bal acc" in result.stdout and "4 unmatched row(s)" in result.stdout
    assert "nosuch-cuda:ghost" in result.stdout  # printed as text, no emoji markup


def test_cli_report_files(tmp_path):
    out = tmp_path / "report"
    result = _invoke("--predictor", "roofline", "--report", str(out))
    assert result.exit_code == 0, result.output
    for name in ("report.md", "report.html", "confusion.png", "roofline.png",
                 "predictions.csv", "summary.json"):
        assert (out / name).is_file(), name
    for png in ("confusion.png", "roofline.png"):
        data = (out / png).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000
    md = (out / "report.md").read_text()
    assert "| all | 10 |" in md and "roofline.png" in md and "Unmatched rows (4)" in md
    assert "<img src='confusion.png'" in (out / "report.html").read_text()
    lines = (out / "predictions.csv").read_text().splitlines()
    assert len(lines) == 15  # header + 14 rows


@pytest.mark.parametrize(("args", "needle"), [
    (["--manifest", "nope.csv"], "no such file"),
    (["--gpu", "rtx9999"], "unknown GPU"),
    (["--sources", "/nonexistent/src"], "no such folder"),
    (["--predictor", "oracle"], "unknown predictor"),
    (["--limit", "0"], "--limit"),
    (["--define", "N"], "malformed --define"),
])
def test_cli_bad_input_is_one_line(args, needle):
    result = _invoke(*args)
    assert result.exit_code == 2
    assert needle in result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert "Traceback" not in result.output


def test_cli_bad_manifest_columns_is_one_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("target,kernel\nx-cuda,k\n")
    result = CliRunner().invoke(app, ["evaluate", "--manifest", str(bad), "--sources",
                                      str(SOURCES), "--gpu", "rtx3080"])
    assert result.exit_code == 2
    assert result.stderr.startswith("roofcast: error: manifest")
    assert "missing column(s)" in result.stderr and result.stderr.count("\n") == 1


def test_coverage_bench_lists_misses_with_reasons(tmp_path):
    misses = tmp_path / "misses.txt"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "coverage.py"), "--manifest", str(MANIFEST),
         "--sources", str(SOURCES), "--misses", str(misses), "--json"],
        capture_output=True, text=True, check=True,
    )
    data = json.loads(proc.stdout)
    assert data["rows"] == 14 and data["strict_found"] == 9 and data["lenient_found"] == 10
    text = misses.read_text()
    assert "missing_kernel: not in any source file" in text
    assert "pragma line off by <= 2" in text
    assert "target folder not analyzable" in text
