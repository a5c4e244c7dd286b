"""SARIF 2.1.0 view of a report, for code-scanning uploads (GitHub, GitLab, IDE viewers).

One result per kernel at its file:line, one stable ruleId per verdict kind, paths relative to
`%SRCROOT%`, and partialFingerprints built from file + kernel name + GPU (not the line), so a
re-upload after an edit updates the same alert instead of opening a new one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path

from roofcast import __version__
from roofcast.workflow.explain import dominant_lines
from roofcast.workflow.view import kernel_views, rel_path

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "roofcastKernel/v1"
INFORMATION_URI = "https://pypi.org/project/roofcast/"


@cache
def rules() -> dict[str, dict]:
    """Verdict kind ("compute", "bandwidth", "unknown") -> rule text, from package data."""
    text = resources.files("roofcast.workflow").joinpath("data/sarif-rules.json").read_text("utf-8")
    return json.loads(text)


def _rule_descriptor(rule: Mapping) -> dict:
    return {
        "id": rule["id"],
        "name": rule["name"],
        "shortDescription": {"text": rule["shortDescription"]},
        "fullDescription": {"text": rule["fullDescription"]},
        "help": {"text": rule["help"], "markdown": rule["help"]},
        "defaultConfiguration": {"level": "note"},
        "properties": {"tags": list(rule["tags"])},
    }


def _json_number(value: float | None) -> float | str | None:
    """JSON has no infinity: a kernel that moves no DRAM bytes reports "inf"."""
    if value is None or math.isinf(value):
        return None if value is None else "inf"
    return round(value, 6)


def _artifact(file: str) -> dict:
    """Relative paths hang off %SRCROOT%; a file outside base_dir keeps an absolute file URI."""
    if file.startswith("/"):
        return {"uri": Path(file).as_uri()}
    return {"uri": file, "uriBaseId": SRCROOT}


def _notification(problem: Mapping, base_dir: Path | str) -> dict:
    """A file roofcast could not read or parse, as a tool notification (not a result)."""
    out: dict = {"level": "warning", "message": {"text": str(problem.get("message", ""))}}
    if problem.get("file"):
        where = _artifact(rel_path(str(problem["file"]), base_dir))
        out["locations"] = [{"physicalLocation": {"artifactLocation": where}}]
    return out


def _dominant_lines(kernel: Mapping, file: str) -> list[dict]:
    """The lines whose arrays move the most DRAM bytes in the launch traffic model, most
    first, each with what it moves (SARIF relatedLocations)."""
    return [
        {
            "id": i,
            "message": {"text": f"{array}: {moved:.4g} DRAM bytes per launch"},
            "physicalLocation": {
                "artifactLocation": _artifact(file),
                "region": {"startLine": line},
            },
        }
        for i, (line, array, moved) in enumerate(dominant_lines(kernel.get("dram_bytes")))
    ]


def fingerprint(key: str, gpu_key: str) -> str:
    """Stable across line moves and re-runs: hash of `relpath::name` and the GPU."""
    return hashlib.sha256(f"{key}|{gpu_key}".encode()).hexdigest()[:32]


def report_to_sarif(report: Mapping, base_dir: Path | str) -> dict:
    """A SARIF 2.1.0 log (one run) for a report dict in the `analyze --format json` contract."""
    gpu = report.get("gpu") or {}
    gpu_key = str(gpu.get("key") or gpu.get("name") or "gpu")
    gpu_name = str(gpu.get("name") or gpu_key)
    table = rules()
    kinds = list(table)
    index = {kind: i for i, kind in enumerate(kinds)}
    results = []
    for view in kernel_views(report, base_dir):
        kind = view.bound if view.bound in table else "unknown"
        rule = table[kind]
        ai = {c: _json_number(v) for c, v in view.intensity.items()}
        text = (
            f"{view.name} is {kind}-bound on {gpu_name}"
            if kind != "unknown"
            else (f"{view.name}: bound unknown on {gpu_name}")
        )
        if view.reason:
            text += f": {view.reason}"
        results.append(
            {
                "ruleId": rule["id"],
                "ruleIndex": index[kind],
                "level": "note",
                "message": {"text": text},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": _artifact(view.file),
                            "region": {"startLine": max(view.line, 1)},
                        },
                        "logicalLocations": [{"name": view.name, "kind": "function"}],
                    }
                ],
                "relatedLocations": _dominant_lines(view.raw, view.file),
                "partialFingerprints": {FINGERPRINT_KEY: fingerprint(view.key, gpu_key)},
                "properties": {
                    "gpu": gpu_key,
                    "bound": view.bound,
                    "language": view.language,
                    "dominantClass": view.dominant,
                    "arithmeticIntensity": ai,
                    "symbols": list(view.raw.get("symbols") or []),
                },
            }
        )
    notifications = [_notification(p, base_dir) for p in report.get("problems") or []]
    run = {
        "tool": {
            "driver": {
                "name": "roofcast",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule_descriptor(table[k]) for k in kinds],
            }
        },
        "automationDetails": {"id": f"roofcast/{gpu_key}/"},
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": notifications,
            }
        ],
        "results": results,
        "properties": {
            "gpu": {
                "key": gpu_key,
                "name": gpu_name,
                "balancePoints": dict(gpu.get("balance_points") or {}),
            }
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
