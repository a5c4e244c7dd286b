"""Packaging: one `roofcast` namespace, package data inside it, both console scripts declared.

The wheel is built from a copy of the checkout (so no build/ or egg-info lands in the tree).
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: source folder -> the package it installs as (pyproject's package-dir mapping)
MAPPED = {
    "analyzer": "roofcast/analyzer",
    "features": "roofcast/features",
    "llm": "roofcast/llm",
    "gpu_specs": "roofcast/gpu_specs",
    "kernels": "roofcast/kernels",
    "roofcast": "roofcast",
}
GENERIC_NAMES = ("llm", "kernels", "features", "analyzer", "gpu_specs")
SCRIPTS = {"analyze": "roofcast.cli.main:analyze_entry", "roofcast": "roofcast.cli.main:app"}
_SKIP_COPY = shutil.ignore_patterns(
    ".venv",
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    "out",
    "tests",
)
_OFFLINE = (
    "Could not find a version",
    "No matching distribution",
    "Failed to establish",
    "Temporary failure in name resolution",
    "Network is unreachable",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[zipfile.ZipFile, str]:
    """The wheel and everything the build printed (-v: the backend's warnings included)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    shutil.copytree(REPO, source, ignore=_SKIP_COPY)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-v",
            "-w",
            str(root / "out"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0 and any(s in proc.stderr + proc.stdout for s in _OFFLINE):
        pytest.skip("building a wheel needs setuptools from the package index, which is offline")
    assert proc.returncode == 0, proc.stderr[-3000:]
    wheels = list((root / "out").glob("roofcast-*.whl"))
    assert len(wheels) == 1, wheels
    archive = zipfile.ZipFile(wheels[0])
    yield archive, proc.stdout + proc.stderr
    archive.close()


@pytest.fixture(scope="module")
def wheel(built) -> zipfile.ZipFile:
    return built[0]


def test_wheel_build_prints_no_setuptools_warning(built):
    """pyproject.toml as setuptools wants it: SPDX license string, every shipped data folder
    listed in `packages` (a folder left out is shipped all the same, with a warning)."""
    log = built[1]
    warnings = [
        line.strip()
        for line in log.splitlines()
        if re.search(r"setuptools.*Warning|SetuptoolsDeprecationWarning", line)
    ]
    assert not warnings, warnings
    for text in ("is deprecated", "absent from the `packages` configuration"):
        assert text not in log


def test_every_data_folder_is_shipped(wheel):
    """Every file under the data folders lands in the wheel under roofcast/ (the packages
    list names the folders one by one, so a new folder must be added there)."""
    names = set(wheel.namelist())
    folders = {
        "kernels": "roofcast/kernels",
        "gpu_specs": "roofcast/gpu_specs",
        "roofcast/predictors/models": "roofcast/predictors/models",
        "roofcast/workflow/data": "roofcast/workflow/data",
        "features/data": "roofcast/features/data",
    }
    missing = []
    for folder, package in folders.items():
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                wanted = f"{package}/{path.relative_to(REPO / folder).as_posix()}"
                if wanted not in names:
                    missing.append(wanted)
    assert not missing, missing


def _dist_info(archive: zipfile.ZipFile, name: str) -> str:
    matches = [n for n in archive.namelist() if n.endswith(f".dist-info/{name}")]
    assert len(matches) == 1, matches
    return archive.read(matches[0]).decode()


def test_wheel_installs_everything_under_roofcast(wheel):
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"roofcast"}
    assert _dist_info(wheel, "top_level.txt").split() == ["roofcast"]
    for generic in GENERIC_NAMES:
        assert not [
            n for n in wheel.namelist() if n.startswith(f"{generic}/") or n == f"{generic}.py"
        ]


def test_wheel_has_every_python_module_of_the_mapped_folders(wheel):
    names = set(wheel.namelist())
    missing = []
    for folder, package in MAPPED.items():
        for path in (REPO / folder).rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            wanted = f"{package}/{path.relative_to(REPO / folder).as_posix()}"
            if wanted not in names:
                missing.append(wanted)
    assert not missing, missing


def test_wheel_carries_gpu_specs_and_kernels_as_package_data(wheel):
    names = set(wheel.namelist())
    tomls = sorted(p.name for p in (REPO / "gpu_specs").glob("*.toml"))
    assert len(tomls) >= 15
    assert not [t for t in tomls if f"roofcast/gpu_specs/{t}" not in names]
    cuda = sorted(p.name for p in (REPO / "kernels" / "cuda").iterdir() if p.is_file())
    assert any(c.endswith(".cu") for c in cuda)
    assert not [c for c in cuda if f"roofcast/kernels/cuda/{c}" not in names]
    openmp = sorted(p.name for p in (REPO / "kernels" / "openmp").iterdir() if p.is_file())
    assert not [c for c in openmp if f"roofcast/kernels/openmp/{c}" not in names]


def test_wheel_declares_both_console_scripts(wheel):
    text = _dist_info(wheel, "entry_points.txt")
    section = text.split("[console_scripts]", 1)[1].split("\n[", 1)[0]
    pairs = [line.split("=", 1) for line in section.splitlines() if "=" in line]
    declared = {name.strip(): target.strip() for name, target in pairs}
    assert {k: declared.get(k) for k in SCRIPTS} == SCRIPTS


# --------------------------------------------------------------------------- installed (fast)


def test_installed_entry_points_resolve_to_callables():
    scripts = {ep.name: ep for ep in importlib.metadata.entry_points(group="console_scripts")}
    for name, target in SCRIPTS.items():
        assert name in scripts and scripts[name].value == target
        assert callable(scripts[name].load())


def test_gpu_specs_are_package_resources():
    from roofcast.gpu_specs import load_gpu

    files = [
        f
        for f in importlib.resources.files("roofcast.gpu_specs").iterdir()
        if f.name.endswith(".toml")
    ]
    assert len(files) >= 15
    for alias in ("a100", "h100", "rtx3080"):
        assert load_gpu(alias).balance_points["sp"] > 0


def test_kernel_corpus_is_a_package_resource():
    cuda = importlib.resources.files("roofcast.kernels") / "cuda"
    names = [f.name for f in cuda.iterdir()]
    assert any(n.endswith(".cu") for n in names)
    assert "streaming.cu" in names and "__global__" in (cuda / "streaming.cu").read_text()


def test_no_generic_top_level_import_names(tmp_path):
    """Outside the checkout, only `roofcast` is importable: no `llm`, `features`, ..."""
    probe = (
        f"import importlib.util, json; print(json.dumps([n for n in {GENERIC_NAMES!r} "
        "if importlib.util.find_spec(n) is not None]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
