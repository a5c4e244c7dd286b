"""Label and count metrics against values computed by hand, and balanced sampling."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from roofcast.evaluation.manifest import load_manifest
from roofcast.evaluation.metrics import CountPair, count_metrics, label_metrics, log10_error
from roofcast.evaluation.sampling import balanced_sample

DATA = Path(__file__).parent / "data" / "eval"
DEV_CSV = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "gpuflopbench-rtx3080" \
    / "dev.csv"

# Ten rows: 4 compute (2 right, 2 called bandwidth), 6 bandwidth (4 right, 1 called compute,
# 1 unknown). By hand: accuracy 6/10; recalls 2/4 and 4/6; precision(compute) 2/3, so
# F1(compute) = 2*(2/3*1/2)/(2/3+1/2) = 4/7; F1(bandwidth) = 2/3 (precision 4/6, recall 4/6);
# MCC (Gorodkin, unknown as its own predicted class): t = (6, 4, 0), p = (6, 3, 1), c = 6,
# s = 10 -> (60 - 48) / sqrt((100 - 46) * (100 - 52)) = 12 / sqrt(2592).
TRUTH = ["compute"] * 4 + ["bandwidth"] * 6
PRED = ["compute", "compute", "bandwidth", "bandwidth",
        "bandwidth", "bandwidth", "bandwidth", "bandwidth", "compute", "unknown"]


def test_label_metrics_match_hand_computation():
    m = label_metrics(TRUTH, PRED)
    assert m["n"] == 10 and m["unknown"] == 1
    assert m["accuracy"] == pytest.approx(0.6)
    assert m["balanced_accuracy"] == pytest.approx((2 / 4 + 4 / 6) / 2)
    assert m["f1"]["compute"] == pytest.approx(4 / 7)
    assert m["f1"]["bandwidth"] == pytest.approx(2 / 3)
    assert m["mcc"] == pytest.approx(12 / math.sqrt(2592))
    assert m["confusion"] == {"compute": {"compute": 2, "bandwidth": 2},
                              "bandwidth": {"compute": 1, "bandwidth": 4}}


def test_label_metrics_perfect_and_empty():
    perfect = label_metrics(["compute", "bandwidth"], ["compute", "bandwidth"])
    assert perfect["accuracy"] == 1 and perfect["balanced_accuracy"] == 1 and perfect["mcc"] == 1
    empty = label_metrics([], [])
    assert empty["n"] == 0 and empty["accuracy"] is None


def test_balanced_accuracy_ignores_absent_class():
    # only bandwidth rows: balanced accuracy is the bandwidth recall, as scikit-learn's
    m = label_metrics(["bandwidth"] * 4, ["bandwidth", "bandwidth", "bandwidth", "compute"])
    assert m["balanced_accuracy"] == pytest.approx(0.75)


def test_count_metrics_match_hand_computation():
    pairs = [
        CountPair("sp_flops", 200, 100, True),    # log10(201/101) = 0.2989, within 2x
        CountPair("sp_flops", 0, 0, True),        # exact zero
        CountPair("sp_flops", 1000, 99, False),   # log10(1001/100) = 1.0004, not within
        CountPair("dram_bytes", 50, 200, False),  # log10(51/201) -> 0.5956, not within
    ]
    m = count_metrics(pairs)
    e1, e3 = math.log10(201 / 101), math.log10(1001 / 100)
    assert m["sp_flops"]["all"] == {"n": 3, "male": pytest.approx((e1 + e3) / 3),
                                    "median_ale": pytest.approx(e1),
                                    "within_2x": pytest.approx(2 / 3)}
    assert m["sp_flops"]["fully_resolved"] == {"n": 2, "male": pytest.approx(e1 / 2),
                                               "median_ale": pytest.approx(e1 / 2),
                                               "within_2x": 1.0}
    assert m["dram_bytes"]["all"]["male"] == pytest.approx(abs(math.log10(51 / 201)))
    assert m["dram_bytes"]["all"]["within_2x"] == 0.0
    assert m["dp_flops"]["all"] == {"n": 0, "male": None, "median_ale": None, "within_2x": None}


def test_log10_error_is_symmetric():
    assert log10_error(10, 1000) == pytest.approx(log10_error(1000, 10))
    assert log10_error(-5, 0) == 0.0


def _class_counts(rows):
    out: dict[tuple[str, str], int] = {}
    for r in rows:
        out[(r.language, r.label)] = out.get((r.language, r.label), 0) + 1
    return out


def test_balanced_sample_on_fixture_caps_at_smaller_class():
    rows = load_manifest(DATA / "manifest.csv")
    sample = balanced_sample(rows, per_class=85, seed=0)
    counts = _class_counts(sample)
    # fixture: CUDA has 3 compute rows, OMP 2: each class is cut to the smaller one
    assert counts == {("CUDA", "compute"): 3, ("CUDA", "bandwidth"): 3,
                      ("OMP", "compute"): 2, ("OMP", "bandwidth"): 2}
    assert [r.index for r in sample] == sorted(r.index for r in sample)


@pytest.mark.skipif(not DEV_CSV.is_file(), reason="dev.csv not present")
def test_balanced_sample_is_the_papers_340_and_reproducible():
    rows = load_manifest(DEV_CSV)
    first = balanced_sample(rows, seed=7)
    assert len(first) == 340
    assert set(_class_counts(first).values()) == {85}
    again = balanced_sample(rows, seed=7)
    assert [r.index for r in again] == [r.index for r in first]
    other = balanced_sample(rows, seed=8)
    assert [r.index for r in other] != [r.index for r in first]
