"""The learned baseline: gradient-boosted trees that predict each class's true arithmetic
intensity (log10 ops per DRAM byte) from static features, then apply any GPU's balance points.

The model is stored as plain arrays in gzipped JSON (not a pickle): it loads in any
environment with numpy, offline, and its version stamp says what produced it.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from roofcast.gpu_specs import GPU
from roofcast.predictors.base import LaunchContext, Verdict
from roofcast.predictors.learned_features import EPS_AI, FEATURE_NAMES, kernel_features

MODEL_FORMAT = 1
MODEL_CLASSES = ("sp", "dp", "int")
_LABEL = {"sp": "SP", "dp": "DP", "int": "INT"}
DEFAULT_MODEL = "baseline.json.gz"


def packaged_model_path() -> Path:
    return Path(str(resources.files("roofcast.predictors").joinpath("models", DEFAULT_MODEL)))


@dataclass
class Forest:
    """Every tree of every bag of one class, padded to one node count and stacked, so that a
    prediction is a few array operations over all trees at once (not a Python loop per tree).

    The prediction is the bags' mean of `init + rate * sum(tree values)`, which equals
    `offset + sum(weight_t * value_t)` with the bags' mean init and weight rate / n_bags."""

    offset: float
    weight: np.ndarray  # (trees,)
    left: np.ndarray  # (trees, nodes); -1 at leaves
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray

    @classmethod
    def from_bags(cls, bags: list[dict]) -> Forest:
        trees = [(b["rate"] / len(bags), t) for b in bags for t in b["trees"]]
        width = max(len(t["left"]) for _, t in trees)

        def stack(key: str, fill: float, dtype: type) -> np.ndarray:
            out = np.full((len(trees), width), fill, dtype=dtype)
            for i, (_, tree) in enumerate(trees):
                out[i, : len(tree[key])] = tree[key]
            return out

        return cls(
            offset=float(np.mean([b["init"] for b in bags])),
            weight=np.array([w for w, _ in trees]),
            left=stack("left", -1, np.int64),
            right=stack("right", -1, np.int64),
            feature=np.maximum(stack("feature", 0, np.int64), 0),
            threshold=stack("threshold", 0.0, float),
            value=stack("value", 0.0, float),
        )

    def predict(self, X: np.ndarray) -> np.ndarray:
        rows = np.arange(len(self.weight))
        node = np.zeros((len(X), len(self.weight)), dtype=np.int64)
        while True:  # one level of every tree per pass; leaves have no children
            features = self.feature[rows, node]  # (samples, trees)
            go_left = np.take_along_axis(X, features, axis=1) <= self.threshold[rows, node]
            child = np.where(go_left, self.left[rows, node], self.right[rows, node])
            if (child < 0).all():
                break
            node = np.where(child < 0, node, child)
        return self.offset + self.value[rows, node] @ self.weight


class LearnedPredictor:
    """`baseline`: predicted true intensities vs the chosen GPU's balance points."""

    name = "baseline"

    def __init__(self, model: dict) -> None:
        if model.get("format") != MODEL_FORMAT:
            raise ValueError(f"model format {model.get('format')} is not {MODEL_FORMAT}; retrain")
        if tuple(model["feature_names"]) != FEATURE_NAMES:
            raise ValueError(
                "model features differ from this roofcast's; retrain with `roofcast train`"
            )
        self.model = model
        self.margin = float(model["margin"])
        self.sigma = float(model.get("residual_sigma", 0.5))
        self.forests = {cls: Forest.from_bags(model["models"][cls]) for cls in MODEL_CLASSES}

    @classmethod
    def load(cls, path: Path | str | None = None) -> LearnedPredictor:
        target = Path(path) if path else packaged_model_path()
        if not target.is_file():
            raise FileNotFoundError(f"no learned model at {target}; run `roofcast train`")
        opener = gzip.open if target.suffix == ".gz" else open
        with opener(target, "rt", encoding="utf-8") as handle:
            return cls(json.load(handle))

    def predict_log_ai(self, X: np.ndarray) -> dict[str, np.ndarray]:
        return {c: self.forests[c].predict(X) for c in MODEL_CLASSES}

    def predict(self, kernel, gpu: GPU, context: LaunchContext | None = None) -> Verdict:
        return self.predict_many([kernel], gpu, context)[0]

    def predict_many(
        self, kernels: list, gpu: GPU, context: LaunchContext | None = None
    ) -> list[Verdict]:
        """One pass of the forests over all kernels: per-call overhead paid once."""
        if not kernels:
            return []
        x = np.nan_to_num(
            np.asarray([kernel_features(k, gpu, context) for k in kernels], dtype=float),
            posinf=30.0,
            neginf=-30.0,
        )
        logs = self.predict_log_ai(x)
        return [
            self.verdict({c: float(v[i]) for c, v in logs.items()}, gpu, k.resolved.intensities)
            for i, k in enumerate(kernels)
        ]

    def verdict(self, logs: dict[str, float], gpu: GPU, static: dict[str, float]) -> Verdict:
        balance = gpu.balance_points
        gaps = {
            c: logs[c] - math.log10(balance[c]) - self.margin for c in MODEL_CLASSES if c in balance
        }
        top = max(gaps, key=lambda c: gaps[c])
        predicted = {c: max(10**v - EPS_AI, 0.0) for c, v in logs.items()}
        bound = "compute" if gaps[top] >= 0 else "bandwidth"
        confidence = 0.5 * (1 + math.erf(abs(gaps[top]) / (self.sigma * math.sqrt(2))))
        sign = ">=" if bound == "compute" else "<"
        reason = (
            f"learned: {_LABEL[top]} AI ~{predicted[top]:.3g} (static {static.get(top, 0):.3g}) "
            f"{sign} balance {balance[top]:.3g}"
        )
        return Verdict(
            bound,
            reason,
            self.name,
            confidence=round(confidence, 3),
            intensities={c: predicted[c] for c in MODEL_CLASSES},
            details={"class": top, "log_gap": gaps[top]},
        )
