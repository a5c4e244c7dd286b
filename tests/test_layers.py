"""The package graph is a DAG of layers and nothing below the CLI imports it (pyproject's
`[tool.importlinter]`, ARCHITECTURE.md), checked by the real `lint-imports`."""

from __future__ import annotations

from pathlib import Path

import pytest
from layering import lint_imports, stage


def test_the_package_keeps_its_layers(tmp_path: Path) -> None:
    done = lint_imports(stage(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


LAYERS = "roofcast layers, top to bottom"
BELOW_CLI = "nothing below the CLI imports it"


def broken(stdout: str) -> set[str]:
    return {line[: -len(" BROKEN")] for line in stdout.splitlines() if line.endswith(" BROKEN")}


@pytest.mark.parametrize(
    ("module", "back_edge", "contracts"),
    [
        # a lazy import, inside a function, counts as much as one at the top
        ("features/numeric.py", "def _cli():\n    import roofcast.cli.main\n", {LAYERS, BELOW_CLI}),
        ("gpu_specs/__init__.py", "def _exit():\n    import typer\n", {BELOW_CLI}),
        ("predictors/base.py", "from roofcast.pipeline import analyze_paths\n", {LAYERS}),
        ("analyzer/model.py", "def _f():\n    from roofcast.features import vector\n", {LAYERS}),
    ],
)
def test_a_back_edge_breaks_the_contract(
    tmp_path: Path, module: str, back_edge: str, contracts: set[str]
) -> None:
    staged = stage(tmp_path)
    path = staged / "roofcast" / module
    path.write_text(path.read_text() + "\n\n" + back_edge)
    done = lint_imports(staged)
    assert done.returncode != 0
    assert broken(done.stdout) == contracts, done.stdout
