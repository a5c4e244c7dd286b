"""Rule S40: a loop unrolled c times whose remainder is a ladder of straight copies (docs/
counting.md, "Compile mode").

For a loop with a symbolic trip count (a strided `for (j = lane; j < n; j += 32)`) ptxas
may unroll the body c times (a power of two) and run the last c - 1 or fewer iterations
as straight copies after the loop: one of c/2 iterations behind a forward branch taken
when fewer than c/2 are left, then one of c/4 ..., down to one iteration. Together they
run at most c - 1 iterations, each once: S5 counts every trip of the source loop in the
main loop (trip count / c passes), so the loop's unroll factor is c and the copies are
off the main path, like S29's single odd iteration (the ladder of c = 2).
This module only reads text: it runs no tool.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from roofcast.analyzer.sass import (
    Instruction,
    Loop,
    SassFunction,
    _closed,
    _work,
    forward_skip,
)


def ladder_remainders(function: SassFunction, loops: list[Loop]) -> tuple[list[Loop], set[int]]:
    """S40: the loops with a ladder after them get unroll factor c, and the ladder's
    copies' addresses are returned to drop. A loop qualifies when it is a main loop not
    yet unrolled (no remainder loop, none inside it) and the code after its back edge is
    two or more blocks, each skipped by a conditional forward branch, nothing else
    entering them, whose work instructions are, opcode by opcode, the loop body's over
    2, 4, ..., c in that order (c >= 4: the shape of c = 2 is S29's)."""
    insts = function.instructions
    index = {inst.address: n for n, inst in enumerate(insts)}
    out: list[Loop] = []
    drop: set[int] = set()
    for loop in loops:
        unroll, blocks = _ladder(function, index, loop, loops)
        if unroll:
            drop.update(i.address for block in blocks for i in block)
            loop = replace(loop, unroll=unroll)
        out.append(loop)
    return out, drop


def _ladder(
    function: SassFunction, index: dict[int, int], loop: Loop, loops: list[Loop]
) -> tuple[int, list[list[Instruction]]]:
    """(c, the copies) of `loop`'s ladder, or (0, [])."""
    insts = function.instructions
    if loop.remainder or loop.unroll != 1 or loop.copies < 4:
        return 0, []
    if any(
        lp.main == loop.start or (lp is not loop and loop.start <= lp.start and lp.end <= loop.end)
        for lp in loops
    ):
        return 0, []
    body = Counter(i.opcode for i in insts[index[loop.start] : index[loop.end] + 1] if _work(i))
    blocks: list[list[Instruction]] = []
    n = index[loop.end] + 1
    divisor = 2
    while True:
        block, n = _skipped_block(function, index, n)
        if not block:
            break
        work = Counter(i.opcode for i in block if _work(i))
        if not work or any(k * divisor != body[op] for op, k in work.items()):
            break
        if set(work) != set(body):
            break
        blocks.append(block)
        divisor *= 2
    c = divisor // 2
    if len(blocks) < 2:
        return 0, []
    return c, blocks


def _skipped_block(
    function: SassFunction, index: dict[int, int], n: int
) -> tuple[list[Instruction], int]:
    """The straight block that the first branch at or after instruction n (past the setup
    that is neither work nor flow: the next test) skips forward, and the index after it;
    ([], n) when the next flow instruction is no such branch."""
    insts = function.instructions
    skip = forward_skip(function, index, n)
    if skip is None or insts[skip[0]].opcode != "BRA":
        return [], n
    start, end = skip
    block = insts[start + 1 : end]
    if not block or not _closed(function, block, insts[end].address):
        return [], n
    return block, end
