"""Compile mode, a warp shuffle under a branch (docs/counting.md S34): the compiler emits
`BRA.DIV ~URZ, L` before the converged `SHFL`s and, at L after the kernel's `EXIT`, a
second version of the same code for a warp that is not converged, which jumps back to
the join. A thread runs one version: the fallback is off the main path, and its jump
back is no loop."""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_tools import clang_project, needs_clang
from roofcast.analyzer.compdb import load_database
from roofcast.analyzer.compile import Compiler
from roofcast.analyzer.sass import classify_kernel, parse_disassembly
from roofcast.analyzer.sassdiverge import divergent_fallbacks
from roofcast.features.sasscount import class_counts, line_class_counts

# Written for these tests, in the shape clang 19 gives `if (i < n) { v = max(v,
# __shfl_xor_sync(~0u, v, 16)); v = max(v, __shfl_xor_sync(~0u, v, 8)); }`: two steps,
# each an IMNMX (line 5) in the converged version and again in the fallback at .L_x_2;
# ENTRY is the branch that may enter the fallback, BACK where it jumps back to.
DIVERGE = """\
        .section        .text._Z1kPKiPii,"ax",@progbits
_Z1kPKiPii:
.L_x_9:
        //## File "/s/k.cu", line 2
        /*0000*/                   S2R R3, SR_TID.X ;
        /*0010*/                   BSSY B0, `(.L_x_0) ;
        /*0020*/                   ISETP.GE.AND P0, PT, R3, c[0x0][0x170], PT ;
        /*0030*/               @P0 BRA `(ENTRY) ;
        //## File "/s/k.cu", line 4
        /*0040*/                   IMAD.WIDE R2, R3, 0x4, c[0x0][0x160] ;
        /*0050*/                   LDG.E R0, [R2.64] ;
        /*0060*/                   BRA.DIV ~URZ, `(.L_x_2) ;
        //## File "/s/k.cu", line 5
        /*0070*/                   SHFL.BFLY PT, R3, R0, 0x10, 0x1f ;
        /*0080*/                   IMNMX R3, R0, R3, !PT ;
        /*0090*/                   SHFL.BFLY PT, R7, R3, 0x8, 0x1f ;
.L_x_3:
        /*00a0*/                   IMNMX R5, R7, R3, !PT ;
.L_x_1:
        /*00b0*/                   BSYNC B0 ;
.L_x_0:
        //## File "/s/k.cu", line 7
        /*00c0*/                   IADD3 R2, P0, R3, c[0x0][0x168], RZ ;
        /*00d0*/                   STG.E [R2.64], R5 ;
        /*00e0*/                   EXIT ;
.L_x_2:
        //## File "/s/k.cu", line 5
        /*00f0*/                   IMAD.MOV.U32 R7, RZ, RZ, 0x10 ;
        /*0100*/                   MOV R2, 0x120 ;
        /*0110*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm70_shflsync_bfly) ;
        /*0120*/                   IMNMX R3, R0, R7, !PT ;
        /*0130*/                   IMAD.MOV.U32 R7, RZ, RZ, 0x8 ;
        /*0140*/                   MOV R2, 0x160 ;
.L_x_4:
        /*0150*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm70_shflsync_bfly) ;
        /*0160*/                   BRA `(BACK) ;
$__internal_0_$__cuda_sm70_shflsync_bfly:
        /*0170*/                   IMAD.MOV.U32 R3, RZ, RZ, 0x0 ;
        /*0180*/                   WARPSYNC R6 ;
        /*0190*/                   SHFL.BFLY PT, R7, R0, R7, R5 ;
        /*01a0*/                   RET.REL.NODEC R2 `(_Z1kPKiPii) ;
.L_x_5:
        /*01b0*/                   BRA `(.L_x_5);
"""


def _kernel(entry: str = ".L_x_1", back: str = ".L_x_3"):
    text = DIVERGE.replace("ENTRY", entry).replace("BACK", back)
    return parse_disassembly(text)["_Z1kPKiPii"]


@pytest.mark.rule("S34")
def test_the_fallback_of_a_shuffle_is_off_the_main_path_and_no_loop() -> None:
    code, returns = divergent_fallbacks(_kernel())
    assert code == set(range(0xF0, 0x170, 0x10))
    assert returns == {0x160}
    sass = classify_kernel(_kernel())
    assert sass.loops == []  # the jump back from 0x160 to 0xa0 is not a loop
    by_line = line_class_counts(sass, {}, None, {})
    assert by_line[("/s/k.cu", 5)]["integer"] == 2  # one IMNMX a step, not two
    # S1's integer class, the converged version only: ISETP, IMAD.WIDE, 2 IMNMX, IADD3
    assert class_counts(sass, {})["integer"] == 5


@pytest.mark.rule("S34")
def test_a_block_another_branch_enters_is_not_a_fallback() -> None:
    code, returns = divergent_fallbacks(_kernel(entry=".L_x_4"))
    assert not code and not returns
    assert classify_kernel(_kernel(entry=".L_x_4")).totals()["integer"] > 5


@pytest.mark.rule("S34")
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("__cuda_sm70_shflsync_bfly", "__cuda_sm70_votesync_ballot"),  # a vote's fallback
        ("_Z1kPKiPii", "__omp_offloading_fe00_1_main_l9"),  # an OpenMP region's kernel (S13)
    ],
)
def test_fallbacks_other_than_a_cuda_kernels_shuffles_are_left(old: str, new: str) -> None:
    text = DIVERGE.replace("ENTRY", ".L_x_1").replace("BACK", ".L_x_3").replace(old, new)
    (function,) = parse_disassembly(text).values()
    assert divergent_fallbacks(function) == (set(), set())


@pytest.mark.rule("S34")
def test_a_jump_back_before_the_divergent_branch_stays_a_loop() -> None:
    function = _kernel(back=".L_x_9")  # back to the kernel's start: a real loop
    assert divergent_fallbacks(function) == (set(), set())
    assert [loop.start for loop in classify_kernel(function).loops] == [0]


# Written for this test: a butterfly max over the warp under a bounds check, five steps.
BUTTERFLY = """\
__global__ void butterfly(const int* x, int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = 0;
  if (i < n) {
    v = x[i];
    for (int m = 16; m > 0; m >>= 1) v = max(v, __shfl_xor_sync(0xffffffff, v, m));
  }
  y[i] = v;
}
"""


@pytest.mark.rule("S34")
@needs_clang
def test_clangs_shuffles_under_a_branch_count_each_step_once(tmp_path: Path) -> None:
    folder = clang_project(tmp_path, BUTTERFLY)
    compiler = Compiler("sm_86", load_database(folder), cache_root=tmp_path / "cache")
    sass, why = compiler.kernel(folder / "kernels.cu", "butterfly")
    assert sass is not None, why
    assert sass.loops == []  # the loop over m is unrolled; no fallback's jump is one
    by_line = line_class_counts(sass, {}, None, {})
    # max() inlines from clang's math header: one IMNMX per step, the fallback's are not run
    imnmx = sum(
        counts.get("integer", 0)
        for where, counts in by_line.items()
        if where[0].endswith("__clang_cuda_math.h")
    )
    assert imnmx == 5
