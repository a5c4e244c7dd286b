"""SASS (`nvdisasm -gi -c` text) read into per-kernel instruction classes, by source line and
by the loops the compiler kept (docs/counting.md, "Compile mode", rules S1-S6, S10, S28, S29;
S34 and S40 in their own modules).

Nsight Compute counts executed SASS instructions per class; the compiler's address
arithmetic, loop control and library expansions are in them and nowhere in the source.
This module only reads text: it runs no tool.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

#: rule S1: SASS opcode (before the first `.`) -> Nsight Compute's `sass_thread_inst_executed_op_*`
#: class; an FMA counts 2 FLOPs in `flops`, as ncu's FLOP metrics do.
FP_CLASSES: dict[str, str] = {
    "FADD": "fadd", "FADD32I": "fadd", "FMUL": "fmul", "FMUL32I": "fmul",
    "FFMA": "ffma", "FFMA32I": "ffma",
    "DADD": "dadd", "DMUL": "dmul", "DFMA": "dfma",
    "HADD2": "hadd", "HADD2_32I": "hadd", "HMUL2": "hmul", "HMUL2_32I": "hmul",
    "HFMA2": "hfma", "HFMA2_32I": "hfma",
}  # fmt: skip
#: rule S1: the integer class (arithmetic, logic, shifts, compares, bit counts); not moves,
#: selects, permutes, sign extension, conversions or uniform-datapath (U*) instructions.
INTEGER_OPCODES: frozenset[str] = frozenset(
    {
        "IADD3", "IADD", "IADD32I", "IMAD", "IMAD32I", "IMUL", "IMUL32I", "LOP3", "LOP",
        "LOP32I", "SHF", "SHL", "SHR", "LEA", "ISETP", "IABS", "IMNMX", "POPC", "FLO", "BREV",
        "BMSK", "IDP", "VABSDIFF", "VABSDIFF4", "ISCADD", "ISCADD32I", "VIADD", "VIMNMX",
        "VIADDMNMX", "IMNMX32I",
    }
)  # fmt: skip
#: every class a kernel's counts are kept in
CLASSES: tuple[str, ...] = (
    "fadd", "fmul", "ffma", "dadd", "dmul", "dfma", "hadd", "hmul", "hfma", "integer",
)  # fmt: skip
_WIDTH = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}

_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
_LOCATION = re.compile(r'(?:File|at) "([^"]*)", line (\d+)')
_INSTRUCTION = re.compile(
    r"^\s*/\*([0-9a-f]+)\*/\s+(?:(@!?U?P[T0-9]+)\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);"
)
_LABEL = re.compile(r"^(\.L_x_\d+|\$[^:\s]+):")
_TARGET = re.compile(r"`\(([^)]+)\)")


@dataclass(frozen=True)
class Instruction:
    address: int
    opcode: str  # with modifiers, e.g. IMAD.MOV.U32
    operands: str
    #: source locations, innermost first: (file, line), then each `inlined at` call site
    where: tuple[tuple[str, int], ...]
    guard: str = ""  # the predicate (`@P0`, `@!P1`), '' when unconditional

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]

    @property
    def target(self) -> str | None:
        """The label a branch or call goes to."""
        found = _TARGET.search(self.operands)
        return found.group(1) if found else None


@dataclass
class SassFunction:
    """One `.text.<mangled>` section: its instructions and labels (label -> address)."""

    name: str
    instructions: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)


def parse_disassembly(text: str) -> dict[str, SassFunction]:
    """Functions by mangled name, from `nvdisasm -gi -c` output (rule S2 reads the
    `//## File "f", line n [inlined at "g", line m ...]` comments)."""
    functions: dict[str, SassFunction] = {}
    current: SassFunction | None = None
    where: tuple[tuple[str, int], ...] = ()
    pending: list[str] = []
    after_location = False
    for line in text.splitlines():
        section = _SECTION.match(line)
        if section:
            current = functions.setdefault(section.group(1), SassFunction(section.group(1)))
            where, pending = (), []
            continue
        if current is None:
            continue
        if "//##" in line:
            found_where = tuple((f, int(n)) for f, n in _LOCATION.findall(line))
            # `-gi` follows an inlined location with its outermost one alone: keep the chain
            if not (after_location and where[-len(found_where) :] == found_where):
                where = found_where
            after_location = True
            continue
        label = _LABEL.match(line.strip())
        if label:
            pending.append(label.group(1))
            continue
        found = _INSTRUCTION.match(line)
        if found:
            after_location = False
            address = int(found.group(1), 16)
            for name in pending:
                current.labels[name] = address
            pending = []
            current.instructions.append(
                Instruction(
                    address, found.group(3), found.group(4).strip(), where, found.group(2) or ""
                )
            )
    return functions


def op_class(inst: Instruction) -> str | None:
    """Rule S1: the ncu class of one instruction, or None (counted in no class)."""
    base = inst.base
    if base in FP_CLASSES:
        return FP_CLASSES[base]
    if base in INTEGER_OPCODES:
        return "integer"
    return None


def global_width(inst: Instruction) -> tuple[str, int] | None:
    """Rule S1: ("load" | "store", bytes per thread) of a global load or store (LDG/STG)."""
    if inst.base not in ("LDG", "STG"):
        return None
    parts = inst.opcode.split(".")[1:]
    width = next((_WIDTH[p] for p in parts if p in _WIDTH), 4)
    return ("load" if inst.base == "LDG" else "store"), width


@dataclass(frozen=True)
class Loop:
    """A loop the compiler kept: a backward branch and its target (rule S4)."""

    start: int
    end: int  # the backward branch's address
    line: tuple[str, int] | None  # the branch's outermost source location
    unroll: int = 1
    remainder: bool = False
    #: without a remainder loop: how many times each work instruction repeats in the body
    #: (the gcd of their counts by opcode), the unroll factor if the trip count allows (S8)
    copies: int = 1
    #: a remainder loop's main loop (its start; -1 for a main loop)
    main: int = -1
    #: S32: a shared-memory compare-and-swap retried on an address the whole block shares
    spin: bool = False
    #: S31: an integer-only main loop without remainder: its counter's step and the
    #: constant its exit compares the counter with (0: none found)
    step: int = 0
    bound: int = 0
    #: S29: a loop unrolled `unroll` times whose odd trips run one straight copy after it
    odd: bool = False


@dataclass
class LineCounts:
    """What one group of instructions adds: class counts of instructions sharing a source
    location and a path through the kept loops (rule S5)."""

    where: tuple[tuple[str, int], ...]
    depth: int  # kept (main) loops around the instructions
    unroll: int  # product of those loops' unroll factors
    counts: Counter[str] = field(default_factory=Counter)
    #: each kept loop's S8 copies, outermost first (1: no repeated body seen)
    copies: tuple[int, ...] = ()
    #: the S9 branch-over regions the instructions lie in (ids in KernelSass.regions)
    regions: tuple[int, ...] = ()
    #: the start addresses of the kept loops around, outermost first (S5's loop identity)
    loops: tuple[int, ...] = ()
    #: S15: the start of the called function the instructions lie in (-1: the kernel's own
    #: code); such instructions run once per executed call of it
    callee: int = -1
    #: S15: how many `CALL`s to each called function (by start) the group holds
    calls: Counter[int] = field(default_factory=Counter)
    #: S30: how many guards on loaded data the instructions lie under
    guards: int = 0
    #: S46: inlined library code's nearest kernel-file locations before and after it
    beside: tuple[tuple[str, int], ...] = ()
    #: S53: of a warp's 32 lanes, how many run the instructions (predicated on the lane)
    lanes: int = 32
    #: S54: in the straight copy after an S29 loop unrolled `odd` times (0: not in one);
    #: it runs (trip count mod `odd`) times per run of that loop
    odd: int = 0


@dataclass
class KernelSass:
    """A kernel's SASS classed by source location and kept loops."""

    name: str
    groups: list[LineCounts]
    loops: list[Loop]
    dropped: int = 0  # instructions off the main path (remainder loops, slow paths)
    #: S9: region id -> locations of the kept loops' back-edge branches inside it
    regions: dict[int, list[tuple[tuple[str, int], ...]]] = field(default_factory=dict)

    def totals(self) -> Counter[str]:
        """Static counts (each instruction once), for tests and `explain`."""
        out: Counter[str] = Counter()
        for group in self.groups:
            out.update(group.counts)
        return out


def _work(inst: Instruction) -> bool:
    """Instructions a loop body does once per source iteration (FP math, memory): what an
    unrolled copy repeats, as opposed to loop control the compiler merges."""
    return inst.base in FP_CLASSES or inst.base.startswith(("LD", "ST", "ATOM", "RED", "MUFU"))


def find_loops(function: SassFunction) -> list[Loop]:
    """Rule S4: loops from backward branches (not to themselves). Of loops with the same
    parent loop whose branches come from one source line, the one with most instructions
    is the main loop, the others remainder loops. The main loop's unroll factor is its
    work instructions over the smallest remainder's (1 without a remainder)."""
    from roofcast.analyzer.sassdiverge import divergent_fallbacks  # imports this module

    insts = function.instructions
    raw: list[tuple[int, int, tuple[str, int] | None]] = []
    returns = divergent_fallbacks(function)[1]  # S34: a fallback's jump back is no loop
    for inst in insts:
        if inst.base != "BRA" or inst.address in returns:
            continue
        target = inst.target
        start = function.labels.get(target) if target else None
        # a branch to itself after EXIT is the trap padding the function, not a loop
        if start is not None and start < inst.address:
            raw.append((start, inst.address, inst.where[-1] if inst.where else None))

    def parent(loop: tuple[int, int, object]) -> tuple[int, int] | None:
        around = [r for r in raw if r[0] <= loop[0] and loop[1] <= r[1] and r[:2] != loop[:2]]
        return min(around, key=lambda r: r[1] - r[0])[:2] if around else None

    def work(loop: tuple[int, int, object]) -> int:
        return sum(1 for i in insts if loop[0] <= i.address <= loop[1] and _work(i))

    groups: dict[tuple, list[tuple[int, int, tuple[str, int] | None]]] = {}
    for loop in raw:
        groups.setdefault((parent(loop), loop[2]), []).append(loop)
    jumps = [
        (i.address, function.labels[i.target])
        for i in insts
        if i.base == "BRA" and not i.guard and i.target in function.labels
    ]

    def skipped(first: tuple, later: tuple) -> bool:
        """Whether code after `first` jumps over `later` unconditionally: the two are
        alternatives (loop versions, one runs), not copies run one after the other."""
        return any(first[1] < src < later[0] and dst > later[1] for src, dst in jumps)

    loops: list[Loop] = []
    for members in groups.values():
        mains = _mains(members, work)
        for n, (main, rest) in enumerate(mains):
            if any(skipped(other, main) for other, _ in mains[:n]):
                loops.append(Loop(main[0], main[1], main[2], 1, remainder=True))
                loops.extend(Loop(r[0], r[1], r[2], 1, remainder=True) for r in rest)
                continue
            unroll = 1
            if rest:
                smallest = min(work(r) for r in rest)
                if smallest > 0:
                    unroll = max(1, round(work(main) / smallest))
                elif work(main) == 0:  # S25: integer work only, by the counters' steps
                    unroll = _step_ratio(insts, main, rest)
            copies = 1 if rest else _copies(insts, main, raw)
            step, bound = (0, 0)
            if not rest and work(main) == 0 and not any(_inside(r, main) for r in raw):
                step, bound = _counter_bound(insts, main)  # S31
            loops.append(
                Loop(main[0], main[1], main[2], unroll, copies=copies, step=step, bound=bound)
            )
            loops.extend(Loop(r[0], r[1], r[2], 1, remainder=True, main=main[0]) for r in rest)
    return sorted(loops, key=lambda loop: (loop.start, -loop.end))


def _self_update(inst: Instruction) -> int | None:
    """S25: the constant of a self-update `IADD3 R6, R6, -0x8, RZ` (its size), else None."""
    if inst.base != "IADD3" or inst.guard:
        return None
    ops = [o.strip() for o in inst.operands.split(",")]
    if len(ops) == 4 and ops[0] == ops[1] and ops[3] == "RZ":
        try:
            return abs(int(ops[2], 16 if "0x" in ops[2] else 10))
        except ValueError:
            return None
    return None


def _counter_step(insts: list[Instruction], loop: tuple) -> int | None:
    """S25: the constant step of a loop's first self-update `IADD3 R6, R6, -0x8, RZ`."""
    for inst in insts:
        if loop[0] <= inst.address <= loop[1]:
            step = _self_update(inst)
            if step is not None:
                return step
    return None


def _inside(inner: tuple, outer: tuple) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1] and inner[:2] != outer[:2]


def _counter_bound(insts: list[Instruction], loop: tuple) -> tuple[int, int]:
    """S31: (step, bound) of an integer-only loop's counter: the constant of its first
    self-update `IADD3 R4, R4, 0x8, RZ` and the constant an `ISETP` of the loop compares
    it (or a value the loop computes from it) with; (0, 0) when either is missing."""
    body = [i for i in insts if loop[0] <= i.address <= loop[1]]
    step = _counter_step(insts, loop)
    if not step:
        return 0, 0
    update = next((i for i in body if _self_update(i) == step), None)
    if update is None:
        return 0, 0
    derived = written_registers(update)
    for inst in body:
        if _read(inst) & derived:
            derived |= {w for w in written_registers(inst) if w.startswith("R")}
    for inst in body:
        ops = [o.strip() for o in inst.operands.split(",")]
        if inst.base != "ISETP" or len(ops) < 4 or ops[2] not in derived:
            continue
        try:
            return step, int(ops[3], 16 if ops[3].startswith("0x") else 10)
        except ValueError:
            continue
    return 0, 0


def _step_ratio(insts: list[Instruction], main: tuple, rest: list[tuple]) -> int:
    """S25: the unroll factor of a main loop with no FP or memory work (an integer
    recurrence unrolled U times): its counter's step over its remainders' (1 if unknown)."""
    big = _counter_step(insts, main)
    steps = [_counter_step(insts, r) for r in rest]
    small = min((s for s in steps if s), default=None)
    if big and small and big % small == 0:
        return big // small
    return 1


def _mains(
    members: list[tuple[int, int, tuple[str, int] | None]],
    work: Callable[[tuple[int, int, object]], int],
) -> list[tuple[tuple, list[tuple]]]:
    """Rule S4: loops of one source line in one parent loop, as (main loop, its remainder
    loops). The largest is a main loop, and so is any with more than two thirds of its
    work instructions: a copy of the same loop (a function inlined twice, whose line
    table without inline chains gives both copies the callee's lines). Each other loop
    is a remainder (1/2, 1/4 ... of an unrolled body, before or after it) of the main
    loop nearest to it."""
    largest = max(members, key=lambda r: (r[1] - r[0], -r[0]))
    mains = [r for r in members if r is largest or 3 * work(r) > 2 * work(largest)]
    out: dict[tuple, list[tuple]] = {main[:2]: [] for main in mains}
    for loop in members:
        if loop[:2] in out:
            continue
        near = min(mains, key=lambda m: min(abs(loop[0] - m[1]), abs(m[0] - loop[1])))
        out[near[:2]].append(loop)
    return [(main, out[main[:2]]) for main in sorted(mains, key=lambda r: r[0])]


def _copies(insts: list[Instruction], loop: tuple, raw: list[tuple]) -> int:
    """Rule S8: the gcd of the counts, by opcode, of the work instructions directly in
    `loop` (not in loops nested in it): a body unrolled u times repeats each u times."""
    inner = [r for r in raw if loop[0] <= r[0] and r[1] <= loop[1] and r[:2] != loop[:2]]
    found: Counter[str] = Counter(
        i.opcode
        for i in insts
        if loop[0] <= i.address <= loop[1]
        and _work(i)
        and not any(r[0] <= i.address <= r[1] for r in inner)
    )
    return math.gcd(*found.values()) if found else 1


def odd_iterations(function: SassFunction, loops: list[Loop]) -> tuple[list[Loop], dict[int, int]]:
    """Rule S29: a loop unrolled twice (or c times) with a symbolic trip count whose
    remainder is one straight copy of the body, not a loop: a main loop without remainder
    loops or loops inside, whose back edge is followed (after the odd trip's test) by a
    conditional forward branch over code that repeats its work instructions once for the
    body's c times (opcode by opcode) and that nothing else enters (`_closed`). The loop
    runs trip count / c times: its unroll factor is c, and the copy (the odd iteration)
    is off the main path like a remainder loop, unless S54 can count its runs exactly.
    Returns the loops with those factors set and the copies' addresses, each with c."""
    insts = function.instructions
    index = {inst.address: n for n, inst in enumerate(insts)}
    out: list[Loop] = []
    odd: dict[int, int] = {}
    for loop in loops:
        copy, times = _odd_copy(function, index, loop, loops)
        if copy:
            odd.update((i.address, times) for i in copy)
            loop = replace(loop, unroll=times, odd=True)
        out.append(loop)
    return out, odd


def _odd_copy(
    function: SassFunction, index: dict[int, int], loop: Loop, loops: list[Loop]
) -> tuple[list[Instruction], int]:
    """S29: the straight copy of one iteration of `loop` after its back edge and how many
    the body holds, or ([], 1). That c divides the body's S8 copies, which count a work
    instruction an iteration repeats (two loads of one array) once per repeat; when it
    is less, no other straight block may follow (that is S40's ladder, or unknown)."""
    none: tuple[list[Instruction], int] = ([], 1)
    insts = function.instructions
    if loop.remainder or loop.copies < 2 or loop.unroll != 1:
        return none
    if any(
        lp.main == loop.start or (lp is not loop and loop.start <= lp.start and lp.end <= loop.end)
        for lp in loops
    ):
        return none
    skip = forward_skip(function, index, index[loop.end] + 1)  # past the odd trip's test
    if skip is None:
        return none
    n, end = skip
    target = insts[end].address
    block = insts[n + 1 : end]
    if not block or not _closed(function, block, target):
        return none
    body = Counter(i.opcode for i in insts[index[loop.start] : index[loop.end] + 1] if _work(i))
    once = Counter(i.opcode for i in block if _work(i))
    first = next(iter(once), None)
    times = body[first] // once[first] if first else 0
    if (
        times < 2
        or loop.copies % times
        or body != Counter({op: times * k for op, k in once.items()})
    ):
        return none
    if times < loop.copies:  # a body repeating work within an iteration: no ladder after
        after = forward_skip(function, index, end)
        if after is not None and any(_work(i) for i in insts[after[0] + 1 : after[1]]):
            return none  # another copy follows
    return block, times


def forward_skip(function: SassFunction, index: dict[int, int], n: int) -> tuple[int, int] | None:
    """S29, S40: the next flow instruction at or after instruction n (past code that is
    neither work nor flow: a test), when it is a conditional `BRA` forward to a label:
    (its index, its target's index); else None."""
    insts = function.instructions
    while n < len(insts) and insts[n].base not in _FLOW_END and not _work(insts[n]):
        n += 1
    if n >= len(insts):
        return None
    skip = insts[n]
    target = function.labels.get(skip.target or "")
    if skip.base != "BRA" or not skip.guard or target is None or target <= skip.address:
        return None
    end = index.get(target)
    return None if end is None else (n, end)


def _closed(function: SassFunction, block: list[Instruction], end: int) -> bool:
    """S29: whether `block` (up to `end`) is one iteration's straight code: its branches go
    forward within it or to `end` (an if/else of the body, a slow path's `CALL`), nothing
    outside branches into it, and it neither exits nor returns."""
    first = block[0].address
    for inst in block:
        if inst.base in ("BRA", "CALL"):
            target = function.labels.get(inst.target or "")
            if inst.base == "BRA" and (target is None or not inst.address < target <= end):
                return False
        elif inst.base in _FLOW_END:
            return False
    for inst in function.instructions:
        target = function.labels.get(inst.target or "") if inst.base == "BRA" else None
        if target is not None and first < target < end and not first <= inst.address < end:
            return False
    return True


def callee_name(target: str) -> str:
    """The function a CALL target names: clang places a device function it did not inline
    in the kernel's section as `$<kernel>$<function>`, the toolkit its routines as
    `$__internal_N_$<routine>`; a function of its own section is named as is."""
    return target.rsplit("$", 1)[-1] if target.startswith("$") else target


def program_function(target: str) -> bool:
    """S15: whether a CALL target is a function run on every call: the program's, or a
    toolkit routine that is a math function's core (S23: `__internal_accurate_pow`, pow's
    logarithm and exponential for every finite non-zero base); not the other toolkit
    routines (a name reserved to the implementation: `__cuda_sm20_div_rn_f64_full`, S6's
    slow paths) nor a local label (`.L_x_7`, a compiler's jump to a function's return)."""
    name = callee_name(target)
    if name.startswith(_CORE_ROUTINES):
        return True
    return bool(name) and not name.startswith(("__", ".")) and name not in _RUNTIME


#: S23: toolkit routines a math function calls on its common path (not a rare case)
_CORE_ROUTINES = ("__internal_accurate_",)


#: the device runtime's functions (their code is not in the unit)
_RUNTIME = frozenset({"malloc", "free", "vprintf", "printf", "__assertfail"})


def called_functions(function: SassFunction) -> dict[int, int]:
    """S15: start -> end (exclusive) of every function of the program that the kernel
    calls and whose code lies in its section: from its label to the next called
    routine's label (a function ends where the next begins; several `RET`s may end
    it) or to the end."""
    named = sorted(
        {
            function.labels[i.target]
            for i in function.instructions
            if i.base == "CALL" and i.target in function.labels and not i.target.startswith(".")
        }
    )
    program = {
        function.labels[i.target]
        for i in function.instructions
        if i.base == "CALL" and i.target in function.labels and program_function(i.target)
    }
    last = function.instructions[-1].address + 1 if function.instructions else 0
    out = {}
    for n, start in enumerate(named):
        if start in program:
            out[start] = named[n + 1] if n + 1 < len(named) else last
    return out


def remainder_chunks(function: SassFunction, loops: list[Loop]) -> set[int]:
    """Rule S4: addresses of straight-line copies of an unrolled loop's body between the
    main loop and its last remainder loop (a ladder: the main loop unrolled 16 times, one
    8-fold chunk, then remainder loops). S5 counts the main loop's body trip count / U
    times, every iteration; a chunk runs iterations the remainder would, as remainder
    loops do, so it is off the main path like them. Only the instructions on source lines
    of the main loop's body are, in straight blocks holding work (FP, memory): what
    follows the loop in the source, and the remainder's setup, stay."""
    insts = function.instructions
    addresses = [i.address for i in insts]
    starts = set(function.labels.values())
    out: set[int] = set()
    for main in loops:
        if main.remainder:
            continue
        rest = [lp for lp in loops if lp.main == main.start and lp.start > main.end]
        if not rest:
            continue
        end = max(lp.end for lp in rest)
        first, last = bisect_left(addresses, main.start), bisect_right(addresses, main.end)
        body = {i.where for i in insts[first:last] if i.where}
        blocks: list[list[Instruction]] = []
        after_jump = True
        for i in insts[last : bisect_left(addresses, end)]:
            if after_jump or i.address in starts:
                blocks.append([])
            after_jump = i.base in _FLOW_END
            inside = any(lp.start <= i.address <= lp.end and lp.start > main.end for lp in loops)
            if i.where in body and not inside:
                blocks[-1].append(i)
        for block in blocks:
            if any(_work(i) for i in block):  # a copy of the body, not the remainder's setup
                out.update(i.address for i in block)
    return out


def slow_path_addresses(function: SassFunction) -> set[int]:
    """Rule S6: addresses of subroutines reached by CALL (the `__internal_*` slow paths of
    division, sqrt and the like), from their label to their RET; not the functions of the
    program (S15). A `CALL` to a local label (`@!P0 CALL.REL.NOINC .L_x_45` before a loop's
    back edge) is S24's loop exit, not a subroutine: what follows its label is the code
    after the loop."""
    targets = {
        i.target
        for i in function.instructions
        if i.base == "CALL"
        and i.target
        and not i.target.startswith(".")
        and not program_function(i.target)
    }
    starts = {function.labels[t] for t in targets if t in function.labels}
    out: set[int] = set()
    inside = False
    for inst in function.instructions:
        if inst.address in starts:
            inside = True
        if inside:
            out.add(inst.address)
            if inst.base == "RET":
                inside = False
    return out


_PREDICATE = re.compile(r"\bU?P[0-6]\b")
_FLOW_END = ("BRA", "EXIT", "RET", "CALL", "BRX", "JMP", "JMX", "BREAK", "CONT", "WARPSYNC")

#: S28: a float compared with FLT_MIN (as nvdisasm prints it), true for normal values
#: (`FSETP.GEU.AND P0, PT, |R4|, 1.175494350822287508e-38, PT`), or an exponent with -126,
#: true where its power of two is normal (`FSETP.GEU.AND P0, PT, R14, -126, PT`)
_NORMAL_TEST = re.compile(
    r"^(U?P[0-6]), U?P[T0-6], (?:\|?-?R\d+\|?, 1\.175494350822287508e-38|R\d+, -126)(?=,|$)"
)


def denormal_fixups(function: SassFunction) -> set[int]:
    """Rule S28: addresses of the instructions guarded by the negation of a test that a
    float is at least FLT_MIN (`@!P0 FMUL R4, R4, 16777216` scaling a denormal input of an
    approximate sqrt, reciprocal or logarithm, and the scaling back of its result).
    Nsight Compute counts a predicated instruction only for threads whose predicate is
    on: these run for denormal (or zero, negative) operands alone. A predicate is
    followed from its test to the next label or instruction that names it otherwise."""
    out: set[int] = set()
    normal: set[str] = set()
    starts = set(function.labels.values())
    for inst in function.instructions:
        if inst.address in starts:
            normal.clear()
        if inst.guard.startswith("@!") and inst.guard[2:] in normal:
            if inst.base not in _FLOW_END:
                out.add(inst.address)
            continue
        touched = set(_PREDICATE.findall(inst.operands))
        normal -= touched
        test = _NORMAL_TEST.match(inst.operands)
        if test and inst.opcode.startswith(("FSETP.GEU.", "FSETP.GE.")):
            normal.add(test.group(1))
    return out


def _cost(insts: list[Instruction], skip: set[int]) -> int:
    """What a path does, to pick the costlier of exclusive paths: its classed instructions."""
    return sum(1 for i in insts if i.address not in skip and op_class(i) is not None)


def exclusive_paths(function: SassFunction, loops: list[Loop]) -> set[int]:
    """Rule S10: addresses of the cheaper of two paths a thread cannot both take.

    - An if/else (a conditional forward `BRA` to t1): the fall-through side [branch, t1)
      ends in an unconditional forward `BRA` to t2 (the other side is [t1, t2)) or in an
      `EXIT` (the other side runs from t1 to its own `EXIT`). Neither side may be entered
      by a branch from elsewhere nor cut by a kept loop's edge. Inner ones are decided
      first (an `else if` chain is nested if/elses).
    - Complementary predicates in straight-line code (`@P0 FADD` ... `@!P0 FADD` with P0
      neither written nor read in between): a thread runs one set.
    Nsight Compute counts the instructions a thread executes; counting both sides counts
    the work of two threads. The costlier side is kept: an upper bound on one thread."""
    insts = function.instructions
    index = {inst.address: n for n, inst in enumerate(insts)}
    into = [
        (inst.address, function.labels[inst.target])
        for inst in insts
        if inst.base == "BRA" and inst.target in function.labels
    ]
    drop: set[int] = set()
    sides: list[tuple[int, list[Instruction], list[Instruction]]] = []
    for n, inst in enumerate(insts):
        if inst.base != "BRA" or not inst.guard or inst.target is None:
            continue
        t1 = function.labels.get(inst.target)
        if t1 is None or t1 <= inst.address or t1 not in index:
            continue
        i1 = index[t1]
        i2 = _other_side_end(insts, insts[i1 - 1], i1, function.labels, index)
        if i2 is None:
            # S26: the `then` arm predicated before the branch that skips the `else`
            guarded = _guarded_before(insts, n, set(function.labels.values()))
            if guarded and _sealed(inst.address, insts[i1 - 1].address, t1, into, loops):
                sides.append((n - index[guarded[0].address], guarded, insts[n + 1 : i1]))
            continue
        if _sealed(inst.address, insts[i2 - 1].address, t1, into, loops):
            sides.append((i2 - n, insts[n + 1 : i1], insts[i1:i2]))
    for _, then, other in sorted(sides, key=lambda d: d[0]):
        cheaper = then if _cost(then, drop) < _cost(other, drop) else other
        drop.update(i.address for i in cheaper)
    drop |= _complementary(insts, function.labels)
    return drop


def _sealed(first: int, end: int, t1: int, into: list[tuple[int, int]], loops: list[Loop]) -> bool:
    """S10: whether the code from a branch at `first` to `end` is entered by no branch from
    elsewhere and cut by no kept loop's edge (`t1` the branch's target)."""
    entered = any(not first <= src <= end and first < dst <= end for src, dst in into)
    crossed = any(
        (lp.start <= t1 <= lp.end) != (lp.start <= first <= lp.end)
        or (lp.start <= end <= lp.end) != (lp.start <= first <= lp.end)
        for lp in loops
    )
    return not entered and not crossed


def _guarded_before(insts: list[Instruction], n: int, starts: set[int]) -> list[Instruction]:
    """S26: the instructions of the straight code before the conditional branch `insts[n]`
    that carry its guard (`@!P0 FADD ...; @!P0 BRA L`), back to the block's start or to an
    instruction that touches the predicate: a thread runs them only when it takes the
    branch, past the code the branch skips."""
    guard = insts[n].guard
    name = guard.lstrip("@!")
    out: list[Instruction] = []
    for k in range(n - 1, -1, -1):
        inst = insts[k]
        if inst.base in _FLOW_END or name in _PREDICATE.findall(inst.operands):
            break
        if inst.guard == guard:
            out.append(inst)
        if inst.address in starts:
            break
    return out[::-1]


def _other_side_end(
    insts: list[Instruction],
    last: Instruction,
    i1: int,
    labels: dict[str, int],
    index: dict[int, int],
) -> int | None:
    """S10: the index past the taken side of an if/else whose fall-through side ends in
    `last`, or None when `last` ends no such side."""
    if last.guard:
        return None
    join = None
    if last.base == "BRA":
        join = labels.get(last.target) if last.target else None
        if join is None or join <= insts[i1].address or join not in index:
            return None
    elif last.base != "EXIT":
        return None
    # the taken side ends where it reaches the join, jumps to it, or exits (after an EXIT)
    for n in range(i1, len(insts)):
        inst = insts[n]
        if inst.address == join:
            return n
        if inst.guard:
            continue
        if inst.base == "BRA":
            return n + 1 if join is not None and labels.get(inst.target or "") == join else None
        if inst.base == "EXIT":
            return n + 1 if join is None else None
    return None


def _complementary(insts: list[Instruction], labels: dict[str, int]) -> set[int]:
    """S10's predicated half: within straight-line code, of the instructions guarded by
    `@P` and `@!P` between two touches of P, the cheaper set."""
    starts = set(labels.values())
    drop: set[int] = set()
    runs: dict[str, tuple[list[Instruction], list[Instruction]]] = {}

    def close(name: str) -> None:
        run = runs.pop(name, None)
        if run and run[0] and run[1]:
            on, off = run
            drop.update(i.address for i in (on if _cost(on, drop) < _cost(off, drop) else off))

    for inst in insts:
        if inst.address in starts:
            for name in list(runs):
                close(name)
        if inst.guard:
            name = inst.guard.lstrip("@!")
            runs.setdefault(name, ([], []))[inst.guard.startswith("@!")].append(inst)
        for name in set(_PREDICATE.findall(inst.operands)):
            close(name)
        if inst.base in _FLOW_END:
            for name in list(runs):
                close(name)
    for name in list(runs):
        close(name)
    return drop


def with_callees(
    function: SassFunction, functions: dict[str, SassFunction], limit: int = 64
) -> SassFunction:
    """S15: the kernel with the functions of the program it calls that have sections of
    their own (nvcc's `CALL.ABS.NOINC` to a `__noinline__` function) appended after its
    code, each under its name as a label and with its own labels made unique, as clang
    places them: a CALL then reaches its callee's code in one function. At most `limit`
    functions are appended (transitively called ones included)."""
    merged = SassFunction(function.name, list(function.instructions), dict(function.labels))
    todo = [function]
    added = 0
    while todo and added < limit:
        current = todo.pop()
        for inst in current.instructions:
            target = inst.target
            if inst.base != "CALL" or not target or target in merged.labels:
                continue
            callee = functions.get(target)
            if callee is None or not callee.instructions or not program_function(target):
                continue
            base = (merged.instructions[-1].address if merged.instructions else 0) + 16
            base -= callee.instructions[0].address
            renamed = {label: f"{target}{label}" for label in callee.labels}
            merged.labels[target] = callee.instructions[0].address + base
            for label, address in callee.labels.items():
                merged.labels[renamed[label]] = address + base
            for own in callee.instructions:
                operands = own.operands
                if own.target in renamed:
                    operands = operands.replace(f"`({own.target})", f"`({renamed[own.target]})")
                merged.instructions.append(
                    Instruction(own.address + base, own.opcode, operands, own.where, own.guard)
                )
            todo.append(callee)
            added += 1
    return merged


def classify_kernel(
    function: SassFunction, functions: dict[str, SassFunction] | None = None
) -> KernelSass:
    """Group a kernel's instructions by (source location, kept loops around them, the
    called function they lie in); `functions` (the unit's) supplies the functions of the
    program it calls that have sections of their own (S15)."""
    if functions:
        function = with_callees(function, functions)
    from roofcast.analyzer.sassdiverge import divergent_fallbacks  # imports this module
    from roofcast.analyzer.sassladder import ladder_remainders  # imports this module
    from roofcast.analyzer.sassspin import contended_spins  # imports this module

    # S40 first: a ladder's first copy (half the body) is not S29's single odd iteration
    loops, ladder = ladder_remainders(function, find_loops(function))  # S40
    loops, odd = odd_iterations(function, loops)  # S29
    spins = contended_spins(function, loops)
    loops = [replace(loop, spin=True) if loop.start in spins else loop for loop in loops]
    slow = slow_path_addresses(function) | exclusive_paths(function, loops)
    slow |= ladder  # S40
    slow |= denormal_fixups(function)  # S28
    fallbacks, returns = divergent_fallbacks(function)  # S34
    slow |= fallbacks
    slow |= remainder_chunks(function, loops)
    regions = branched_over(function, loops)
    called = called_functions(function)
    guarded = data_guards(function, loops)
    from roofcast.analyzer.sassbeside import beside_lines  # imports this module

    besides = beside_lines(function)  # S46
    from roofcast.analyzer.sasslane import WARP, lane_shares  # imports this module

    lanes = lane_shares(function, returns)  # S53
    groups: dict[tuple, LineCounts] = {}
    dropped = 0
    for inst in function.instructions:
        around = [loop for loop in loops if loop.start <= inst.address <= loop.end]
        inside = tuple(i for i, (start, end, _) in enumerate(regions) if start < inst.address < end)
        if inst.address in slow or any(loop.remainder for loop in around):
            dropped += 1
            continue
        unroll = 1
        for loop in around:
            unroll *= loop.unroll
        ordered = sorted(around, key=lambda x: (x.start, -x.end))
        copies = tuple(loop.copies for loop in ordered)
        starts = tuple(loop.start for loop in ordered)
        callee = next((s for s, e in called.items() if s <= inst.address < e), -1)
        guards = guarded.get(inst.address, 0)
        beside = besides.get(inst.address, ())
        lane = lanes.get(inst.address, WARP)
        copy_of = odd.get(inst.address, 0)  # S54
        key = (
            inst.where,
            len(around),
            unroll,
            copies,
            inside,
            starts,
            callee,
            guards,
            beside,
            lane,
            copy_of,
        )
        group = groups.get(key)
        if group is None:
            group = LineCounts(
                inst.where,
                len(around),
                unroll,
                copies=copies,
                regions=inside,
                loops=starts,
                callee=callee,
                guards=guards,
                beside=beside,
                lanes=lane,
                odd=copy_of,
            )
            groups[key] = group
        if inst.base == "CALL" and inst.target in function.labels:
            start = function.labels[inst.target]
            if start in called and start != callee:  # recursion: depth unknown (S15)
                group.calls[start] += 1
        cls = op_class(inst)
        if cls is not None:
            group.counts[cls] += 1
        width = global_width(inst)
        if width is not None:
            group.counts[f"{width[0]}_{width[1]}"] += 1
    kept = [g for g in groups.values() if g.counts or g.calls]
    found = {i: list(wheres) for i, (_, _, wheres) in enumerate(regions)}
    return KernelSass(function.name, kept, loops, dropped, found)


def branched_over(
    function: SassFunction, loops: list[Loop]
) -> list[tuple[int, int, list[tuple[tuple[str, int], ...]]]]:
    """Rule S9: (branch, target, source locations of the instructions in the kept loops
    inside) of every conditional forward branch that jumps over at least one kept loop.
    Whether such a region is a slow path depends on the source (`sasscount`): it is when
    none of those locations lies in a source loop (the range reduction of sinf/cosf for
    huge arguments); every location, not only the back edge's, since a `for` header split
    over lines puts the branch on a line the loop's statement does not start on."""
    kept = [loop for loop in loops if not loop.remainder]
    wheres = {
        (loop.start, loop.end): {
            i.where
            for i in function.instructions
            if loop.start <= i.address <= loop.end and i.where
        }
        for loop in kept
    }
    out = []
    for inst in function.instructions:
        if inst.base != "BRA" or not inst.guard or inst.target is None:
            continue
        target = function.labels.get(inst.target)
        if target is None or target <= inst.address:
            continue
        found: set[tuple[tuple[str, int], ...]] = set()
        for loop in kept:
            if inst.address < loop.start and loop.end < target:
                found |= wheres[(loop.start, loop.end)]
        inside = sorted(found)
        if inside:
            out.append((inst.address, target, inside))
    return out


#: S30: instructions whose result is data a thread read (memory, atomics), not a position
_LOADS = ("LDG", "LDS", "LDL", "LD", "LDSM", "ATOMG", "ATOMS", "ATOM", "TLD", "TEX", "SULD")
_SETS = ("ISETP", "FSETP", "DSETP", "HSETP2", "PSETP", "PLOP3", "LOP3", "FCHK")
_REGISTER = re.compile(r"\b(U?R|U?P)(\d+)\b")


def _heads(inst: Instruction, ops: list[str]) -> int:
    """S30: how many leading operands an instruction writes: two for a compare or logic
    op into a predicate (`ISETP P0, PT, ...`, `LOP3.LUT P0, RZ, ...`), else one."""
    return 2 if inst.base in _SETS and ops[0].lstrip("!").startswith(("P", "UP")) else 1


def written_registers(inst: Instruction) -> set[str]:
    """S30, S53: the registers and predicates an instruction writes (its leading operands)."""
    ops = [o.strip() for o in inst.operands.split(",")]
    if not ops or not ops[0]:
        return set()
    out: set[str] = set()
    heads = ops[: _heads(inst, ops)]
    for op in heads:
        found = _REGISTER.fullmatch(op)
        if not found or found.group(0) in ("PT", "RZ"):
            continue
        kind, n = found.group(1), int(found.group(2))
        width = (
            4
            if ".128" in inst.opcode
            else 2
            if (".64" in inst.opcode or ".WIDE" in inst.opcode)
            else 1
        )
        out.update(f"{kind}{n + k}" for k in range(width if kind.endswith("R") else 1))
    return out


def _read(inst: Instruction) -> set[str]:
    """S30: the registers and predicates an instruction reads (past its written ones)."""
    ops = [o.strip() for o in inst.operands.split(",")]
    skip = _heads(inst, ops)
    return {m.group(0) for op in ops[skip:] for m in _REGISTER.finditer(op)} - {"PT", "RZ"}


def _floating(inst: Instruction) -> bool:
    """S30: floating-point work (FP classes, MUFU, FP compares and conversions)."""
    return inst.base in FP_CLASSES or inst.base.startswith(
        ("MUFU", "FSET", "DSET", "HSET", "F2", "I2F")
    )


def _on_data(insts: list[Instruction], writers: dict[str, list[int]], n: int) -> bool:
    """S30: whether the guard of `insts[n]` rests on loaded data: its predicate's writer,
    then their operands' writers (the nearest earlier in the code, a few steps at most),
    reach a load or an atomic. A guard on thread positions and parameters (`i < n`) is
    none: S16 gives it its share from the source."""
    wanted = {(insts[n].guard.lstrip("@!"), n)}
    seen: set[tuple[str, int]] = set()
    for _ in range(_TRACE_STEPS):
        found: set[tuple[str, int]] = set()
        for name, at in wanted - seen:
            seen.add((name, at))
            places = writers.get(name, [])
            k = bisect_left(places, at) - 1
            if k < 0:
                continue
            writer = insts[places[k]]
            if writer.base in _LOADS:
                return True
            found |= {(read, places[k]) for read in _read(writer)}
            if writer.guard:  # a predicated write may not happen: the earlier one too
                found.add((name, places[k]))
        if not found:
            return False
        wanted = found
    return False


#: S30: how many writers back a guard's predicate is traced
_TRACE_STEPS = 32


def data_guards(function: SassFunction, loops: list[Loop]) -> dict[int, int]:
    """Rule S30: address -> how many guards on loaded data an instruction lies under.

    A guard is a conditional forward `BRA` over code that no branch from elsewhere enters,
    that no kept loop's edge cuts and that holds no kept loop (not S10's if/else, whose
    sides a thread takes one of; not S9's branch over a loop), or a predicated `EXIT`
    outside every kept loop (what follows it, up to the first label a branch from before
    it reaches, when that holds no kept loop either: a loop's entry test), whose
    predicate rests on a load (`_on_data`): only the threads the data lets through run
    that code (`if (a[i] > 0)`, `if (d > r) continue;`). Code holding
    floating-point work or a `CALL` is left whole: there a guard on data is mostly the
    arithmetic's case split (a range check, a math function's argument cases), taken by
    most threads; so are the guards of inlined library code (on lines of a file other
    than the kernel's, the one most of its instructions are on) and the called functions
    (S15, S23)."""
    insts = function.instructions
    index = {inst.address: n for n, inst in enumerate(insts)}
    starts = set(function.labels.values())
    into = [
        (inst.address, function.labels[inst.target])
        for inst in insts
        if inst.base == "BRA" and inst.target in function.labels
    ]
    kept = [loop for loop in loops if not loop.remainder]
    ends = sorted(called_functions(function))
    writers: dict[str, list[int]] = {}
    for n, inst in enumerate(insts):
        for name in written_registers(inst):
            writers.setdefault(name, []).append(n)
    files = Counter(inst.where[-1][0] for inst in insts if inst.where)
    own = files.most_common(1)[0][0] if files else None
    out: dict[int, int] = {}
    for n, inst in enumerate(insts):
        if ends and inst.address >= ends[0]:
            break  # the called functions after the kernel's code (S15, S23): left whole
        if not inst.guard or inst.guard.lstrip("@!").startswith("PT"):
            continue
        if not inst.where or inst.where[-1][0] != own:
            continue  # a library's guard (an inlined math function's argument cases)
        if inst.base == "BRA" and inst.target in function.labels:
            t1 = function.labels[inst.target]
            if t1 <= inst.address or t1 not in index:
                continue
            i1 = index[t1]
            if _other_side_end(insts, insts[i1 - 1], i1, function.labels, index) is not None:
                continue  # S10's if/else
            if _guarded_before(insts, n, starts):
                continue  # S26's predicated `then`
            if not _sealed(inst.address, insts[i1 - 1].address, t1, into, loops):
                continue
            if any(inst.address < lp.start and lp.end < t1 for lp in kept):
                continue  # S9's region: a guarded loop
            region = range(n + 1, i1)
        elif inst.base == "EXIT":
            if any(lp.start <= inst.address <= lp.end for lp in kept):
                continue
            joins = [dst for src, dst in into if src < inst.address < dst]
            stop = min([*joins, *(s for s in ends if s > inst.address)], default=None)
            last = index[stop] if stop in index else len(insts)
            region = range(n + 1, last)
            if any(inst.address < lp.start and lp.end <= insts[last - 1].address for lp in kept):
                continue  # a loop's entry test (a `while` on loaded data): its trips say
        else:
            continue
        if not region or not _on_data(insts, writers, n):
            continue
        if any(_floating(insts[k]) or insts[k].base == "CALL" for k in region):
            continue  # a case split of the arithmetic (or a call of it), mostly taken
        for k in region:
            out[insts[k].address] = out.get(insts[k].address, 0) + 1
    return out
