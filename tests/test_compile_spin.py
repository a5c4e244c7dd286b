"""Compile mode, an atomic on shared memory compiled to a compare-and-swap retry loop
(docs/counting.md S32): on an address the whole block shares each thread retries until it
wins it, so the loop runs about (min(B, 32) + 1) / 2 * max(1, B / 64) times per thread;
on addresses that differ between threads (or behind a branch only some threads take) it
runs once."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from compile_tools import clang_project, needs_clang
from roofcast.analyzer.compdb import load_database
from roofcast.analyzer.compile import Compiler
from roofcast.analyzer.sass import classify_kernel, parse_disassembly
from roofcast.features.sasscount import class_counts, line_class_counts
from roofcast.features.spintrips import spin_trips
from roofcast.features.symbolic import symbol

# Written for these tests: a retry loop (a header's line 50) whose address operand is
# ADDRESS; R3 is written from a kernel argument before the loop and again (from a load,
# different per thread) after it: only the write before the loop reaches the atomic.
SPIN = """\
        .section        .text._Z1kPdi,"ax",@progbits
_Z1kPdi:
        //## File "/s/k.cu", line 2
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   IMAD.MOV.U32 R3, RZ, RZ, c[0x0][0x168] ;
        /*0020*/                   IMAD.SHL.U32 R3, R3, 0x8, RZ ;
        /*0030*/                   IMAD.SHL.U32 R4, R0, 0x8, RZ ;
.L_x_1:
        //## File "/s/h.h", line 50
        /*0040*/                   LDS.64 R6, ADDRESS ;
        /*0050*/                   DADD R8, R6, 1 ;
        /*0060*/                   ATOMS.CAST.SPIN.64 R8, ADDRESS, R6, R8 ;
        /*0070*/                   ISETP.EQ.U32.AND P0, PT, R8, 0x1, PT ;
        /*0080*/              @!P0 BRA `(.L_x_1) ;
        //## File "/s/k.cu", line 3
        /*0090*/                   LDS.64 R2, [RZ] ;
        /*00a0*/                   EXIT ;
.L_x_2:
        /*00b0*/                   BRA `(.L_x_2);
"""


def _kernel(address: str):
    return classify_kernel(parse_disassembly(SPIN.replace("ADDRESS", address))["_Z1kPdi"])


def _block() -> sympy.Expr:
    return sympy.Mul(*(symbol(f"blockDim_{a}") for a in "xyz"))


@pytest.mark.rule("S32")
@pytest.mark.parametrize("address", ["[RZ]", "[0x10]", "[R3]", "[R3+0x8]"])
def test_a_retry_on_one_address_of_the_block_runs_per_contending_thread(address: str) -> None:
    sass = _kernel(address)
    assert [loop.spin for loop in sass.loops] == [True]
    counts = class_counts(sass, {})
    assert sympy.simplify(counts["dadd"] - spin_trips(_block())) == 0
    # two integer instructions a trip (the ISETP and the shift before it stay once)
    assert sympy.simplify(counts["integer"] - (3 + spin_trips(_block()))) == 0


@pytest.mark.rule("S32")
@pytest.mark.parametrize("address", ["[R4]", "[R0]", "[R2]", "[R4+UR4]"])
def test_a_retry_on_per_thread_addresses_runs_once(address: str) -> None:
    sass = _kernel(address)
    assert [loop.spin for loop in sass.loops] == [False]
    assert class_counts(sass, {})["dadd"] == 1


@pytest.mark.rule("S32")
def test_a_retry_only_some_threads_reach_does_not_contend() -> None:
    sass = _kernel("[RZ]")
    share = sympy.Integer(1) / symbol("blockDim_x")  # `if (threadIdx.x == 0)`
    by_line = line_class_counts(sass, {}, None, {("/s/h.h", 50): share})
    assert by_line[("/s/h.h", 50)]["dadd"] == share


@pytest.mark.rule("S32")
def test_mean_trips_grow_with_the_lanes_then_with_the_warps() -> None:
    assert spin_trips(sympy.Integer(1)) == 1
    assert spin_trips(sympy.Integer(32)) == sympy.Rational(33, 2)
    assert spin_trips(sympy.Integer(128)) == 33
    assert spin_trips(sympy.Integer(256)) == 66


# Written for these tests: one double atomicAdd on a shared sum every thread adds to
# (line 4), one on each thread's own slot (line 5).
KERNELS = """\
__global__ void sums(const double* x, double* y) {
  __shared__ double total, own[256];
  if (threadIdx.x == 0) total = 0.0;
  __syncthreads(); atomicAdd(&total, x[threadIdx.x]);
  atomicAdd(&own[threadIdx.x], x[threadIdx.x]);
  __syncthreads();
  y[threadIdx.x] = total + own[threadIdx.x];
}
"""


@pytest.mark.rule("S32")
@needs_clang
def test_clangs_shared_double_atomics_contend_only_on_the_shared_sum(tmp_path: Path) -> None:
    folder = clang_project(tmp_path, KERNELS)
    compiler = Compiler("sm_86", load_database(folder), cache_root=tmp_path / "cache")
    sass, why = compiler.kernel(folder / "kernels.cu", "sums")
    assert sass is not None, why
    retries = [loop for loop in sass.loops if not loop.remainder]
    assert sorted(loop.spin for loop in retries) == [False, True]
    dadd = class_counts(sass, {})["dadd"]
    assert sympy.simplify(dadd - (spin_trips(_block()) + 2)) == 0  # + the own slot's, + line 7
