"""SARIF 2.1.0 output: valid against the official schema, stable ids and fingerprints."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from workflow_reports import SPECS, report

from roofcast.workflow.sarif import FINGERPRINT_KEY, report_to_sarif

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA.read_text("utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_sarif_validates_against_the_2_1_0_schema(tmp_path, validator):
    rep = report("rtx3080", SPECS, tmp_path)
    rep["problems"] = [{"file": str(tmp_path / "src/broken.cu"), "message": "truncated file"}]
    log = report_to_sarif(rep, tmp_path)
    errors = sorted(validator.iter_errors(log), key=str)
    assert errors == []
    # round-trips through JSON text unchanged (no non-JSON values such as inf)
    assert json.loads(json.dumps(log, allow_nan=False)) == log


def test_schema_rejects_a_broken_log(tmp_path, validator):
    """The validation above can fail: a result without a message is not SARIF."""
    log = report_to_sarif(report("rtx3080", SPECS, tmp_path), tmp_path)
    del log["runs"][0]["results"][0]["message"]
    assert list(validator.iter_errors(log))


def test_one_result_per_kernel_with_rule_per_verdict_and_relative_paths(tmp_path):
    log = report_to_sarif(report("rtx3080", SPECS, tmp_path), tmp_path)
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert set(rules) == {"RC001", "RC002", "RC003"}
    assert all(len(r["help"]["text"]) > 100 for r in rules.values())
    by_name = {r["locations"][0]["logicalLocations"][0]["name"]: r for r in run["results"]}
    assert set(by_name) == {"saxpy", "dp_poly", "sgemm_tile"}
    assert by_name["saxpy"]["ruleId"] == "RC002"  # bandwidth-bound
    assert by_name["dp_poly"]["ruleId"] == "RC001"  # compute-bound on the RTX 3080 (DP)
    for result in run["results"]:
        rule = run["tool"]["driver"]["rules"][result["ruleIndex"]]
        assert rule["id"] == result["ruleId"]
    loc = by_name["sgemm_tile"]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "src/blas.cu", "uriBaseId": "%SRCROOT%"}
    assert loc["region"]["startLine"] == 30
    assert "compute-bound on NVIDIA GeForce RTX 3080" in by_name["sgemm_tile"]["message"]["text"]


def test_fingerprints_survive_line_moves_and_differ_by_kernel_and_gpu(tmp_path):
    def prints(gpu, specs):
        log = report_to_sarif(report(gpu, specs, tmp_path), tmp_path)
        return {r["locations"][0]["logicalLocations"][0]["name"]:
                r["partialFingerprints"][FINGERPRINT_KEY] for r in log["runs"][0]["results"]}

    base = prints("rtx3080", SPECS)
    moved = prints("rtx3080", [(n, f, line + 7, *rest) for n, f, line, *rest in SPECS])
    assert base == moved
    assert len(set(base.values())) == 3
    assert set(prints("a100", SPECS).values()).isdisjoint(base.values())


def test_file_outside_base_dir_keeps_an_absolute_uri(tmp_path, validator):
    rep = report("a100", SPECS[:1], tmp_path / "elsewhere")
    log = report_to_sarif(rep, tmp_path / "project")
    loc = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": (tmp_path / "elsewhere" / "src" / "blas.cu").as_uri()}
    assert list(validator.iter_errors(log)) == []
