"""Compile mode: what a thread does not execute although the SASS holds it (docs/counting.md
S28, a denormal operand's fix-ups; S29 and S54, the odd iteration of a loop unrolled twice)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import sympy
from compile_tools import GROUND_TRUTH_FLAGS, clang_counts, clang_project, needs_clang
from roofcast.analyzer.sass import classify_kernel, parse_disassembly
from roofcast.features.sasscount import class_counts, flop_counts

# Hand-written nvdisasm excerpts (clang's shapes, registers renamed).
# An approximate square root scales a denormal input up and its result down under `@!P0`
# after P0 = |x| >= FLT_MIN, and an exponential halves an exponent below -126 and squares
# its power of two; a guard from any other test, or a predicate written again before its
# use, is kept.
FIXUPS = """\
        .section        .text._Z1fPf,"ax",@progbits
_Z1fPf:
        //## File "/s/f.cu", line 3
        /*0000*/                   LDG.E R4, [R2.64] ;
        /*0010*/                   FSETP.GEU.AND P0, PT, |R4|, 1.175494350822287508e-38, PT ;
        /*0020*/              @!P0 FMUL R4, R4, 16777216 ;
        /*0030*/                   MUFU.SQRT R5, R4 ;
        /*0040*/              @!P0 FMUL R5, R5, 0.000244140625 ;
        /*0050*/                   FADD R6, R5, R6 ;
        /*0060*/                   FSETP.GEU.AND P1, PT, |R6|, 2, PT ;
        /*0070*/              @!P1 FMUL R6, R6, 3 ;
        /*0080*/                   FSETP.GEU.AND P0, PT, |R6|, 1.175494350822287508e-38, PT ;
        /*0090*/                   ISETP.NE.AND P0, PT, R7, RZ, PT ;
        /*00a0*/              @!P0 FMUL R6, R6, 5 ;
        /*00b0*/                   FSETP.GEU.AND P2, PT, R6, 1.175494350822287508e-38, PT ;
        /*00c0*/               @P2 FADD R6, R6, 1 ;
        /*00d0*/                   FSETP.GEU.AND P3, PT, R9, -126, PT ;
        /*00e0*/              @!P3 FMUL R9, R9, 0.5 ;
        /*00f0*/                   MUFU.EX2 R9, R9 ;
        /*0100*/              @!P3 FMUL R9, R9, R9 ;
        /*0110*/                   FSETP.GEU.AND P4, PT, R9, -126.5, PT ;
        /*0120*/              @!P4 FADD R9, R9, 1 ;
        /*0130*/                   STG.E [R2.64], R6 ;
        /*0140*/                   EXIT ;
"""


@pytest.mark.rule("S28")
def test_denormal_fixups_are_not_counted() -> None:
    kernel = classify_kernel(parse_disassembly(FIXUPS)["_Z1fPf"])
    # kept: the FADD, the FMUL under another test's guard, the FMUL whose P0 an ISETP wrote
    # again, the FADD guarded by the normal side of a FLT_MIN test, the FADD under a test
    # of -126.5
    assert kernel.totals()["fmul"] == 2
    assert kernel.totals()["fadd"] == 3
    assert kernel.dropped == 4  # the two scalings of the denormal operand, of the power


def _odd(copy: str, entry: str = "") -> str:
    """A loop over n unrolled twice: two LDG and two FFMA per trip, then the odd trip's
    test and the branch over `copy`; `entry` goes before the loop."""
    return f"""\
        .section        .text._Z1gPfi,"ax",@progbits
_Z1gPfi:
        //## File "/s/g.cu", line 4
        /*0000*/                   ISETP.NE.AND P1, PT, R0, 0x1, PT ;
        /*0010*/                   LOP3.LUT R8, R0, 0x1, RZ, 0xc0, !PT ;
{entry}        /*0020*/              @!P1 BRA `(.L_x_2) ;
.L_x_1:
        //## File "/s/g.cu", line 5
        /*0030*/                   LDG.E R4, [R2.64] ;
        /*0040*/                   LDG.E R5, [R2.64+0x4] ;
        /*0050*/                   FFMA R6, R4, R4, R6 ;
        /*0060*/                   FFMA R6, R5, R5, R6 ;
        //## File "/s/g.cu", line 4
        /*0070*/                   IADD3 R0, R0, -0x2, RZ ;
        /*0080*/                   ISETP.NE.AND P1, PT, R0, RZ, PT ;
        /*0090*/               @P1 BRA `(.L_x_1) ;
.L_x_2:
        /*00a0*/                   ISETP.NE.AND P0, PT, R8, RZ, PT ;
        /*00b0*/              @!P0 BRA `(.L_x_3) ;
        //## File "/s/g.cu", line 5
{copy}.L_x_3:
        /*00f0*/                   STG.E [R2.64], R6 ;
        /*0100*/                   EXIT ;
"""


ONE_TRIP = """\
        /*00c0*/                   LDG.E R4, [R2.64] ;
.L_x_4:
        /*00d0*/                   FFMA R6, R4, R4, R6 ;
"""
OTHER_WORK = """\
        /*00c0*/                   LDG.E R4, [R2.64] ;
        /*00d0*/                   FMUL R6, R4, R6 ;
"""
N = sympy.Symbol("n")
LOOPS = {("/s/g.cu", 4): (N,), ("/s/g.cu", 5): (N,)}


def _sp(listing: str, trips: sympy.Expr = N) -> sympy.Expr:
    kernel = classify_kernel(parse_disassembly(listing)["_Z1gPfi"])
    loops = {where: (trips,) for where in LOOPS}
    return sympy.expand(flop_counts(class_counts(kernel, loops))["flops_sp"])


@pytest.mark.rule("S29", "S54")
def test_odd_iteration_after_a_loop_unrolled_twice() -> None:
    kernel = classify_kernel(parse_disassembly(_odd(ONE_TRIP))["_Z1gPfi"])
    assert [(lp.unroll, lp.remainder, lp.odd) for lp in kernel.loops] == [(2, False, True)]
    # the copy is kept, marked as the odd trip of a loop unrolled twice
    assert kernel.totals() == Counter({"ffma": 3, "load_4": 3, "integer": 5, "store_4": 1})
    assert [dict(g.counts) for g in kernel.groups if g.odd == 2] == [{"load_4": 1, "ffma": 1}]
    # S54, an exact trip count n: floor(n / 2) passes of two FFMAs, the copy's one FFMA
    # n mod 2 times: one FFMA per source trip, odd n or even
    n = sympy.Symbol("n")
    exact = _sp(_odd(ONE_TRIP))
    assert [exact.subs(n, trips) for trips in range(7)] == [2 * trips for trips in range(7)]
    # S29, a trip count no thread has exactly (a ceiling over the launch): n / 2 passes,
    # the copy off the main path
    share = sympy.ceiling(n / sympy.Symbol("blockDim_x"))
    assert _sp(_odd(ONE_TRIP), share) == 2 * share


@pytest.mark.rule("S29")
def test_code_after_a_loop_that_is_no_copy_of_its_body_is_counted() -> None:
    n = sympy.Symbol("n")
    # other work than half the body's: a loop with repeated work and its epilogue
    assert _sp(_odd(OTHER_WORK)) == 4 * n + 1
    # entered from before the loop: not only the odd trip runs it
    entry = "        /*0018*/               @P3 BRA `(.L_x_4) ;\n"
    assert _sp(_odd(ONE_TRIP, entry)) == 4 * n + 2


# Written for these tests: a square root summed over a loop clang unrolls twice (a denormal
# fix-up of each MUFU.SQRT, the odd trip after the loop), two sums of squares over such a
# loop (each iteration loads twice and adds twice: four of each per pass), and a fast
# division.
KERNELS = """\
__global__ void rootsum(const float* __restrict__ x, float* out, int n) {
  int i = threadIdx.x;
  float s = 0.f;
#pragma unroll 2
  for (int k = 0; k < n; k++) s += sqrtf(x[k * 64 + i]);
  out[i] = s;
}

__global__ void pairsum(const float* __restrict__ x, float* out, int n) {
  int i = threadIdx.x;
  float s = 0.f, t = 0.f;
#pragma unroll 2
  for (int k = 0; k < n; k++) {
    float a = x[k * 128 + i], b = x[k * 128 + 64 + i];
    s += a * a;
    t += b * b;
  }
  out[i] = s - t;
}

__global__ void ratio(const float* __restrict__ x, const float* __restrict__ y, float* out) {
  int i = threadIdx.x;
  out[i] = __fdividef(x[i], y[i]);
}
"""


@pytest.mark.rule("S28", "S29")
@needs_clang
def test_clang_square_roots_count_one_add_per_trip(tmp_path: Path) -> None:
    folder = clang_project(tmp_path, KERNELS, flags=GROUND_TRUTH_FLAGS)
    counted = clang_counts(folder, tmp_path / "cache")
    assert all("clang" in fv.counted_why for fv in counted.values())
    # one FADD per trip: MUFU.SQRT is no FLOP, its scalings run for denormals only, and
    # the odd trip's copy is a trip the loop's n / 2 runs already count
    rootsum = counted["rootsum"].flops_sp
    assert rootsum.subs({s: 1001 for s in rootsum.free_symbols}) == 1001
    # MUFU.RCP and one FMUL; the scalings of a denormal divisor are not counted
    assert counted["ratio"].flops_sp == 1


@pytest.mark.rule("S29", "S54")
@needs_clang
def test_clang_loop_unrolled_twice_counts_each_trip_once_at_any_trip_count(
    tmp_path: Path,
) -> None:
    folder = clang_project(tmp_path, KERNELS, flags=GROUND_TRUTH_FLAGS)
    flops = clang_counts(folder, tmp_path / "cache")["pairsum"].flops_sp
    # two FFMAs per trip and the final FADD, for an odd trip count as for an even one: the
    # pass of two iterations runs floor(n / 2) times, the odd iteration's copy n mod 2
    n = next(iter(flops.free_symbols))
    assert [flops.subs(n, trips) for trips in (1, 2, 3, 1001)] == [5, 9, 13, 4005]
