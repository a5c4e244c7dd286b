"""The textbook check set: its sidecars follow the schema, agree with their own arithmetic and
the bundled GPU files, and name kernels the analyzer finds where they say.

No test here asserts that a predictor agrees with the expected verdicts: `bench/textbook.py`
reports that figure.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import pytest
from roofcast.analyzer import discover
from roofcast.gpu_specs import load_gpu
from roofcast.kernels.textbook import (
    GPUS,
    OP_CLASSES,
    TextbookError,
    TextbookKernel,
    load_sidecar,
    load_textbook,
    source_files,
    textbook_root,
)

REPO = Path(__file__).resolve().parents[1]
ENTRIES = load_textbook()
SOURCES = source_files()
#: Non-flip verdicts lie at least this far (as a ratio) from the nearest balance point.
CLEAR_MARGIN = 3.0


def _ids(entries: list[TextbookKernel]) -> list[str]:
    return [e.id for e in entries]


def _rule(entry: TextbookKernel, gpu_key: str) -> tuple[str, float]:
    """The documented rule on the sidecar's own figures: verdict and the largest ratio of
    intensity to balance point over the classes."""
    balance = load_gpu(gpu_key).balance_points
    intensities = entry.intensities()
    top = max(intensities[c] / balance[c] for c in OP_CLASSES)
    return ("compute" if top >= 1 else "bandwidth"), top


def test_set_covers_the_promised_ground() -> None:
    kernels = {(e.source, e.name) for e in ENTRIES}
    assert len(kernels) >= 24
    assert len({(s, n) for s, n in kernels if s.suffix == ".cpp"}) >= 6
    assert sum(e.flip for e in ENTRIES) >= 3
    assert {e.verdicts["a100"] for e in ENTRIES} == {"compute", "bandwidth"}
    assert len({e.id for e in ENTRIES}) == len(ENTRIES)


def test_every_source_has_a_sidecar_with_entries() -> None:
    assert SOURCES
    for source in SOURCES:
        assert load_sidecar(source), source


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids(ENTRIES))
def test_entry_is_complete(entry: TextbookKernel) -> None:
    assert set(entry.verdicts) == set(GPUS)
    assert len(entry.reasoning) > 80
    assert entry.expected_dram is not None and entry.expected_dram.total > 0
    assert entry.ops and any(entry.ops.get(c, 0) > 0 for c in OP_CLASSES)
    if entry.language == "cuda":
        assert {"blockDim_x", "gridDim_x"} <= set(entry.defines)


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids(ENTRIES))
def test_verdicts_follow_from_the_stated_ops_and_bytes(entry: TextbookKernel) -> None:
    """The reasoning's numbers, put through the rule with the bundled machine files, give
    the stated verdicts; clear cases are clear, and a flip differs between the GPUs."""
    for gpu in GPUS:
        verdict, ratio = _rule(entry, gpu)
        assert verdict == entry.verdicts[gpu], (gpu, ratio)
        if not entry.flip:
            assert ratio >= CLEAR_MARGIN or ratio <= 1 / CLEAR_MARGIN, (gpu, ratio)
    if entry.flip:
        assert entry.verdicts["a100"] != entry.verdicts["h100"]


@pytest.mark.parametrize("source", SOURCES, ids=[s.name for s in SOURCES])
def test_analyzer_finds_every_listed_kernel_and_no_other(source: Path) -> None:
    found = {(k.name, k.line, k.language) for k in discover([source], {}).kernels}
    listed = {(e.name, e.line, e.language) for e in load_sidecar(source)}
    assert listed - found == set(), "listed but not found at that line"
    assert found - listed == set(), "found but not listed"


@pytest.mark.parametrize("source", [s for s in SOURCES if s.suffix == ".cpp"], ids=lambda s: s.name)
def test_openmp_sources_pass_gcc(source: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    done = subprocess.run(
        ["g++", "-fopenmp", "-fsyntax-only", "-Wall", "-Werror", str(source)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("source", [s for s in SOURCES if s.suffix == ".cu"], ids=lambda s: s.name)
def test_cuda_sources_compile(source: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed")
    done = subprocess.run(
        ["nvcc", "-cubin", "-arch=sm_80", "-o", "/dev/null", str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------- the loader


def _one_kernel(tmp_path: Path, sidecar: str) -> Path:
    (tmp_path / "cuda").mkdir()
    source = tmp_path / "cuda" / "k.cu"
    source.write_text("__global__ void k(float* a) { a[threadIdx.x] = 0.0f; }\n")
    (tmp_path / "cuda" / "k.toml").write_text(sidecar)
    return source


GOOD = """
[[kernel]]
name = "k"
line = 1
language = "cuda"
[kernel.verdict]
a100 = "bandwidth"
h100 = "bandwidth"
reasoning = "one store per thread"
[kernel.expected_dram]
load_bytes = 0
store_bytes = 1024
"""


def test_loader_reads_a_minimal_sidecar(tmp_path: Path) -> None:
    _one_kernel(tmp_path, GOOD)
    (entry,) = load_textbook(tmp_path)
    assert entry.verdicts == {"a100": "bandwidth", "h100": "bandwidth"}
    assert entry.expected_dram is not None and entry.expected_dram.basis == "compulsory"
    assert not entry.flip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('h100 = "bandwidth"\n', ""), "verdict for h100"),
        (('a100 = "bandwidth"', 'a100 = "memory"'), "verdict for a100"),
        (('"one store per thread"', '"  "'), "reasoning"),
        (('language = "cuda"', 'language = "openmp"'), "does not match k.cu"),
        (("store_bytes = 1024", "store_bytes = 0"), "not both 0"),
        (("line = 1", 'line = "1"'), "'line'"),
    ],
)
def test_loader_names_what_is_wrong(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    _one_kernel(tmp_path, GOOD.replace(*change))
    with pytest.raises(TextbookError, match=message) as caught:
        load_textbook(tmp_path)
    assert "k.toml" in str(caught.value)


def test_loader_wants_a_sidecar_per_source(tmp_path: Path) -> None:
    source = _one_kernel(tmp_path, GOOD)
    source.with_suffix(".toml").unlink()
    with pytest.raises(TextbookError, match="no sidecar"):
        load_textbook(tmp_path)


def test_package_data_globs_cover_every_file_of_the_set() -> None:
    """pyproject's package-data patterns (glob semantics, as setuptools applies them) match
    every file under kernels/textbook/, so an installed roofcast carries the set."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["roofcast.kernels"]
    kernels = textbook_root().parent
    shipped = {p for pat in patterns for p in glob.glob(pat, root_dir=kernels)}
    files = {
        str(p.relative_to(kernels))
        for p in textbook_root().rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert (textbook_root() / "README.md").is_file()
    assert files - shipped == set()


# --------------------------------------------------------------------------- the bench script


def test_bench_prints_rows_agreement_and_traffic() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "textbook.py"), "-k", "streaming", "--gpu", "a100"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("cuda/streaming.cu")]
    assert len(rows) == 3 and all(" a100 " in r for r in rows)
    assert "agreement roofline: all" in done.stdout
    assert "per-thread / expected DRAM bytes over 3 kernels" in done.stdout
    # streaming: the launch model's bytes are the hand-counted ones (plus the launch's 4 KiB)
    assert "launch / expected DRAM bytes over 3 kernels: median 1, range 1-1, 3 within 2x" in (
        done.stdout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--gpu", "t4"], "a100, h100"), (["--gpu", "nosuch"], "nosuch"), (["-k", "zzz"], "zzz")],
)
def test_bench_rejects_bad_input_in_one_line(args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "textbook.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr
