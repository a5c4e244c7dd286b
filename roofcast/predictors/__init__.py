"""Predictors by name: `baseline` (the default: the rule plus a bounded learned correction),
`roofline` (the analytic rule alone), `llm`. Every verb uses `default_predictor()` unless
`--predictor` names another, so `analyze`, `hook`, `matrix`, `plot` and `evaluate` agree."""

from __future__ import annotations

from roofcast.predictors.base import LaunchContext, Predictor, Verdict

__all__ = [
    "LaunchContext",
    "Predictor",
    "Verdict",
    "available",
    "default_predictor",
    "get_predictor",
]


def available() -> list[str]:
    return ["baseline", "roofline", "llm"]


def get_predictor(name: str, **options) -> Predictor:
    """Build a predictor; unknown names raise ValueError with the choices."""
    if name == "roofline":
        from roofcast.predictors.roofline import RooflinePredictor

        return RooflinePredictor()
    if name == "baseline":
        from roofcast.predictors.learned import LearnedPredictor

        return LearnedPredictor.load(options.get("model_path"))
    if name == "llm":
        from roofcast.llm.predictor import LLMPredictor

        return LLMPredictor(**options)
    raise ValueError(f"unknown predictor '{name}' (choose from {', '.join(available())})")


def default_predictor() -> Predictor:
    """The default: the rule with its bounded learned correction when the model ships (and was
    written by this roofcast's feature list), else the rule alone; the verdict names which."""
    try:
        from roofcast.predictors.learned import LearnedPredictor

        return LearnedPredictor.load(None)
    except (ImportError, FileNotFoundError, ValueError):
        from roofcast.predictors.roofline import RooflinePredictor

        return RooflinePredictor()
