"""The learned baseline: exported trees equal scikit-learn's, verdicts follow the GPU's balance
points, the packaged model loads offline, and `roofcast train` retrains reproducibly."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.learned import LearnedPredictor, packaged_model_path
from roofcast.predictors.learned_features import FEATURE_NAMES
from roofcast.predictors.training import HYPERPARAMETERS, Dataset, export, save, train

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "tests" / "data" / "eval"


def _synthetic(n: int = 240, seed: int = 3) -> Dataset:
    """Features whose first column decides the int intensity: a learnable, checkable target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    Y = np.stack([X[:, 1] - 1.0, X[:, 2] - 2.0, 1.2 + 0.8 * X[:, 0]], axis=1)
    labels = (Y[:, 2] >= math.log10(16.49)).astype(int)
    groups = np.array([f"fam{i % 12}" for i in range(n)])
    languages = np.array(["CUDA" if i % 2 else "OMP" for i in range(n)])
    return Dataset(X, Y, labels, groups, languages)


#: Fewer, larger boosting steps than the shipped model's: the tests below are about the code
#: (export, reproducibility, cross-validation, learning a rule), and each fit of the shipped
#: settings (3 classes x 3 bags x 300 trees) costs seconds of CPU.
SMALL_FOREST = {**HYPERPARAMETERS, "n_estimators": 60, "learning_rate": 0.2}


@pytest.fixture(autouse=True)
def small_forest(monkeypatch):
    from roofcast.predictors import training

    monkeypatch.setattr(training, "HYPERPARAMETERS", SMALL_FOREST)


@pytest.fixture(scope="module")
def fitted_seed0() -> dict:
    """One fit of the synthetic data with seed 0, shared by the tests that need one."""
    from roofcast.predictors import training

    data = _synthetic()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(training, "HYPERPARAMETERS", SMALL_FOREST)
        return training._fit(data.X, data.Y, seed=0)


def test_exported_trees_reproduce_sklearn_predictions(tmp_path, fitted_seed0):
    from roofcast.predictors import training

    data = _synthetic()
    fitted = fitted_seed0
    reference = training._predict(fitted, data.X)
    path = tmp_path / "m.json.gz"
    save(export(fitted, {"manifest": "synthetic"}, None, 0.3), path)
    model = LearnedPredictor.load(path)
    got = model.predict_log_ai(data.X)
    for i, cls in enumerate(("sp", "dp", "int")):
        np.testing.assert_allclose(got[cls], reference[:, i], rtol=1e-5, atol=1e-5)


def test_a_model_file_is_read_once_until_it_is_rewritten(tmp_path, fitted_seed0):
    """`analyze_paths` loads the default model on every call: the same file gives the same
    predictor, a retrained one at the same path is read again."""
    import os

    from roofcast.predictors import training

    data = _synthetic()
    path = tmp_path / "m.json.gz"
    save(export(fitted_seed0, {"manifest": "a"}, None, 0.3), path)
    first = LearnedPredictor.load(path)
    assert LearnedPredictor.load(str(path)) is first
    save(export(training._fit(data.X, data.Y, seed=5), {"manifest": "b"}, None, 0.3), path)
    os.utime(path, ns=(1, 1))  # its time differs from the first write's on any clock
    again = LearnedPredictor.load(path)
    assert again is not first
    assert not np.allclose(again.predict_log_ai(data.X)["sp"], first.predict_log_ai(data.X)["sp"])


def test_training_is_reproducible_and_learns_the_rule(tmp_path):
    data = _synthetic()
    first = train(data, load_gpu("rtx3080"), seed=1, run_cv=True, source="synthetic")
    second = train(data, load_gpu("rtx3080"), seed=1, run_cv=False, source="synthetic")
    assert first["models"] == second["models"]  # same seed, same trees
    assert first["cross_validation"]["learned"]["all"]["balanced_accuracy"] > 0.8  # chance is 0.5
    assert first["feature_names"] == list(FEATURE_NAMES)


def test_verdict_follows_the_gpu_balance_points():
    model = LearnedPredictor.load()
    dp_heavy = {"sp": -3.0, "dp": math.log10(2.0), "int": -1.0}  # DP AI 2 FLOP/B
    on_3080 = model.verdict(dp_heavy, load_gpu("rtx3080"), {})  # DP balance 0.515
    on_a100 = model.verdict(dp_heavy, load_gpu("a100"), {})  # DP balance 4.78
    assert on_3080.bound == "compute" and on_a100.bound == "bandwidth"
    assert "DP" in on_3080.reason and 0.5 <= on_3080.confidence <= 1.0


def test_packaged_model_is_stamped_and_analyze_uses_it():
    with gzip.open(packaged_model_path(), "rt", encoding="utf-8") as handle:
        stamp = json.load(handle)
    assert stamp["format"] == 1 and stamp["trained_on"]["gpu"] == "rtx3080"
    assert stamp["cross_validation"]["learned"]["all"]["n"] > 1000
    report = analyze_paths([ROOT / "kernels" / "cuda" / "streaming.cu"], load_gpu("h100"))
    verdicts = [k.verdict for k in report.kernels]
    assert verdicts and all(
        v.predictor == "baseline" and v.confidence is not None for v in verdicts
    )
    # streaming kernels move bytes and barely compute: bandwidth-bound on any GPU
    assert all(v.bound == "bandwidth" for v in verdicts)


def test_train_cli_refuses_too_little_data(tmp_path):
    out = tmp_path / "model.json.gz"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "roofcast.cli",
            "train",
            "--manifest",
            str(EVAL / "manifest.csv"),
            "--sources",
            str(EVAL / "sources"),
            "-o",
            str(out),
            "--no-cv",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("roofcast: error: too little data")
    assert "Traceback" not in proc.stderr and not out.exists()


def test_train_cli_bad_manifest_is_one_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("target,kernel\nx,y\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "roofcast.cli",
            "train",
            "--manifest",
            str(bad),
            "--sources",
            str(EVAL / "sources"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("gpu", ["rtx3080", "a100", "h100"])
def test_baseline_predictor_runs_on_the_corpus(gpu):
    report = analyze_paths([ROOT / "kernels"], load_gpu(gpu))
    bounds = {k.verdict.bound for k in report.kernels}
    assert bounds <= {"compute", "bandwidth"} and len(report.kernels) >= 30


def test_batched_predictions_equal_one_at_a_time():
    """analyze predicts a whole group in one pass; each verdict must be the single-kernel one."""
    gpu = load_gpu("a100")
    report = analyze_paths([ROOT / "kernels"], gpu)
    model = LearnedPredictor.load()
    batched = model.predict_many(report.kernels, gpu)
    assert len(batched) == len(report.kernels) >= 30
    for kernel, verdict in zip(report.kernels, batched, strict=True):
        single = model.predict(kernel, gpu)
        assert (verdict.bound, verdict.reason, verdict.confidence) == (
            single.bound, single.reason, single.confidence)
        assert kernel.verdict.bound == verdict.bound
