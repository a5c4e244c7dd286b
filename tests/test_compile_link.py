"""Compile mode, separate compilation (docs/counting.md S33): a kernel calling a device
function another unit defines (`-fgpu-rdc`) reaches it by a `CALL` to a name its own cubin
lacks; the function's SASS is taken from the unit beside it that defines it and counted
once per call (S15), and a changed unit is read again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sympy
from compile_tools import needs_clang
from roofcast.analyzer.compdb import load_database
from roofcast.analyzer.compile import Compiler
from roofcast.analyzer.sass import classify_kernel, parse_disassembly
from roofcast.analyzer.sasslink import link_functions, missing_callees
from roofcast.features.sasscount import class_counts

# Written for these tests: a kernel (main.cu) calling a function defined in poly.cu.
MAIN = """\
__device__ float poly(float x);

__global__ void calls(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = poly(x[i]);
}
"""
POLY = """\
__device__ float poly(float x) {
  return ((x * 3.0f + 2.0f) * x + 1.0f) * x + BODY;
}
"""


def _project(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir(exist_ok=True)
    (folder / "main.cu").write_text(MAIN)
    (folder / "poly.cu").write_text(POLY.replace("BODY", body))
    entries = [
        {
            "directory": str(folder),
            "command": f"/usr/bin/clang++ -O3 -std=gnu++17 --cuda-gpu-arch=sm_86 -x cuda "
            f"-fgpu-rdc -c {folder}/{name} -o {name}.o",
            "file": str(folder / name),
        }
        for name in ("main.cu", "poly.cu")
    ]
    (folder / "compile_commands.json").write_text(json.dumps(entries))
    return folder


def _flops(folder: Path, cache: Path) -> sympy.Expr:
    compiler = Compiler("sm_86", load_database(folder), cache_root=cache)
    sass, why = compiler.kernel(folder / "main.cu", "calls")
    assert sass is not None, why
    counts = class_counts(sass, {})
    return counts.get("fadd", 0) + counts.get("fmul", 0) + 2 * counts.get("ffma", 0)


@pytest.mark.rule("S33")
@needs_clang
def test_a_function_of_another_unit_counts_per_call(tmp_path: Path) -> None:
    folder = _project(tmp_path, "0.5f")
    assert _flops(folder, tmp_path / "cache") == 6  # three FMAs, in poly.cu's SASS
    # poly.cu changed: the kernel's cached reading is stale and read again
    _project(tmp_path, "x * x * 0.25f")
    assert _flops(folder, tmp_path / "cache") > 6


@pytest.mark.rule("S33")
def test_missing_callees_are_taken_from_the_unit_that_defines_them() -> None:
    caller = """\
        .section        .text._Z1kv,"ax",@progbits
_Z1kv:
        /*0000*/                   CALL.ABS.NOINC `(_Z1fv) ;
        /*0010*/                   CALL.ABS.NOINC `(__cuda_sm20_div_rn_f64_full) ;
        /*0020*/                   EXIT ;
"""
    callee = """\
        .section        .text._Z1fv,"ax",@progbits
_Z1fv:
        /*0000*/                   FADD R0, R0, R0 ;
        /*0010*/                   RET.ABS.NODEC R20 0x0 ;
"""
    functions = parse_disassembly(caller)
    # the toolkit's division routine is a slow path, not the program's (S6)
    assert missing_callees(functions) == {"_Z1fv"}
    texts = {Path("a.cu"): ("key-a", ""), Path("b.cu"): ("key-b", callee)}
    looked = link_functions(functions, list(texts), texts.__getitem__)
    assert "_Z1fv" in functions and missing_callees(functions) == set()
    assert looked == [("a.cu", "key-a"), ("b.cu", "key-b")]


# Written for these tests: a branch over a loop on line 5 of FILE, a file the counter did
# not walk; the kernel's own file (/s/k.cu) it did.
BRANCHED = """\
        .section        .text._Z1kv,"ax",@progbits
_Z1kv:
        //## File "/s/k.cu", line 2
        /*0000*/                   ISETP.GE.AND P0, PT, R0, 0x4, PT ;
        /*0010*/               @P0 BRA `(.L_x_1) ;
.L_x_0:
        //## File "FILE", line 5
        /*0020*/                   FADD R2, R2, 1 ;
        /*0030*/                   IADD3 R3, R3, 0x1, RZ ;
        /*0040*/                   ISETP.GE.AND P1, PT, R3, 0x8, PT ;
        /*0050*/              @!P1 BRA `(.L_x_0) ;
.L_x_1:
        //## File "/s/k.cu", line 3
        /*0060*/                   EXIT ;
"""


@pytest.mark.rule("S33", "S9")
@pytest.mark.parametrize(("file", "fadds"), [("/s/other.cu", 1), ("/usr/include/h.h", 0)])
def test_a_loop_in_a_file_beside_the_programs_is_not_a_slow_path(file: str, fadds: int) -> None:
    sass = classify_kernel(parse_disassembly(BRANCHED.replace("FILE", file))["_Z1kv"])
    counts = class_counts(sass, {("/s/k.cu", 2): (), ("/s/k.cu", 3): ()})
    assert counts.get("fadd", 0) == fadds
