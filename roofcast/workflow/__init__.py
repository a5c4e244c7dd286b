"""The developer workflow around `analyze`: pre-commit hook, baseline diff, SARIF, roofline
plots and the cross-GPU matrix. Each module reads report dicts (the JSON contract) only."""
