"""Run mypy over the roofcast package as it installs, whatever folder each part lives in.

pyproject's package-dir maps analyzer/ to roofcast.analyzer (and features/, llm/, ...), and
mypy cannot follow setuptools' editable-install finder, so this rebuilds that mapping as a
tree of symbolic links under build/typecheck (pyproject's [tool.mypy] mypy_path) and runs
mypy on it; reported paths are turned back into the repository's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
TREE = REPO / "build" / "typecheck"


def link_tree() -> dict[str, str]:
    """Link every mapped package into TREE; the link prefix -> repository folder, for paths."""
    mapping = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    shutil.rmtree(TREE, ignore_errors=True)
    root = TREE / "roofcast"
    root.mkdir(parents=True)
    prefixes: dict[str, str] = {}
    for package, folder in sorted(mapping["package-dir"].items()):
        if package == "roofcast":
            for entry in (REPO / folder).iterdir():
                if entry.name != "__pycache__":
                    (root / entry.name).symlink_to(entry)
            prefixes["build/typecheck/roofcast/"] = f"{folder}/"
        else:
            child = package.removeprefix("roofcast.")
            (root / child).symlink_to(REPO / folder)
            prefixes[f"build/typecheck/roofcast/{child}/"] = f"{folder}/"
    return prefixes


def main() -> int:
    prefixes = link_tree()
    done = subprocess.run(
        [sys.executable, "-m", "mypy", *sys.argv[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPY_FORCE_COLOR": "0"},
    )
    # the longest prefix first: roofcast/analyzer/ before roofcast/
    order = sorted(prefixes, key=len, reverse=True)
    for line in (done.stdout + done.stderr).splitlines():
        for prefix in order:
            if line.startswith(prefix):
                line = prefixes[prefix] + line[len(prefix) :]
                break
        print(line)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
