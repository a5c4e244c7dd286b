"""What the compile-mode tests need from this machine, probed once: the toolkit programs
(nvcc, nvdisasm) and a clang that compiles CUDA, with skip marks naming what is missing.
A helper module (its name does not start with `test_`), imported by the compile tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from roofcast.analyzer.compdb import load_database
from roofcast.analyzer.compile import Compiler, find_tools
from roofcast.analyzer.discover import discover_files
from roofcast.analyzer.toolchain import ClangCuda, ToolchainError, clang_cuda
from roofcast.features import count_features
from roofcast.features.sasscount import recount
from roofcast.features.vector import FeatureVector

TOOLS = find_tools()


def _clang_or_why() -> ClangCuda | str:
    try:
        return clang_cuda()
    except ToolchainError as exc:
        return str(exc)


CLANG = _clang_or_why()
#: clang for CUDA and nvdisasm: what a clang-compiled unit needs
needs_clang = pytest.mark.skipif(
    not isinstance(CLANG, ClangCuda) or TOOLS.nvdisasm is None,
    reason=f"no clang CUDA toolchain ({CLANG}) or no nvdisasm",
)
#: nvcc and nvdisasm
needs_nvcc = pytest.mark.skipif(
    bool(TOOLS.missing()), reason=f"compile mode tools missing: {TOOLS.missing()}"
)
#: clang for CUDA and the whole toolkit (tests comparing clang's code with nvcc's)
needs_clang_and_nvcc = pytest.mark.skipif(
    not isinstance(CLANG, ClangCuda) or bool(TOOLS.missing()),
    reason=f"no clang CUDA toolchain ({CLANG}) or nvcc/nvdisasm ({TOOLS.missing()})"
    if not isinstance(CLANG, ClangCuda)
    else f"compile mode tools missing: {TOOLS.missing()}",
)


#: the ground truth's clang flags (gpuFLOPBench's compile_commands.json) past the driver
GROUND_TRUTH_FLAGS = "-O3 -DNDEBUG -std=gnu++14"


def clang_project(
    tmp_path: Path,
    text: str,
    flags: str = "-O3 -std=gnu++17",
    driver: str = "/usr/bin/clang++",
    arch: str = "sm_86",
) -> Path:
    """A folder `proj` with kernels.cu (`text`) and a compile_commands.json building it
    with clang as gpuFLOPBench's build did (another machine's clang and CUDA paths)."""
    folder = tmp_path / "proj"
    folder.mkdir(exist_ok=True)
    (folder / "kernels.cu").write_text(text)
    command = (
        f"{driver} -I{folder} {flags} --cuda-gpu-arch={arch} "
        f"--cuda-path=/usr/local/cuda-12.6 -x cuda -c {folder}/kernels.cu -o kernels.o"
    )
    entry = {"directory": str(folder), "command": command, "file": str(folder / "kernels.cu")}
    (folder / "compile_commands.json").write_text(json.dumps([entry]))
    return folder


def clang_counts(
    folder: Path, cache: Path, args: Mapping[str, str] | None = None
) -> dict[str, FeatureVector]:
    """Each kernel of the folder's kernels.cu counted in compile mode (`args` bound)."""
    compiler = Compiler("sm_86", load_database(folder), cache_root=cache)
    found = discover_files([folder / "kernels.cu"], [folder], {}, frozenset(), None)
    out = {}
    for ir in found.kernels:
        fv = count_features(ir, dict(args or {}), line_loops=True)
        recount(ir, fv, compiler, args)
        out[ir.name] = fv
    return out
