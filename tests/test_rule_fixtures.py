"""Every counting rule of docs/counting.md has an id and a fixture, as a linter's rules do.

A fixture is a small kernel under tests/data/rules/ named after its rule (C2.cu, U3.cpp)
with a sidecar of hand counts in the corpus's format, or, for a rule about the command line,
the preprocessor or the walk's limits, a test marked `@pytest.mark.rule("ID")`. Warnings
and notes that apply a rule name its id.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from roofcast.features.resolve import resolve_counts
from roofcast.gpu_specs import load_gpu
from roofcast.kernels.corpus import CorpusEntry, bound_checks, entry_checks, load_corpus

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor

REPO = Path(__file__).resolve().parents[1]
RULES_DIR = Path(__file__).resolve().parent / "data" / "rules"
#: a rule's id opens its bullet: `- **C2** ...` or `- **U1 CUDA**: ...`
RULE_ID = re.compile(r"^- \*\*([A-Z]\d+)\b", re.MULTILINE)
MARKED = re.compile(r"mark\.rule\(([^)]*)\)")
ENTRIES = load_corpus(RULES_DIR)


def documented_ids() -> list[str]:
    return RULE_ID.findall((REPO / "docs" / "counting.md").read_text("utf-8"))


def fixture_ids() -> set[str]:
    return {p.stem for p in RULES_DIR.glob("*/*") if p.suffix in (".cu", ".cpp")}


def marked_ids() -> set[str]:
    ids: set[str] = set()
    for path in Path(__file__).resolve().parent.glob("test_*.py"):
        for args in MARKED.findall(path.read_text("utf-8")):
            ids.update(re.findall(r"[\"']([A-Z]\d+)[\"']", args))
    return ids


def test_every_rule_has_a_unique_id() -> None:
    ids = documented_ids()
    assert len(ids) >= 30
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_rule_id_has_a_fixture_or_a_marked_test() -> None:
    ids = set(documented_ids())
    assert sorted(ids - fixture_ids() - marked_ids()) == []


def test_every_fixture_and_marker_names_a_documented_rule() -> None:
    ids = set(documented_ids())
    assert sorted((fixture_ids() | marked_ids()) - ids) == []


def test_every_fixture_has_hand_counts() -> None:
    stems = {Path(e.source).stem for e in ENTRIES}
    assert stems == fixture_ids()


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{e.source.stem}:{e.name}" for e in ENTRIES])
def test_fixture_counts_match_the_hand_counts(entry: CorpusEntry) -> None:
    checks = entry_checks(entry)
    assert checks is not None, f"{entry.id}: kernel not found"
    assert [c.describe() for c in checks if not c.ok] == []
    verdicts, _ = bound_checks(entry)
    assert [c.describe() for c in verdicts if not c.ok] == []


def _one(tmp_path: Path, source: str, suffix: str = ".cu"):
    path = tmp_path / f"kernel{suffix}"
    path.write_text(textwrap.dedent(source))
    report = analyze_paths([path], load_gpu("a100"), {}, RooflinePredictor())
    (kernel,) = report.kernels
    return kernel


def test_notes_name_their_rule() -> None:
    by_name = {}
    for folder in ("cuda", "openmp"):
        for path in (RULES_DIR / folder).iterdir():
            if path.suffix in (".cu", ".cpp"):
                report = analyze_paths([path], load_gpu("a100"), {}, RooflinePredictor())
                by_name.update({k.ir.name: k for k in report.kernels})
    assert any(n.endswith("[A1]") for n in by_name["a1_unknown_size"].features.notes)
    assert by_name["u3_serial"].features.notes[0].endswith("[U3]")


def test_warnings_name_their_rule(tmp_path: Path) -> None:
    symbols = _one(tmp_path, (RULES_DIR / "cuda" / "C6.cu").read_text("utf-8"))
    clamped = resolve_counts(symbols.features, {"n": "-5"})  # n trips of a loop: below 0
    assert clamped.warnings() and all(w.endswith("[D3]") for w in clamped.warnings())
    deep = "if (n > 0) {" * 70 + "y[0] = 1.0f;" + "}" * 70
    kernel = _one(tmp_path, f"__global__ void deep(float* y, int n) {{ {deep} }}\n")
    assert [w for w in kernel.features.warnings if "[N2]: approximated" in w]
