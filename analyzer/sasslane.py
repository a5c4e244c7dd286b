"""Rule S53: instructions predicated on a thread's lane in its warp being zero.

A block reduction ends each warp's shuffle tree with `if (lane == 0) shared[wid] = v`. The
compiler often sinks the last add of the tree under the same predicate
(`ISETP.NE.AND P0, PT, R4, RZ, PT` with `R4 = tid & 31`, then `@!P0 FADD`, `@!P0 STS`):
only lane 0 needs it. Nsight Compute counts a predicated instruction only for the threads
whose predicate is on, so it runs for one thread in 32 (`@P0`, lane != 0: 31 in 32).
Read here from the SASS's register flow; `analyzer.sass` gives each such instruction its
share (docs/counting.md, S53)."""

from __future__ import annotations

import re
from bisect import bisect_left

from roofcast.analyzer.sass import Instruction, SassFunction, written_registers

#: the lanes of a warp
WARP = 32
#: `ISETP.NE.AND P0, PT, R4, RZ, PT`: a register compared with zero, nothing else combined
_ZERO_TEST = re.compile(r"^(P[0-6]), PT, (R\d+), RZ, PT$")
#: `LOP3.LUT R4, R5, 0x1f, RZ, 0xc0, !PT`: a register's low five bits (a & b)
_LANE_BITS = re.compile(r"^(R\d+), (R\d+), 0x1f, RZ, 0xc0, !PT$")
#: `LOP3.LUT P0, RZ, R0, 0x1f, RZ, 0xc0, !PT`: a predicate set where the low five bits are
#: not all zero
_LANE_PREDICATE = re.compile(r"^(P[0-6]), RZ, (R\d+), 0x1f, RZ, 0xc0, !PT$")
#: instructions that go to a label
_BRANCHES = ("BRA", "BRX", "JMP", "JMX", "CALL", "EXIT", "RET")
#: thread-index arithmetic a lane is computed through (no load, no call)
_ARITHMETIC = ("IMAD", "IADD3", "LEA", "SHF", "MOV", "LOP3", "IADD", "SHL", "S2R", "S2UR")
#: special registers whose low bits are the lane (a thread index, or the lane itself)
_THREAD = re.compile(r"SR_(TID\.[XYZ]|LANEID)\b")
#: how many writers back a lane's register is traced to a thread index
_TRACE_STEPS = 8


def _plain(operands: str) -> str:
    """Operands without register-reuse hints (`R0.reuse`)."""
    return operands.replace(".reuse", "")


def _writer(insts: list[Instruction], writers: dict[str, list[int]], name: str, n: int) -> int:
    """The nearest instruction before `n` that writes `name`, -1 when none."""
    places = writers.get(name, [])
    k = bisect_left(places, n) - 1
    return places[k] if k >= 0 else -1


def _from_thread_index(insts: list[Instruction], writers: dict[str, list[int]], n: int) -> bool:
    """Whether the value `insts[n]` writes comes from a thread index (`S2R SR_TID.X`)
    through integer arithmetic alone, traced a few writers back."""
    pending, seen, found = [n], set(), False
    for _ in range(_TRACE_STEPS):
        later: list[int] = []
        for k in pending:
            if k in seen:
                continue
            seen.add(k)
            inst = insts[k]
            if inst.guard or inst.base not in _ARITHMETIC:
                return False
            if inst.base in ("S2R", "S2UR"):
                found = found or bool(_THREAD.search(inst.operands))
                continue
            ops = [o.strip() for o in inst.operands.split(",")][1:]
            for op in ops:
                for reg in re.findall(r"\bR\d+\b", op):
                    w = _writer(insts, writers, reg, k)
                    if w >= 0:
                        later.append(w)
        if not later:
            return found
        pending = later
    return False


def _lane_test(
    insts: list[Instruction], writers: dict[str, list[int]], w: int, predicate: str
) -> bool | None:
    """Whether the predicate `insts[w]` writes says the lane is zero (True), not zero
    (False), or is no lane test (None): `ISETP.NE|EQ.AND P, PT, Rx, RZ, PT` of
    `Rx = tid & 31`, or `LOP3.LUT P, RZ, tid, 0x1f, RZ, 0xc0, !PT` ((tid & 31) != 0)."""
    test = insts[w]
    if test.guard:
        return None
    operands = _plain(test.operands)
    lanes = _LANE_PREDICATE.match(operands) if test.opcode == "LOP3.LUT" else None
    if lanes is not None and lanes.group(1) == predicate:
        source = _writer(insts, writers, lanes.group(2), w)
        return False if source >= 0 and _from_thread_index(insts, writers, source) else None
    if not test.opcode.startswith(("ISETP.NE.AND", "ISETP.EQ.AND")):
        return None
    matched = _ZERO_TEST.match(operands)
    if matched is None or matched.group(1) != predicate:
        return None
    bits = _writer(insts, writers, matched.group(2), w)
    if bits < 0 or insts[bits].guard or insts[bits].opcode != "LOP3.LUT":
        return None
    masked = _LANE_BITS.match(_plain(insts[bits].operands))
    if masked is None:
        return None
    source = _writer(insts, writers, masked.group(2), bits)
    if source < 0 or not _from_thread_index(insts, writers, source):
        return None
    return test.opcode.startswith("ISETP.EQ")


def _entered(function: SassFunction, first: int, last: int, returns: set[int]) -> bool:
    """Whether a branch from outside addresses (first, last] lands inside them (a jump
    back from S34's shuffle fallback, which keeps the predicate, aside)."""
    for inst in function.instructions:
        target = function.labels.get(inst.target or "")
        if target is None or inst.base not in _BRANCHES or not first < target <= last:
            continue
        if not first < inst.address <= last and inst.address not in returns:
            return True
    return False


def lane_shares(function: SassFunction, returns: set[int]) -> dict[int, int]:
    """S53: address -> how many of a warp's 32 lanes run an instruction predicated on its
    lane being zero (1) or not (31). The predicate's writer is the nearest before it, and
    no branch from elsewhere enters the code between them; the tested value is the low
    five bits of a thread index. `returns`: S34's jumps back from shuffle fallbacks."""
    insts = function.instructions
    writers: dict[str, list[int]] = {}
    for n, inst in enumerate(insts):
        for name in written_registers(inst):
            writers.setdefault(name, []).append(n)
    out: dict[int, int] = {}
    for n, inst in enumerate(insts):
        predicate = inst.guard.lstrip("@!")
        if not predicate.startswith("P") or predicate == "PT" or inst.base in _BRANCHES:
            continue
        w = _writer(insts, writers, predicate, n)
        zero = _lane_test(insts, writers, w, predicate) if w >= 0 else None
        if zero is None:
            continue
        if _entered(function, insts[w].address, inst.address, returns):
            continue
        out[inst.address] = 1 if zero != inst.guard.startswith("@!") else WARP - 1
    return out
