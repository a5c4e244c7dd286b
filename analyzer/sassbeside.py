"""Compile mode: the kernel lines around inlined library code (docs/counting.md S46).

clang's line tables have no inlined-at locations (S2, S14): the instructions of a math
function inlined from a toolkit header (`expf`, `logf`, `sqrtf`, a division's fix-up)
show the header's line only, never the kernel line that called it. The counter never walks
such a header, so nothing says which threads run those instructions, and they would count
for every thread even under `if (i < n)` or `if (i == 0)`. The code the compiler inlined
lies between the instructions of the statement that called it: the nearest instructions
on the kernel's own file before and after it name the lines whose threads run it.
"""

from __future__ import annotations

from roofcast.analyzer.sass import SassFunction

Where = tuple[str, int]


def beside_lines(function: SassFunction) -> dict[int, tuple[Where, Where]]:
    """S46: for each instruction on a file other than the kernel's own (that of its
    `EXIT`s, at the kernel's `return`s and closing brace: an inlined function returns by
    a branch, and its code may outnumber the kernel's own or come first), by address,
    the locations of the nearest instructions on the kernel's file before and after it;
    none where either side has none, and none at all when the SASS has inline chains
    (nvcc's: the chain's last location is the call site)."""
    insts = function.instructions
    if any(len(inst.where) > 1 for inst in insts):
        return {}
    exits = [inst.where[0][0] for inst in insts if inst.base == "EXIT" and inst.where]
    if not exits:
        return {}
    own = max(set(exits), key=exits.count)
    before: list[Where | None] = []
    last: Where | None = None
    for inst in insts:
        before.append(last)
        if inst.where and inst.where[0][0] == own:
            last = inst.where[0]
    out: dict[int, tuple[Where, Where]] = {}
    after: Where | None = None
    for n in range(len(insts) - 1, -1, -1):
        inst = insts[n]
        if inst.where and inst.where[0][0] == own:
            after = inst.where[0]
            continue
        prior = before[n]
        if inst.where and prior is not None and after is not None:
            out[inst.address] = (prior, after)
    return out
