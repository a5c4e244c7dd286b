"""Host drivers for the CUDA corpus (kernels/drivers): every kernel of every kernels/cuda source
is launched by a driver, and the drivers build with nvcc (no GPU needed to compile)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
DRIVERS = KERNELS / "drivers"
SOURCES = sorted((KERNELS / "cuda").glob("*.cu"))
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")


def _launched(driver_text: str) -> set[str]:
    """Kernel names the driver launches: `name<<<` or `name<T><<<`, namespaces dropped."""
    return {m.group(1) for m in re.finditer(r"(?:\w+::)?(\w+)(?:<[\w\s,]+>)?<<<", driver_text)}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_kernel_has_a_driver_launch(source: Path) -> None:
    driver = DRIVERS / f"{source.stem}_driver.cu"
    assert driver.is_file(), f"no driver for {source.name}"
    text = driver.read_text()
    assert f'#include "../cuda/{source.name}"' in text
    sidecar = source.with_suffix(".toml")
    names = {k["name"] for k in tomllib.loads(sidecar.read_text())["kernel"]}
    assert names and names <= _launched(text), names - _launched(text)


def test_drivers_take_small_or_large() -> None:
    common = (DRIVERS / "driver_common.cuh").read_text()
    assert '"small"' in common and '"large"' in common
    for driver in DRIVERS.glob("*_driver.cu"):
        assert "parse_size(argc, argv);" in driver.read_text(), driver.name


def _compile(driver: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90", "-o", str(out),
                           str(driver)], capture_output=True, text=True, timeout=600)


@needs_nvcc
def test_a_driver_compiles_for_sm90(tmp_path: Path) -> None:
    done = _compile(DRIVERS / "streaming_driver.cu", tmp_path / "streaming")
    assert done.returncode == 0, done.stderr
    usage = subprocess.run([str(tmp_path / "streaming")], capture_output=True, text=True)
    assert usage.returncode == 2 and "small|large" in usage.stderr


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("driver", sorted(DRIVERS.glob("*_driver.cu")), ids=lambda p: p.stem)
def test_every_driver_compiles_for_sm90(driver: Path, tmp_path: Path) -> None:
    done = _compile(driver, tmp_path / driver.stem)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr.lower(), done.stderr
