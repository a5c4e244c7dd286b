"""The predictors: `baseline` (the default: the rule plus a bounded learned correction) and
`roofline` (the analytic rule alone). `roofcast.registry` finds them, and the LLM, by name;
every verb uses `default_predictor()` unless `--predictor` names another, so `analyze`,
`hook`, `matrix`, `plot` and `evaluate` agree."""

from __future__ import annotations

from roofcast.predictors.base import Item, LaunchContext, Predictor, Verdict

__all__ = ["Item", "LaunchContext", "Predictor", "Verdict", "default_predictor"]


def default_predictor() -> Predictor:
    """The default: the rule with its bounded learned correction when the model ships (and was
    written by this roofcast's feature list), else the rule alone; the verdict names which."""
    try:
        from roofcast.predictors.learned import LearnedPredictor

        return LearnedPredictor.load(None)
    except (ImportError, FileNotFoundError, ValueError):
        from roofcast.predictors.roofline import RooflinePredictor

        return RooflinePredictor()
