"""Compile mode, an integer-only loop unrolled without a remainder loop (docs/counting.md
S31): its counter steps by the unroll factor and its exit compares the counter with the
trip count, so it runs trip / U times; a loop whose source step is the counter's compares
with trip x step and is not unrolled."""

from __future__ import annotations

import pytest
import sympy
from roofcast.analyzer.sass import classify_kernel, parse_disassembly
from roofcast.features.sasscount import class_counts

# Hand-written nvdisasm -gi excerpt: `for (int k = 0; k < 64; k++) c += (x >> k) & 1;`
# unrolled 8 times (two of the eight copies written out, the rest elided): the counter R4
# steps by 8, the exit compares R4 + 7 with 63.
BITS = """\
        .section        .text._Z4bitsPKjPi,"ax",@progbits
_Z4bitsPKjPi:
        //## File "/s/b.cu", line 3
        /*0000*/                   IMAD.MOV.U32 R4, RZ, RZ, RZ ;
        /*0010*/                   IMAD.MOV.U32 R5, RZ, RZ, RZ ;
.L_x_1:
        //## File "/s/b.cu", line 5
        /*0020*/                   SHF.R.U32.HI R6, RZ, R4, R2 ;
        /*0030*/                   LOP3.LUT R6, R6, 0x1, RZ, 0xc0, !PT ;
        /*0040*/                   IADD3 R5, R5, R6, RZ ;
        /*0050*/                   SHF.R.U32.HI R7, RZ, 0x1, R6 ;
        /*0060*/                   LOP3.LUT R7, R7, 0x1, RZ, 0xc0, !PT ;
        /*0070*/                   IADD3 R5, R5, R7, RZ ;
        //## File "/s/b.cu", line 4
        /*0080*/                   LOP3.LUT R8, R4, 0x7, RZ, 0xfc, !PT ;
        /*0090*/                   ISETP.GE.U32.AND P0, PT, R8, 0x3f, PT ;
        /*00a0*/                   IADD3 R4, R4, 0x8, RZ ;
        /*00b0*/              @!P0 BRA `(.L_x_1) ;
        //## File "/s/b.cu", line 6
        /*00c0*/                   STG.E [R2.64], R5 ;
        /*00d0*/                   EXIT ;
.L_x_2:
        /*00e0*/                   BRA `(.L_x_2);
"""

LINES = {("/s/b.cu", 4): (sympy.Integer(64),), ("/s/b.cu", 5): (sympy.Integer(64),)}


@pytest.mark.rule("S31")
def test_an_integer_loop_counting_iterations_by_eight_runs_an_eighth_of_its_trips() -> None:
    kernel = classify_kernel(parse_disassembly(BITS)["_Z4bitsPKjPi"])
    (loop,) = kernel.loops
    assert (loop.step, loop.bound) == (8, 0x3F)
    # 2 outside the loop, 9 in it (6 on line 5, 3 of control) run 64 / 8 times
    assert class_counts(kernel, LINES)["integer"] == 2 + 9 * 8


@pytest.mark.rule("S31")
def test_a_loop_whose_source_steps_by_eight_is_not_taken_as_unrolled() -> None:
    # `for (int k = 0; k < 512; k += 8)`: 64 trips, the exit compares with 511
    listing = BITS.replace("0x3f, PT", "0x1ff, PT")
    kernel = classify_kernel(parse_disassembly(listing)["_Z4bitsPKjPi"])
    assert class_counts(kernel, LINES)["integer"] == 2 + 9 * 64
