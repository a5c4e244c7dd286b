"""Compile mode's reading of two shapes of clang's and ptxas's code (docs/counting.md: S40,
a loop unrolled c times whose remainder is a ladder of straight copies; S34, a warp
intrinsic's fallback for a warp that is not converged)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from compile_tools import GROUND_TRUTH_FLAGS, clang_counts, clang_project, needs_clang
from roofcast.analyzer.sass import classify_kernel, parse_disassembly
from roofcast.features.sasscount import class_counts, flop_counts

# Hand-written nvdisasm excerpts (ptxas's shapes, registers renamed).


def _ladder(half: str, one: str, entry: str = "") -> str:
    """A loop over n unrolled four times (four LDG, four FFMA per pass), then a copy of
    two iterations (`half`) and one of one iteration (`one`), each behind a forward
    branch; `entry` goes before the loop."""
    return f"""\
        .section        .text._Z1gPfi,"ax",@progbits
_Z1gPfi:
        //## File "/s/g.cu", line 4
        /*0000*/                   ISETP.GT.AND P3, PT, R0, 0x60, PT ;
{entry}        /*0010*/              @!P3 BRA `(.L_x_2) ;
.L_x_1:
        //## File "/s/g.cu", line 5
        /*0020*/                   LDG.E R4, [R2.64] ;
        /*0030*/                   LDG.E R5, [R2.64+0x80] ;
        /*0040*/                   LDG.E R6, [R2.64+0x100] ;
        /*0050*/                   LDG.E R7, [R2.64+0x180] ;
        /*0060*/                   FFMA R9, R4, R4, R9 ;
        /*0070*/                   FFMA R9, R5, R5, R9 ;
        /*0080*/                   FFMA R9, R6, R6, R9 ;
        /*0090*/                   FFMA R9, R7, R7, R9 ;
        //## File "/s/g.cu", line 4
        /*00a0*/                   IADD3 R0, R0, -0x80, RZ ;
        /*00b0*/                   ISETP.GT.AND P3, PT, R0, 0x60, PT ;
        /*00c0*/               @P3 BRA `(.L_x_1) ;
.L_x_2:
        /*00d0*/                   BSYNC B1 ;
        /*00e0*/                   ISETP.GT.AND P2, PT, R0, 0x20, PT ;
        /*00f0*/              @!P2 BRA `(.L_x_3) ;
        //## File "/s/g.cu", line 5
{half}.L_x_3:
        //## File "/s/g.cu", line 4
        /*0140*/                   ISETP.GT.AND P0, PT, R0, RZ, PT ;
        /*0150*/              @!P0 BRA `(.L_x_4) ;
        //## File "/s/g.cu", line 5
{one}.L_x_4:
        /*0180*/                   STG.E [R2.64], R9 ;
        /*0190*/                   EXIT ;
"""


TWO_TRIPS = """\
        /*0100*/                   LDG.E R4, [R2.64] ;
        /*0110*/                   LDG.E R5, [R2.64+0x80] ;
        /*0120*/                   FFMA R9, R4, R4, R9 ;
        /*0130*/                   FFMA R9, R5, R5, R9 ;
"""
ONE_TRIP = """\
        /*0160*/                   LDG.E R4, [R2.64] ;
.L_x_5:
        /*0170*/                   FFMA R9, R4, R4, R9 ;
"""
OTHER_WORK = """\
        /*0160*/                   LDG.E R4, [R2.64] ;
        /*0170*/                   FMUL R9, R4, R9 ;
"""
LOOPS = {("/s/g.cu", 4): (sympy.Symbol("n"),), ("/s/g.cu", 5): (sympy.Symbol("n"),)}


def _sp(listing: str) -> sympy.Expr:
    kernel = classify_kernel(parse_disassembly(listing)["_Z1gPfi"])
    return sympy.expand(flop_counts(class_counts(kernel, LOOPS))["flops_sp"])


@pytest.mark.rule("S40")
def test_a_ladder_of_copies_after_a_loop_unrolled_four_times() -> None:
    kernel = classify_kernel(parse_disassembly(_ladder(TWO_TRIPS, ONE_TRIP))["_Z1gPfi"])
    assert [(lp.unroll, lp.remainder) for lp in kernel.loops] == [(4, False)]
    # the four FFMAs run n / 4 times (one per source trip); the copies of two and one
    # iteration run iterations those passes count already
    assert _sp(_ladder(TWO_TRIPS, ONE_TRIP)) == 2 * sympy.Symbol("n")
    assert kernel.dropped == 6


@pytest.mark.rule("S40")
def test_code_after_a_loop_that_is_no_ladder_is_counted() -> None:
    n = sympy.Symbol("n")
    # the last block does other work than one iteration: no ladder, each copy counted
    # once and the loop's four FFMAs once per source trip (the limit S4 states)
    assert _sp(_ladder(TWO_TRIPS, OTHER_WORK)) == 8 * n + 5
    # one copy of half the body only: not a ladder but S29's odd trip of a body unrolled
    # twice whose iterations load twice each; S54 at an exact n: one pair of FFMAs per trip
    odd = _sp(_ladder(TWO_TRIPS, ""))
    assert [odd.subs(n, trips) for trips in range(7)] == [4 * trips for trips in range(7)]
    # the one-iteration copy is entered from before the loop: not only the ladder runs it
    entry = "        /*0008*/               @P4 BRA `(.L_x_5) ;\n"
    assert _sp(_ladder(TWO_TRIPS, ONE_TRIP, entry)) == 8 * n + 6


# Written for these tests: a strided sum over a row that ptxas unrolls four times with a
# ladder of two and one iterations after it, and a warp sum behind a data-dependent test
# (clang guards the shuffles with BRA.DIV).
KERNELS = """\
__global__ void rowsum(const float* __restrict__ x, float* out, int n) {
  int lane = threadIdx.x;
  float s = 0.f;
  for (int j = lane; j < n; j += 32) s += x[blockIdx.x * n + j] * x[j];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  if (lane == 0) out[blockIdx.x] = s;
}

__global__ void warpsum(const float* __restrict__ x, float* out) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  if (v > 0.f) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
"""


@pytest.mark.rule("S40", "S34")
@needs_clang
def test_clang_strided_sum_and_warp_sum(tmp_path: Path) -> None:
    folder = clang_project(tmp_path, KERNELS, flags=GROUND_TRUTH_FLAGS)
    counted = clang_counts(folder, tmp_path / "cache")
    assert all("clang" in fv.counted_why for fv in counted.values())
    # one FFMA per trip of the strided loop (n / 32 trips: 32 for n = 1024) and five
    # shuffle adds; the ladder's copies are not counted again
    rowsum = counted["rowsum"].flops_sp
    assert rowsum.subs({s: 1024 for s in rowsum.free_symbols}) == 2 * 32 + 5
    # five adds of the converged shuffles, none of the fallback's
    assert counted["warpsum"].flops_sp == 5
