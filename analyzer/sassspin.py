"""Rule S32: the compare-and-swap loops an atomic on shared memory compiles to (`LDS`, the
operation, `ATOMS.CAST.SPIN` until it succeeds) retry once per other thread that wins the
same address first. Which loops spin on one address for the whole block is read here from
the SASS (a data-flow pass over the registers: values every thread of a block shares);
how many trips that costs per thread is `features.sasscount`'s (docs/counting.md, S32)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from roofcast.analyzer.sass import Instruction, Loop, SassFunction

#: opcodes whose result is block-uniform when every source operand is (integer arithmetic,
#: moves); anything else writing a register (loads, atomics, shuffles, selects on a
#: predicate) may differ between threads
_PURE = frozenset(
    {
        "IMAD", "IADD3", "IADD", "IADD32I", "MOV", "MOV32I", "LOP3", "LOP", "LOP32I", "SHF",
        "SHL", "SHR", "LEA", "IMUL", "IMUL32I", "ISCADD", "IMNMX", "VIADD", "UMOV",
    }
)  # fmt: skip
#: special registers with one value per block
_BLOCK_REGISTERS = ("SR_CTAID.", "SR_NCTAID", "SRZ")
_REGISTER = re.compile(r"^R(\d+)$")
_BRACKET = re.compile(r"\[([^\]]*)\]")
_CONSTANT = re.compile(r"c\[[^\]]*\]\[[^\]]*\]")


def _base_register(token: str) -> str:
    """`R2.64` / `-R3` / `|R4|` / `R5.X4` -> `R2` ..."""
    return token.strip().lstrip("-~!|").rstrip("|").split(".", 1)[0]


def _written(inst: Instruction) -> list[str]:
    """The general registers an instruction writes: its first operand (two for a 64-bit or
    wide result)."""
    first = inst.operands.split(",", 1)[0].strip()
    name = _base_register(first)
    found = _REGISTER.match(name)
    if not found or inst.base in ("ST", "STS", "STG", "STL", "RED", "BRA", "EXIT", "CALL"):
        return []
    n = int(found.group(1))
    wide = ".WIDE" in inst.opcode or ".64" in inst.opcode or first.endswith(".64")
    return [name, f"R{n + 1}"] if wide else [name]


def _read(inst: Instruction) -> list[str]:
    """Every source token (operands after the written one, brackets opened)."""
    operands = _CONSTANT.sub("0x0", inst.operands)  # a constant bank's `c[0x0][0x168]`
    out: list[str] = []
    for part in operands.split(",")[1:]:
        for token in re.split(r"[\[\]+]", part):
            if token.strip():
                out.append(token.strip())
    return out


def _uniform_token(token: str, varying: set[str]) -> bool:
    """A constant, a uniform or special register, or a general one not in `varying`."""
    name = _base_register(token)
    if name in ("RZ", "PT", "!PT") or name.startswith(("UR", "c[", "0x", "-0x")):
        return True
    if re.fullmatch(r"-?\d+(\.\d+)?(e[+-]?\d+)?", name) or name.startswith(("SR_", "SRZ")):
        return True
    if _REGISTER.match(name):
        return name not in varying
    return False  # predicates, barriers and whatever else: not known to be uniform


class _Flow:
    """Reaching definitions over the function's control flow, asked on demand: which writes
    of a register may give its value at an instruction (a predicated write does not hide
    the ones before it). A `CALL` may change any register; an indirect branch (`BRX`)
    leaves the flow unknown."""

    def __init__(self, function: SassFunction) -> None:
        self.insts = function.instructions
        index = {inst.address: n for n, inst in enumerate(self.insts)}
        self.known = not any(i.base in ("BRX", "JMX", "JMP") for i in self.insts)
        self.preds: dict[int, list[int]] = {n: [] for n in range(len(self.insts))}
        for n, inst in enumerate(self.insts):
            ends = inst.base in ("BRA", "EXIT", "RET") and not inst.guard
            if n + 1 < len(self.insts) and not ends:
                self.preds[n + 1].append(n)
            if inst.base == "BRA" and inst.target in function.labels:
                target = index.get(function.labels[inst.target])
                if target is not None:
                    self.preds[target].append(n)
        self.writes = [_written(inst) for inst in self.insts]
        self.uniform: dict[int, bool] = {}

    def reaching(self, at: int, register: str) -> list[int] | None:
        """Indices of the writes of `register` that reach instruction `at`; None when some
        path reaches it from the function's start (or a `CALL`) without one."""
        found: list[int] = []
        seen: set[int] = set()
        todo = list(self.preds[at])
        if at == 0 or not todo:  # the entry: a value from before the function
            return None
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            inst = self.insts[n]
            if inst.base == "CALL":
                return None
            if register in self.writes[n]:
                found.append(n)
                if not inst.guard:
                    continue
            if n == 0 or not self.preds[n]:
                return None
            todo.extend(self.preds[n])
        return found

    def uniform_at(self, at: int, token: str) -> bool:
        """Whether an operand of instruction `at` has one value for the whole block."""
        name = _base_register(token)
        if not _REGISTER.match(name):
            return _uniform_token(token, set())
        writes = self.reaching(at, name)
        return writes is not None and all(self.uniform_write(n) for n in writes)

    def uniform_write(self, n: int) -> bool:
        """Whether write `n` gives every thread of a block the same value (optimistic on a
        cycle of writes: a loop's counter stays uniform if what starts and steps it is)."""
        if n in self.uniform:
            return self.uniform[n]
        self.uniform[n] = True
        inst = self.insts[n]
        if inst.guard:
            ok = False
        elif inst.base in ("S2R", "CS2R"):
            ok = inst.operands.split(",", 1)[-1].strip().startswith(_BLOCK_REGISTERS)
        else:
            ok = inst.base in _PURE and all(self.uniform_at(n, t) for t in _read(inst))
        self.uniform[n] = ok
        return ok


def _address_uniform(flow: _Flow, at: int) -> bool:
    found = _BRACKET.search(flow.insts[at].operands)
    if not found or not flow.known:
        return False
    tokens = [t for t in found.group(1).split("+") if t.strip()]
    return all(flow.uniform_at(at, t) for t in tokens)


def contended_spins(function: SassFunction, loops: Iterable[Loop]) -> set[int]:
    """S32: the starts of the kept loops that retry a shared-memory compare-and-swap
    (`ATOMS.CAST`, `ATOMS.CAS`; the innermost kept loop around it) on an address every
    thread of the block shares (`[RZ]`, `[0x8]`, a kernel argument's offset): each thread
    retries until it wins that address."""
    kept = [loop for loop in loops if not loop.remainder]
    flow: _Flow | None = None
    out: set[int] = set()
    for n, inst in enumerate(function.instructions):
        if not inst.opcode.startswith(("ATOMS.CAST", "ATOMS.CAS")):
            continue
        around = [loop for loop in kept if loop.start <= inst.address <= loop.end]
        if not around:
            continue
        flow = flow or _Flow(function)
        if _address_uniform(flow, n):
            out.add(min(around, key=lambda loop: loop.end - loop.start).start)
    return out
