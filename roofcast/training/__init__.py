"""Training the learned baseline (`roofcast train`): features of the manifest's kernels,
analysed as `evaluate` analyses them (`fit`), and the textbook check every model is scored
on (`textbook_check`). Above the evaluation layer, which it reuses; the predictor it trains
(`roofcast.predictors.learned`) reads the model file and never imports this."""
