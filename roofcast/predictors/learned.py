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
from functools import lru_cache
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
    """Every tree of every bag of every class, laid end to end in flat node arrays, so that
    a prediction is `depth` passes of a few array operations over all trees at once.

    Leaves point to themselves, so every tree can take the same number of steps. A class's
    prediction is the bags' mean of `init + rate * sum(tree values)`, which equals
    `offset + sum(weight_t * value_t)` with the bags' mean init and weight rate / n_bags.
    A class's trees lie together, so that sum is one `reduceat`: no BLAS call, whose worker
    threads would spin on a core the analysis needs."""

    roots: np.ndarray  # (trees,) flat index of each tree's root
    left: np.ndarray  # (nodes,) flat index of the left child; itself at a leaf
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray
    weight: np.ndarray  # (trees,)
    first_tree: np.ndarray  # (classes,) index of each class's first tree
    offset: np.ndarray  # (classes,)
    depth: int

    @classmethod
    def from_classes(cls, models: list[list[dict]]) -> Forest:
        """One entry of `models` per class: its bags, each {init, rate, trees}."""
        left, right, feature, threshold, value, roots, weights = [], [], [], [], [], [], []
        first_tree = []
        base = 0
        for bags in models:
            first_tree.append(len(roots))
            for bag in bags:
                for tree in bag["trees"]:
                    own = np.asarray(tree["left"], dtype=np.int64)
                    flat = np.arange(base, base + len(own))
                    leaf = own < 0
                    left.append(np.where(leaf, flat, base + own))
                    right.append(np.where(leaf, flat, base + np.asarray(tree["right"])))
                    feature.append(np.maximum(np.asarray(tree["feature"], dtype=np.int64), 0))
                    threshold.append(np.asarray(tree["threshold"], dtype=float))
                    value.append(np.asarray(tree["value"], dtype=float))
                    roots.append(base)
                    weights.append(bag["rate"] / len(bags))
                    base += len(own)
        starts, lefts, rights = np.asarray(roots), np.concatenate(left), np.concatenate(right)
        return cls(
            roots=starts,
            left=lefts,
            right=rights,
            feature=np.concatenate(feature),
            threshold=np.concatenate(threshold),
            value=np.concatenate(value),
            weight=np.asarray(weights, dtype=float),
            first_tree=np.asarray(first_tree),
            offset=np.array([np.mean([b["init"] for b in bags]) for bags in models]),
            depth=_longest_path(starts, lefts, rights),
        )

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(samples, classes) predictions for (samples, features) inputs."""
        position = np.broadcast_to(self.roots, (len(X), len(self.roots)))
        for _ in range(self.depth):
            go_left = (
                np.take_along_axis(X, self.feature[position], axis=1) <= self.threshold[position]
            )
            position = np.where(go_left, self.left[position], self.right[position])
        weighted = self.value[position] * self.weight
        return self.offset + np.add.reduceat(weighted, self.first_tree, axis=1)


def _longest_path(roots: np.ndarray, left: np.ndarray, right: np.ndarray) -> int:
    """Levels from a root to the deepest leaf over all trees (leaves point to themselves)."""
    level, depth = roots, 0
    while True:
        inner = level[left[level] != level]
        if not len(inner):
            return depth
        level = np.concatenate([left[inner], right[inner]])
        depth += 1


@lru_cache(maxsize=4)
def _read_model(target: Path, mtime_ns: int, size: int) -> LearnedPredictor:
    """The predictor in `target`; the file's time and size make a rewritten model a new key."""
    opener = gzip.open if target.suffix == ".gz" else open
    with opener(target, "rt", encoding="utf-8") as handle:
        return LearnedPredictor(json.load(handle))


#: rows per forest pass (see `LearnedPredictor.predict_log_ai`)
PREDICT_CHUNK = 128


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
        self.forest = Forest.from_classes([model["models"][cls] for cls in MODEL_CLASSES])

    @classmethod
    def load(cls, path: Path | str | None = None) -> LearnedPredictor:
        """The model in `path` (default: the packaged one), read once while the file stays
        the same: every `analyze_paths` asks again, and reading costs 50 ms before any work
        can start. A predictor is never modified after it is built, so callers share it."""
        target = Path(path) if path else packaged_model_path()
        if not target.is_file():
            raise FileNotFoundError(f"no learned model at {target}; run `roofcast train`")
        stat = target.stat()
        return _read_model(target.resolve(), stat.st_mtime_ns, stat.st_size)

    def predict_log_ai(self, X: np.ndarray) -> dict[str, np.ndarray]:
        """Rows in chunks: the forest's working arrays are rows x trees, and beyond a hundred
        or so rows they outgrow the caches (3,400 rows at once take twice as long as in 100s)."""
        chunks = [
            self.forest.predict(X[i : i + PREDICT_CHUNK]) for i in range(0, len(X), PREDICT_CHUNK)
        ]
        predicted = np.concatenate(chunks) if chunks else np.zeros((0, len(MODEL_CLASSES)))
        return {c: predicted[:, i] for i, c in enumerate(MODEL_CLASSES)}

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
