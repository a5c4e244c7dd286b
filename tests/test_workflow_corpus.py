"""The workflow outputs over our own kernel corpus (kernels/), through the real analyzer."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.workflow import matrix as mx
from roofcast.workflow import plot as rp
from roofcast.workflow.sarif import FINGERPRINT_KEY, report_to_sarif
from roofcast.workflow.view import kernel_views

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "kernels"
GPUS = ("a100", "h100", "rtx3080")


@pytest.fixture(scope="module")
def reports():
    return {g: analyze_paths([CORPUS], load_gpu(g), predictor=RooflinePredictor()).to_json()
            for g in GPUS}


def test_corpus_sarif_is_valid_with_one_result_per_kernel(reports):
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    report = reports["rtx3080"]
    log = report_to_sarif(report, ROOT)
    jsonschema.validate(log, schema)
    results = log["runs"][0]["results"]
    assert len(results) == len(report["kernels"]) >= 30
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert all(u.startswith("kernels/") for u in uris)
    prints = [r["partialFingerprints"][FINGERPRINT_KEY] for r in results]
    assert len(set(prints)) == len(prints)


def test_corpus_matrix_flips_are_explained_by_balance_points(reports):
    m = mx.build([reports[g] for g in GPUS], ROOT, list(GPUS))
    assert all(len(r.verdicts) == len(GPUS) for r in m.rows)
    balance = {g: load_gpu(g).balance_points for g in GPUS}
    for row in m.flipped:
        compute = [g for g in GPUS if row.verdicts[g] == "compute"]
        bandwidth = [g for g in GPUS if row.verdicts[g] == "bandwidth"]
        cls = row.classes[compute[0]]
        ai = row.intensity[compute[0]]
        # same kernel, same counts: the flip is the GPUs' balance points on either side of it
        assert all(ai >= balance[g][cls] for g in compute)
        assert all(ai < balance[g][cls] for g in bandwidth)


def test_corpus_plot_places_every_decided_kernel(reports, tmp_path):
    report = reports["rtx3080"]
    fig = rp.figure(report, load_gpu("rtx3080"), ROOT)
    out = tmp_path / "corpus.svg"
    rp.save(fig, out)
    svg = out.read_text()
    # a kernel with no arithmetic at all (AI 0) has no place on a log axis: it is listed instead
    decided = sorted(
        k["name"] for k in report["kernels"]
        if k["bound"] != "unknown"
        and any(v == "inf" or v > 0 for v in k["arithmetic_intensity"].values())
    )
    points, _ = rp._points(list(kernel_views(report, ROOT)), 1e6)
    assert sorted(n for p in points for n in p.names) == decided
    # kernels on one spot share a label ("a, b, c +2"); every label is drawn
    assert [p.label for p in points if p.label not in svg] == []
