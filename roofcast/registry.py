"""Predictors by name, for `--predictor` and `evaluate -o`: `baseline` (the default),
`roofline`, `llm`.

It sits above `roofcast.llm` (the LLM predictor analyses example kernels with the pipeline),
so that `roofcast.predictors` stays below the pipeline and never imports the LLM."""

from __future__ import annotations

from roofcast.predictors import Predictor, default_predictor

__all__ = ["available", "default_predictor", "get_predictor"]


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
