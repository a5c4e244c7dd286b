"""Compile mode, code behind guards on loaded data (docs/counting.md S30): what follows a
predicated `EXIT`, or what a conditional forward branch skips, when the predicate rests on
a value the thread loaded, runs only for the threads the data lets through; a guard on
thread positions and parameters is S16's, and an if/else is S10's."""

from __future__ import annotations

import pytest
from roofcast.analyzer.sass import classify_kernel, data_guards, find_loops, parse_disassembly
from roofcast.features.sasscount import DATA_SHARE, class_counts

# Hand-written nvdisasm -gi excerpts. `early`: `if (i >= n) return;` (a position against a
# parameter), then `if (x[i] <= 0) return;` (loaded data), then integer work.
EARLY = """\
        .section        .text._Z5earlyPKfPfi,"ax",@progbits
_Z5earlyPKfPfi:
        //## File "/s/g.cu", line 2
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   IMAD R0, R3, c[0x0][0x0], R0 ;
        //## File "/s/g.cu", line 3
        /*0020*/                   ISETP.GE.AND P0, PT, R0, c[0x0][0x170], PT ;
        /*0030*/               @P0 EXIT ;
        //## File "/s/g.cu", line 4
        /*0040*/                   IMAD.WIDE R2, R0, R7, c[0x0][0x160] ;
        /*0050*/                   LDG.E R5, [R2.64] ;
        /*0060*/                   FSETP.GTU.AND P0, PT, R5, RZ, PT ;
        /*0070*/              @!P0 EXIT ;
        //## File "/s/g.cu", line 5
        /*0080*/                   LOP3.LUT R5, R5, 0xff, RZ, 0xc0, !PT ;
        /*0090*/                   IMAD.WIDE R2, R0, R7, c[0x0][0x168] ;
        /*00a0*/                   STG.E [R2.64], R5 ;
        /*00b0*/                   EXIT ;
.L_x_9:
        /*00c0*/                   BRA `(.L_x_9);
"""

# `skip`: a loop whose body skips its tail when a loaded value is small (`continue`), then
# an if/else on loaded data after the loop (S10 keeps one side whole).
SKIP = """\
        .section        .text._Z4skipPKiPii,"ax",@progbits
_Z4skipPKiPii:
        //## File "/s/s.cu", line 3
        /*0000*/                   IMAD.MOV.U32 R4, RZ, RZ, RZ ;
.L_x_1:
        //## File "/s/s.cu", line 4
        /*0010*/                   LDG.E R6, [R2.64] ;
        /*0020*/                   IADD3 R7, R6, -0x3, RZ ;
        /*0030*/                   ISETP.GT.AND P1, PT, R7, c[0x0][0x170], PT ;
        /*0040*/               @P1 BRA `(.L_x_2) ;
        //## File "/s/s.cu", line 5
        /*0050*/                   IMAD R8, R6, R6, R8 ;
        /*0060*/                   LOP3.LUT R8, R8, 0xff, RZ, 0xc0, !PT ;
.L_x_2:
        //## File "/s/s.cu", line 3
        /*0070*/                   IADD3 R4, R4, 0x1, RZ ;
        /*0080*/                   ISETP.NE.AND P0, PT, R4, c[0x0][0x174], PT ;
        /*0090*/               @P0 BRA `(.L_x_1) ;
        //## File "/s/s.cu", line 7
        /*00a0*/                   ISETP.GE.AND P2, PT, R8, RZ, PT ;
        /*00b0*/               @P2 BRA `(.L_x_3) ;
        /*00c0*/                   IADD3 R8, R8, 0x1, RZ ;
        /*00d0*/                   BRA `(.L_x_4) ;
.L_x_3:
        //## File "/s/s.cu", line 8
        /*00e0*/                   IADD3 R8, R8, -0x1, RZ ;
        /*00f0*/                   SHF.L.U32 R8, R8, 0x1, RZ ;
.L_x_4:
        //## File "/s/s.cu", line 9
        /*0100*/                   STG.E [R2.64], R8 ;
        /*0110*/                   EXIT ;
.L_x_5:
        /*0120*/                   BRA `(.L_x_5);
"""


def _guards(listing: str, name: str) -> dict[int, int]:
    function = parse_disassembly(listing)[name]
    return data_guards(function, find_loops(function))


@pytest.mark.rule("S30")
def test_an_exit_on_loaded_data_guards_what_follows_and_one_on_positions_does_not() -> None:
    guards = _guards(EARLY, "_Z5earlyPKfPfi")
    # after `if (i >= n) return;` and before the data guard: every thread (S16's share)
    assert not any(guards.get(a) for a in (0x40, 0x50, 0x60, 0x70))
    # after the EXIT on the loaded x[i]: the threads the data lets through
    assert [guards.get(a) for a in (0x80, 0x90, 0xA0, 0xB0)] == [1, 1, 1, 1]


@pytest.mark.rule("S30")
def test_a_branch_on_loaded_data_guards_what_it_skips_but_an_if_else_is_s10s() -> None:
    guards = _guards(SKIP, "_Z4skipPKiPii")
    # the tail of the body a `continue` on loaded data skips
    assert guards.get(0x50) == guards.get(0x60) == 1
    # the loop's control runs every trip; both sides of the if/else are S10's
    assert not any(guards.get(a) for a in (0x70, 0x80, 0x90, 0xC0, 0xE0, 0xF0, 0x100))


@pytest.mark.rule("S30")
def test_guarded_instructions_count_for_the_data_share_of_the_threads() -> None:
    kernel = classify_kernel(parse_disassembly(EARLY)["_Z5earlyPKfPfi"])
    counts = class_counts(kernel, {})
    # IMAD, ISETP, IMAD.WIDE before the data guard (FSETP is no int op); LOP3 and
    # IMAD.WIDE behind it, and the store
    assert counts["integer"] == 3 + 2 * DATA_SHARE
    assert counts["store_4"] == DATA_SHARE


@pytest.mark.rule("S30")
def test_floating_point_work_behind_a_data_guard_is_left_whole() -> None:
    listing = EARLY.replace("LOP3.LUT R5, R5, 0xff, RZ, 0xc0, !PT", "FMUL R5, R5, R5")
    guards = _guards(listing, "_Z5earlyPKfPfi")
    assert not any(guards.values())
    counts = class_counts(classify_kernel(parse_disassembly(listing)["_Z5earlyPKfPfi"]), {})
    assert counts["fmul"] == 1
    assert counts["integer"] == 4


@pytest.mark.rule("S30")
def test_an_exit_before_a_loop_is_the_loops_entry_test_not_a_guard() -> None:
    # `k = *bottom + i; while (k < n) { ...; k += stride; }`: the EXIT tests the entry
    listing = EARLY.replace(
        """        //## File "/s/g.cu", line 5
        /*0080*/""",
        """        //## File "/s/g.cu", line 5
.L_x_4:
        /*0080*/""",
    ).replace(
        "        /*00b0*/                   EXIT ;",
        "        /*00b0*/              @!P0 BRA `(.L_x_4) ;\n"
        "        /*00b8*/                   EXIT ;",
    )
    assert not any(_guards(listing, "_Z5earlyPKfPfi").values())
