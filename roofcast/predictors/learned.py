"""The default predictor: the roofline rule on static intensities, with a bounded learned
correction per class.

Physics first: each class's static intensity (ops per counted byte) is the starting point.
Gradient-boosted trees predict how far the true intensity sits from it, in decades
(log10 true AI - log10 static AI), from what the kernel does (structure, reuse, problem
size, working set over the target GPU's L2). The correction is clipped to a range chosen by
cross-validation, and it never decreases when the static intensity of its class grows
(a monotone constraint), so the learned part can nudge a verdict near the balance point but
cannot overturn a kernel that is far from it. The corrected intensities are then compared
with the chosen GPU's balance points, so RTX 3080 ground truth serves any GPU.

The model is stored as plain arrays in gzipped JSON (not a pickle): it loads in any
environment with numpy, offline, and its version stamp says what produced it.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from roofcast.gpu_specs import GPU
from roofcast.gpu_specs.opclasses import LABEL_CLASSES, RULE_CLASSES
from roofcast.predictors.base import Item, Verdict, check_items
from roofcast.predictors.calibration import Calibration
from roofcast.predictors.forest import Forest
from roofcast.predictors.learned_features import EPS_AI, FEATURE_NAMES, kernel_features
from roofcast.predictors.roofline import roofline_verdict

if TYPE_CHECKING:
    pass

MODEL_FORMAT = 2
#: the classes the model predicts an intensity for, in its files' order
MODEL_CLASSES = LABEL_CLASSES
DEFAULT_MODEL = "baseline.json.gz"
#: the model trained on compile mode's counts (`train --compile`): SASS-counted FLOPs and
#: int ops err differently from source counts, so their corrections are learned apart
COMPILED_MODEL = "baseline-compiled.json.gz"


def packaged_model_path(compiled: bool = False) -> Path:
    name = COMPILED_MODEL if compiled else DEFAULT_MODEL
    return Path(str(resources.files("roofcast.predictors").joinpath("models", name)))


@lru_cache(maxsize=4)
def _read_model(target: Path, mtime_ns: int, size: int) -> LearnedPredictor:
    """The predictor in `target`; the file's time and size make a rewritten model a new key."""
    opener = gzip.open if target.suffix == ".gz" else open
    with opener(target, "rt", encoding="utf-8") as handle:
        return LearnedPredictor(json.load(handle))


#: rows per forest pass (see `LearnedPredictor.predict_corrections`)
PREDICT_CHUNK = 128


def correct(
    static: dict[str, float], corrections: dict[str, float], lower: float, upper: float
) -> dict[str, float]:
    """Static intensities times 10**(correction clipped to [-lower, +upper]), per class.

    A class with no correction (HP: no ground truth to learn it from) keeps its static value;
    so does an infinite or zero intensity (no bytes, or no ops of that class)."""
    out = dict(static)
    for cls, delta in corrections.items():
        value = static.get(cls, 0.0)
        if value > 0 and math.isfinite(value):
            out[cls] = value * 10 ** min(max(delta, -lower), upper)
    return out


class LearnedPredictor:
    """`baseline`: static intensities, corrected within a bound, vs the GPU's balance points."""

    name = "baseline"

    def __init__(self, model: dict) -> None:
        if model.get("format") != MODEL_FORMAT:
            raise ValueError(f"model format {model.get('format')} is not {MODEL_FORMAT}; retrain")
        if tuple(model["feature_names"]) != FEATURE_NAMES:
            raise ValueError(
                "model features differ from this roofcast's; retrain with `roofcast train`"
            )
        self.model = model
        self.lower = float(model["bounds"]["lower"])
        self.upper = float(model["bounds"]["upper"])
        self.calibration = Calibration.from_json(model["calibration"])
        self.forest = Forest.from_classes([model["models"][cls] for cls in MODEL_CLASSES])

    @classmethod
    def load(cls, path: Path | str | None = None) -> LearnedPredictor:
        """The model in `path` (default: the packaged one), read once while the file stays
        the same: every `analyze_paths` asks again, and reading the file delays the start
        of every run. A predictor is never modified after it is built, so callers share it."""
        target = Path(path) if path else packaged_model_path()
        if not target.is_file():
            raise FileNotFoundError(f"no learned model at {target}; run `roofcast train`")
        stat = target.stat()
        predictor = _read_model(target.resolve(), stat.st_mtime_ns, stat.st_size)
        compiled = packaged_model_path(compiled=True)
        if path is None and compiled.is_file():
            # the packaged pair: kernels counted from SASS take the compiled-counts model
            return ModeAwarePredictor(predictor, compiled)
        return predictor

    def predict_corrections(self, X: np.ndarray) -> dict[str, np.ndarray]:
        """Unclipped corrections (decades) per class. Rows in chunks: the forest's working
        arrays are rows x trees, and beyond a hundred or so rows they outgrow the caches."""
        chunks = [
            self.forest.predict(X[i : i + PREDICT_CHUNK]) for i in range(0, len(X), PREDICT_CHUNK)
        ]
        predicted = np.concatenate(chunks) if chunks else np.zeros((0, len(MODEL_CLASSES)))
        return {c: predicted[:, i] for i, c in enumerate(MODEL_CLASSES)}

    def predict(self, items: Sequence[Item], gpu: GPU) -> list[Verdict]:
        """One pass of the forests over all kernels: per-call overhead paid once."""
        items = check_items(items, gpu)
        if not items:
            return []
        x = np.nan_to_num(
            np.asarray([kernel_features(k, gpu, context) for k, context in items], dtype=float),
            posinf=30.0,
            neginf=-30.0,
        )
        deltas = self.predict_corrections(x)
        return [
            self.verdict(
                k.resolved.intensities,
                {c: float(v[i]) for c, v in deltas.items()},
                gpu,
                moves_bytes=k.resolved.bytes > 0,
            )
            for i, (k, _) in enumerate(items)
        ]

    def verdict(
        self,
        static: dict[str, float],
        corrections: dict[str, float],
        gpu: GPU,
        moves_bytes: bool = True,
    ) -> Verdict:
        """The roofline rule on the corrected intensities; the reason names the corrected
        figure it compared (the one the decision used) and the static one beside it."""
        corrected = correct(static, corrections, self.lower, self.upper)
        verdict = roofline_verdict(corrected, gpu, self.name, moves_bytes=moves_bytes)
        top = verdict.details.get("class")
        if top in RULE_CLASSES:
            ratio = float(cast(float, verdict.details["ratio"]))
            gap = math.log10(ratio) if ratio > 0 else -math.inf
            applied = _log_ratio(corrected[top], static.get(top, 0.0))
            if top in corrections:
                verdict.reason += (
                    f" (static {_shown(static.get(top, 0.0))}, learned correction "
                    f"{applied:+.2f} decades)"
                )
            else:
                verdict.reason += " (static; no learned correction for this class)"
            verdict.confidence = round(float(self.calibration.confidence(gap)), 3)
            verdict.details.update({"log_gap": gap, "correction": applied})
        verdict.details["static"] = {c: static.get(c, 0.0) for c in RULE_CLASSES}
        verdict.intensities = {c: corrected.get(c, 0.0) for c in RULE_CLASSES}
        return verdict


def _log_ratio(corrected: float, static: float) -> float:
    if static > 0 and math.isfinite(static) and corrected > 0:
        return math.log10(corrected / static)
    return 0.0


def _shown(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.3g}"


def static_log_intensity(value: float) -> float:
    """log10 of a static intensity as the features and training targets write it."""
    return math.log10(max(value, 0.0) + EPS_AI) if math.isfinite(value) else 3.0


class ModeAwarePredictor(LearnedPredictor):
    """The packaged source-counts model, with the compiled-counts one for kernels that
    compile mode counted from SASS (`counted_from == "sass"`); each verdict's details name
    the model that corrected it."""

    def __init__(self, source: LearnedPredictor, compiled: Path) -> None:
        self.__dict__.update(source.__dict__)
        self.compiled_path = compiled

    @property
    def compiled(self) -> LearnedPredictor:
        """The compiled-counts model, read when a kernel counted from SASS first needs it
        (most runs count from source: the hook's start does not pay for it)."""
        stat = self.compiled_path.stat()
        return _read_model(self.compiled_path.resolve(), stat.st_mtime_ns, stat.st_size)

    def predict(self, items: Sequence[Item], gpu: GPU) -> list[Verdict]:
        items = check_items(items, gpu)
        from_sass = [i for i, (k, _) in enumerate(items) if k.features.counted_from == "sass"]
        if not from_sass:
            verdicts = super().predict(items, gpu)
            for verdict in verdicts:
                verdict.details["model"] = "source counts"
            return verdicts
        chosen = set(from_sass)
        rest = [i for i in range(len(items)) if i not in chosen]
        out: list[Verdict | None] = [None] * len(items)
        for indices, model, label in (
            (from_sass, self.compiled, "compiled counts"),
            (rest, None, "source counts"),
        ):
            if not indices:
                continue
            subset = [items[i] for i in indices]
            found = (
                model.predict(subset, gpu)
                if model is not None
                else LearnedPredictor.predict(self, subset, gpu)
            )
            for i, verdict in zip(indices, found, strict=True):
                verdict.details["model"] = label
                out[i] = verdict
        return [cast(Verdict, v) for v in out]

