"""What the compile-mode tests need from this machine, probed once: the toolkit programs
(nvcc, nvdisasm) and a clang that compiles CUDA, with skip marks naming what is missing.
A helper module (its name does not start with `test_`), imported by the compile tests."""

from __future__ import annotations

import pytest
from roofcast.analyzer.compile import find_tools
from roofcast.analyzer.toolchain import ClangCuda, ToolchainError, clang_cuda

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
