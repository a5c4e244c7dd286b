"""Rule S34: a warp shuffle's fallback for a warp that is not converged.

Around `__shfl_*_sync` under a branch some threads may skip, the compiler emits
`BRA.DIV ~URZ, L`, taken only when the warp's threads are not all active together. The
converged version (plain `SHFL`s) follows the branch; at L, placed after the kernel's
`EXIT`, lies a second version of the same code that calls the toolkit's shuffle routine
(`__cuda_sm70_shflsync_*`: `WARPSYNC`, `SHFL`, `RET`) for each shuffle and jumps back to
the join after the converged version. A thread runs one of the two: the fallback is off
the main path (Nsight Compute counts what threads execute), and its jump back is no loop
(a backward `BRA`, which rule S4 would otherwise take for one). Read here from the SASS
text; `analyzer.sass` drops what this returns (docs/counting.md, S34)."""

from __future__ import annotations

from roofcast.analyzer.sass import Instruction, SassFunction

#: an unconditional instruction after which control never falls through
_ENDS = ("BRA", "EXIT", "RET")
#: the toolkit's shuffle routines a fallback calls (`$__internal_0_$__cuda_sm70_shflsync_bfly`)
_SHUFFLE = "__cuda_sm70_shflsync_"
#: clang's OpenMP offload kernels: S13 reads their kept loops as the runtime's, left as S4 has them
_OPENMP = "__omp_offloading_"


def _divergent(inst: Instruction) -> bool:
    """`BRA.DIV ~URZ, L`: a branch taken when the warp is not converged."""
    return inst.opcode.startswith("BRA.DIV")


def _ends_flow(inst: Instruction) -> bool:
    return not inst.guard and inst.base in _ENDS and not _divergent(inst)


def divergent_fallbacks(function: SassFunction) -> tuple[set[int], set[int]]:
    """S34: (addresses of the shuffle fallbacks' code, addresses of their jumps back).

    A fallback starts at a `BRA.DIV` target that nothing falls through into (the
    instruction before it ends the flow), runs to its first unconditional `BRA`, `EXIT`
    or `RET`, and calls a shuffle routine. It counts as one only when no other branch (or
    a `CALL` to a local label, S24) enters it and its jump back, if any, lands after every
    `BRA.DIV` to it and before its own start: the join after the converged version.
    Other warp-synchronous fallbacks (a vote's, a named barrier's) and OpenMP regions'
    kernels are left as they were (docs/counting.md, S34's limits)."""
    if function.name.startswith(_OPENMP):
        return set(), set()
    insts = function.instructions
    index = {inst.address: n for n, inst in enumerate(insts)}
    sources: dict[int, list[int]] = {}
    for inst in insts:
        if _divergent(inst) and inst.target in function.labels:
            sources.setdefault(function.labels[inst.target], []).append(inst.address)
    entries = [
        (inst.address, function.labels[inst.target])
        for inst in insts
        if inst.base in ("BRA", "CALL") and not _divergent(inst) and inst.target in function.labels
    ]
    code: set[int] = set()
    returns: set[int] = set()
    for start, froms in sources.items():
        first = index.get(start)
        if first is None or first == 0 or not _ends_flow(insts[first - 1]):
            continue
        last = next((n for n in range(first, len(insts)) if _ends_flow(insts[n])), None)
        if last is None:
            continue
        block = insts[first : last + 1]
        end = block[-1].address
        if not any(i.base == "CALL" and _SHUFFLE in (i.target or "") for i in block):
            continue
        if any(not start <= src <= end and start <= dst <= end for src, dst in entries):
            continue
        back = block[-1]
        join = function.labels.get(back.target or "") if back.base == "BRA" else None
        if back.base == "BRA" and (join is None or not max(froms) < join < start):
            continue
        code.update(i.address for i in block)
        if join is not None:
            returns.add(end)
    return code, returns
