"""The default predictor (rule + bounded learned correction): exported trees equal
scikit-learn's, corrections stay in their bound and are monotone in the static intensity,
reasons state the figure the verdict used, verdicts follow the GPU's balance points, the
packaged model loads offline, and `roofcast train` retrains reproducibly."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.calibration import fit_calibration
from roofcast.predictors.learned import LearnedPredictor, packaged_model_path
from roofcast.predictors.learned_features import FEATURE_NAMES
from roofcast.training import fit as training
from roofcast.training.fit import (
    SETTINGS,
    Dataset,
    Settings,
    export,
    save,
    static_log_ai,
    train,
)

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "tests" / "data" / "eval"


def _synthetic(n: int = 240, seed: int = 3) -> Dataset:
    """Static intensities plus a residual that the first feature decides: a learnable,
    checkable target. The int class's truth is its static AI moved by 0.8 * x0 decades."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    static = static_log_ai(X)
    Y = static + np.stack([0.0 * X[:, 0], 0.0 * X[:, 0], 0.8 * X[:, 0]], axis=1)
    labels = ((Y - np.log10([32.97, 0.515, 16.49])) >= 0).any(axis=1).astype(int)
    groups = np.array([f"fam{i % 12}" for i in range(n)])
    languages = np.array(["CUDA" if i % 2 else "OMP" for i in range(n)])
    return Dataset(X, Y, labels, groups, languages)


def _model(data: Dataset, settings: Settings = SETTINGS, seed: int = 0) -> dict:
    fitted = training.fit(data.X, data.Y, data.labels, settings, seed)
    gaps = training.corrected_gaps(
        data.X,
        training.predict(fitted, data.X),
        training.log_balance(load_gpu("rtx3080")),
        settings,
    )
    right = (gaps >= 0).astype(int) == data.labels
    calibration = fit_calibration(gaps, right).to_json()
    return export(fitted, settings, {"manifest": "synthetic"}, None, calibration)


def test_exported_trees_reproduce_sklearn_predictions(tmp_path):
    data = _synthetic()
    fitted = training.fit(data.X, data.Y, data.labels, SETTINGS, 0)
    reference = training.predict(fitted, data.X)
    path = tmp_path / "m.json.gz"
    save(_model(data), path)
    got = LearnedPredictor.load(path).predict_corrections(data.X)
    for i, cls in enumerate(("sp", "dp", "int")):
        np.testing.assert_allclose(got[cls], reference[:, i], rtol=1e-6, atol=1e-6)


def test_a_model_file_is_read_once_until_it_is_rewritten(tmp_path):
    """`analyze_paths` loads the default model on every call: the same file gives the same
    predictor, a retrained one at the same path is read again."""
    import os

    data = _synthetic()
    path = tmp_path / "m.json.gz"
    save(_model(data), path)
    first = LearnedPredictor.load(path)
    assert LearnedPredictor.load(str(path)) is first
    save(_model(_synthetic(seed=9)), path)
    os.utime(path, ns=(1, 1))  # its time differs from the first write's on any clock
    again = LearnedPredictor.load(path)
    assert again is not first
    assert not np.allclose(
        again.predict_corrections(data.X)["int"], first.predict_corrections(data.X)["int"]
    )


def test_training_is_reproducible_and_learns_the_correction():
    data = _synthetic()
    gpu = load_gpu("rtx3080")
    first = train(data, gpu, seed=1, run_cv=True, source="synthetic", textbook=False)
    second = train(data, gpu, seed=1, run_cv=False, source="synthetic", textbook=False)
    assert first["models"] == second["models"]  # same seed, same trees
    cv = first["cross_validation"]
    # the int class's truth moves with x0, which the static rule cannot see
    assert cv["learned"]["all"]["balanced_accuracy"] > cv["roofline"]["all"]["balanced_accuracy"]
    assert first["feature_names"] == list(FEATURE_NAMES)
    assert len(cv["reliability"]) == 5 and 0.0 <= cv["ece"] <= 0.5


def test_corrections_never_leave_their_bound():
    """A correction far outside the bound moves the intensity by the bound, no further."""
    model = LearnedPredictor.load()
    static = {"sp": 100.0, "dp": 0.0, "hp": 0.0, "int": 1.0}
    low = model.verdict(static, {"sp": -9.0, "dp": 0.0, "int": 0.0}, load_gpu("a100"))
    high = model.verdict(static, {"sp": 9.0, "dp": 0.0, "int": 9.0}, load_gpu("a100"))
    assert low.intensities["sp"] == pytest.approx(100.0 * 10**-model.lower)
    assert high.intensities["sp"] == pytest.approx(100.0 * 10**model.upper)
    assert high.intensities["int"] == pytest.approx(10**model.upper)
    assert 0.0 <= model.lower <= 1.0 and 0.0 < model.upper <= 3.0


def test_correction_is_monotone_in_its_own_static_intensity():
    """Raising a class's static intensity (all else equal) never lowers its corrected one."""
    model = LearnedPredictor.load()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, len(FEATURE_NAMES)))
    for cls in ("sp", "dp", "int"):
        column = FEATURE_NAMES.index(f"log_ai_{cls}")
        corrected = []
        for value in np.linspace(-3, 3, 13):
            X[:, column] = value
            delta = np.clip(model.predict_corrections(X)[cls], -model.lower, model.upper)
            corrected.append(value + delta)
        assert np.all(np.diff(np.stack(corrected), axis=0) >= -1e-9), cls


def test_verdict_follows_the_gpu_balance_points():
    model = LearnedPredictor.load()
    dp_heavy = {"sp": 0.0, "dp": 2.0, "hp": 0.0, "int": 0.0}  # DP AI 2 FLOP/B
    none = {"sp": 0.0, "dp": 0.0, "int": 0.0}
    on_3080 = model.verdict(dp_heavy, none, load_gpu("rtx3080"))  # DP balance 0.515
    on_a100 = model.verdict(dp_heavy, none, load_gpu("a100"))  # DP balance 4.78
    assert on_3080.bound == "compute" and on_a100.bound == "bandwidth"
    assert "DP" in on_3080.reason and 0.5 <= on_3080.confidence <= 1.0


def _compared(reason: str) -> tuple[float, str, float]:
    """(intensity, operator, balance) of the comparison a reason states."""
    found = re.search(r"AI ([0-9.e+-]+|inf)\S* [A-Za-z/]* ?(>=|<) balance ([0-9.e+-]+)", reason)
    assert found, reason
    return float(found.group(1)), found.group(2), float(found.group(3))


@pytest.mark.parametrize("gpu", ["a100", "h100", "rtx3080"])
def test_reasons_state_the_figure_the_verdict_used(gpu):
    """The reason compares the corrected intensity with the balance point and that comparison
    is the verdict; the static figure is beside it. No silent margin."""
    target = load_gpu(gpu)
    report = analyze_paths([ROOT / "kernels" / "cuda"], target)
    checked = 0
    for kernel in report.kernels:
        verdict = kernel.verdict
        if verdict.bound == "unknown" or "AI 0" in verdict.reason:
            continue
        ai, op, balance = _compared(verdict.reason)
        assert (op == ">=") == (verdict.bound == "compute"), verdict.reason
        assert (ai >= balance * 0.999) == (verdict.bound == "compute"), verdict.reason
        cls = verdict.details["class"]
        assert verdict.intensities[cls] == pytest.approx(ai, rel=5e-3, abs=1e-3)
        assert f"balance {target.balance_points[cls]:.3g}" in verdict.reason
        assert "static" in verdict.reason
        checked += 1
    assert checked >= 15


def test_a_kernel_that_computes_4096_fmas_per_float_is_compute_bound(tmp_path):
    """The issue's example: one float in, 4096 FMAs, one float out (static AI 1024)."""
    source = tmp_path / "fma.cu"
    source.write_text(
        "__global__ void fma_chain(const float *in, float *out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i >= n) return;\n"
        "  float x = in[i];\n"
        "  for (int k = 0; k < 4096; ++k) x = x * 1.0001f + 0.5f;\n"
        "  out[i] = x;\n"
        "}\n"
    )
    for gpu in ("a100", "h100", "rtx3080"):
        (kernel,) = analyze_paths([source], load_gpu(gpu), {"n": "16777216"}).kernels
        assert kernel.verdict.bound == "compute", (gpu, kernel.verdict.reason)
        assert kernel.verdict.predictor == "baseline"


def test_packaged_model_is_stamped_and_analyze_uses_it():
    with gzip.open(packaged_model_path(), "rt", encoding="utf-8") as handle:
        stamp = json.load(handle)
    assert stamp["format"] == 2 and stamp["trained_on"]["gpu"] == "rtx3080"
    assert stamp["cross_validation"]["learned"]["all"]["n"] > 1000
    assert stamp["cross_validation"]["ece"] <= 0.05
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
    batched = model.predict([(k, None) for k in report.kernels], gpu)
    assert len(batched) == len(report.kernels) >= 30
    for kernel, verdict in zip(report.kernels, batched, strict=True):
        (single,) = model.predict([(kernel, None)], gpu)
        assert (verdict.bound, verdict.reason, verdict.confidence) == (
            single.bound,
            single.reason,
            single.confidence,
        )
        assert kernel.verdict.bound == verdict.bound


def test_the_default_corrects_sass_counted_kernels_with_the_compiled_counts_model(tmp_path):
    """Both packaged models ship; kernels that compile mode counted from SASS take the
    compiled-counts model and the others the source-counts one, in one batch, in order."""
    from roofcast.analyzer.compile import Compiler, find_tools

    from roofcast.predictors import default_predictor
    from roofcast.predictors.learned import ModeAwarePredictor

    assert packaged_model_path(compiled=True).is_file()
    predictor = default_predictor()
    assert isinstance(predictor, ModeAwarePredictor)
    source = tmp_path / "k.cu"
    source.write_text(
        "__global__ void axpy(int n, float a, const float* x, float* y) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = a * x[i] + y[i];\n}\n"
    )
    gpu = load_gpu("a100")
    plain = analyze_paths([source], gpu, {"n": "1048576"}, predictor)
    assert [k.verdict.details["model"] for k in plain.kernels] == ["source counts"]
    if find_tools().missing():
        pytest.skip(f"compile mode tools missing: {find_tools().missing()}")
    compiler = Compiler("sm_80", cache_root=tmp_path / "cache")
    both = analyze_paths([source], gpu, {"n": "1048576"}, predictor, compiler=compiler)
    (kernel,) = both.kernels
    assert kernel.features.counted_from == "sass"
    assert kernel.verdict.details["model"] == "compiled counts"
    # and its verdict is the compiled-counts model's own, not the source model's
    (alone,) = predictor.compiled.predict([(kernel, None)], gpu)
    assert kernel.verdict.intensities == alone.intensities
