"""Compile mode: instructions predicated on a thread's lane (docs/counting.md S53)."""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_tools import clang_counts, clang_project, needs_clang
from roofcast.analyzer.sass import classify_kernel, parse_disassembly
from roofcast.analyzer.sassdiverge import divergent_fallbacks
from roofcast.analyzer.sasslane import lane_shares

# Hand-written nvdisasm excerpt (clang's shape for a block reduction's warp step): the last
# shuffle add and the store to shared memory predicated on `(threadIdx.y * 16 + tid.x) & 31`
# being zero; then a lane-nonzero integer add, an add on a loaded value's low bits, one after
# a label that a branch from before the test enters.
LISTING = """\
        .section        .text._Z1kPf,"ax",@progbits
_Z1kPf:
        //## File "/s/k.cu", line 4
        /*0000*/               @P3 BRA `(.L_x_1) ;
        /*0008*/                   S2R R0, SR_TID.X ;
        /*0010*/                   S2R R3, SR_TID.Y ;
        /*0020*/                   LDG.E R8, [R2.64] ;
        //## File "/s/k.cu", line 5
        /*0030*/                   SHFL.DOWN PT, R11, R10, 0x1, 0x1f ;
        /*0040*/                   IMAD R5, R3, 0x10, R0 ;
        /*0050*/                   LOP3.LUT R4, R5, 0x1f, RZ, 0xc0, !PT ;
        /*0060*/                   ISETP.NE.AND P0, PT, R4, RZ, PT ;
        /*0070*/              @!P0 FADD R11, R10, R11 ;
        /*0080*/              @!P0 STS [R6], R11 ;
        //## File "/s/k.cu", line 6
        /*0090*/                   ISETP.EQ.AND P2, PT, R4, RZ, PT ;
        /*0098*/              @!P2 IADD3 R12, R10, R11, RZ ;
        //## File "/s/k.cu", line 7
        /*00a0*/                   LOP3.LUT R9, R8, 0x1f, RZ, 0xc0, !PT ;
        /*00b0*/                   ISETP.NE.AND P1, PT, R9, RZ, PT ;
        /*00c0*/              @!P1 FADD R13, R10, R11 ;
.L_x_1:
        //## File "/s/k.cu", line 8
        /*00d0*/              @!P0 FADD R14, R10, R11 ;
        /*00e0*/                   EXIT ;
"""


@pytest.mark.rule("S53")
def test_an_instruction_predicated_on_lane_zero_runs_for_one_lane_in_32() -> None:
    function = parse_disassembly(LISTING)["_Z1kPf"]
    shares = lane_shares(function, divergent_fallbacks(function)[1])
    assert shares[0x70] == shares[0x80] == 1  # lane == 0
    assert shares[0x98] == 31  # not (lane == 0)
    # the low bits of a loaded value are no lane; past a label the predicate may differ
    assert 0xC0 not in shares and 0xD0 not in shares
    # an unpredicated instruction has no share
    assert 0x40 not in shares and 0x60 not in shares


@pytest.mark.rule("S53")
def test_the_lane_share_is_kept_per_group_of_instructions() -> None:
    function = parse_disassembly(LISTING)["_Z1kPf"]
    groups = classify_kernel(function).groups
    line5 = [g for g in groups if g.where == (("/s/k.cu", 5),)]
    by_lanes = {g.lanes: g.counts for g in line5}
    # the lane-zero add apart from the line's other work (the IMAD, the LOP3, the ISETP)
    assert by_lanes[1]["fadd"] == 1 and "fadd" not in by_lanes[32]
    line6 = {g.lanes: g.counts for g in groups if g.where == (("/s/k.cu", 6),)}
    assert line6[31]["integer"] == 1 and line6[32]["integer"] == 1  # the IADD3; the ISETP


# Written for this test: a block sum, each warp's shuffle tree then lane 0's store.
KERNEL = """\
__global__ void block_sum(const float* a, float* out) {
  __shared__ float part[32];
  int tid = threadIdx.y * 16 + threadIdx.x;
  float v = a[blockIdx.x * 512 + tid] * 2.0f;
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xFFFFFFFF, v, offset);
  if ((tid & 31) == 0) part[tid / 32] = v;
  __syncthreads();
  if (tid == 0)
    out[blockIdx.x] = part[0] + part[1];
}
"""


@pytest.mark.rule("S53")
@needs_clang
def test_a_warp_sum_counts_its_last_add_for_lane_zero(tmp_path: Path) -> None:
    fv = clang_counts(clang_project(tmp_path, KERNEL), tmp_path / "cache")["block_sum"]
    assert fv.counted_from == "sass", fv.counted_why
    sp = float(fv.flops_sp.subs({s: 512 for s in fv.flops_sp.free_symbols}))
    # the multiply (an add, v + v), the shuffle tree's first add fused with it (an FMA, 2)
    # and three adds for every thread; its last add only for lane 0 (1/32); the final add
    # for thread 0 of 512 (S16)
    assert sp == pytest.approx(1 + 2 + 3 + 1 / 32 + 1 / 512**2)
