"""Stage roofcast in its installed layout and run import-linter's `lint-imports` on it.

grimp, which lint-imports uses, finds a package's modules by walking the package's folder;
pyproject's package-dir maps analyzer/ to roofcast.analyzer (and features/, llm/, gpu_specs/,
kernels/ likewise), folders an editable install never puts under roofcast/. So the Python
files are copied into `<dir>/roofcast/...` as a wheel would lay them out, and lint-imports
runs with `<dir>` first on PYTHONPATH (ahead of the editable install's finder) and the
contracts of pyproject's `[tool.importlinter]`.

    python tests/layering.py     # stage into a temporary folder, run lint-imports, its exit code
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def stage(target: Path) -> Path:
    """Copy every package's .py files to `target` as installed; returns `target`."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    mapped = {folder for name, folder in mapping.items() if name != "roofcast"}
    for name, folder in mapping.items():
        source = ROOT / folder
        destination = target.joinpath(*name.split("."))
        for path in source.rglob("*.py"):
            relative = path.relative_to(source)
            if name == "roofcast" and relative.parts[0] in mapped:
                continue  # pragma: no cover - roofcast/ holds no mapped folder today
            out = destination / relative
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out)
    return target


def lint_imports(staged: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the staged tree, with pyproject's contracts."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(staged), os.environ.get("PYTHONPATH", "")]),
    }
    script = Path(sys.executable).with_name("lint-imports")  # the venv's, beside its python
    command = [
        str(script if script.exists() else "lint-imports"),
        "--no-cache",
        "--config",
        str(ROOT / "pyproject.toml"),
    ]
    return subprocess.run(command, cwd=staged, env=env, capture_output=True, text=True, check=False)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        done = lint_imports(stage(Path(tmp)))
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
