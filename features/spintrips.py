"""Rule S32: how many times a thread runs a compare-and-swap retry loop on a shared-memory
address the whole block shares (analyzer.sassspin finds them). The threads of a warp win
the address one at a time, so lane k of the L contending lanes tries k times, (L + 1) / 2
on average; the block's other warps take it in between and make a warp retry again, which
Nsight Compute's counts put near one more round per two further warps. A fitted
approximation of contention, not a hardware model (docs/counting.md, S32)."""

from __future__ import annotations

import sympy
from roofcast.analyzer.sass import LineCounts, Loop
from roofcast.features.symbolic import symbol

#: threads of a warp
WARP = 32


def block_threads() -> sympy.Expr:
    return sympy.Mul(*(symbol(f"blockDim_{axis}") for axis in "xyz"))


def spin_trips(threads: sympy.Expr | None = None) -> sympy.Expr:
    """Mean trips per thread of a retry loop every thread of a block of `threads` runs on
    one address: (min(threads, 32) + 1) / 2 per warp, times max(1, warps / 2)."""
    b = block_threads() if threads is None else threads
    lanes = sympy.Min(b, WARP)
    return (lanes + 1) / 2 * sympy.Max(1, b / (2 * WARP))


def spin_factor(group: LineCounts, loops: dict[int, Loop], guarded: bool) -> sympy.Expr:
    """The factor on a group's executions: `spin_trips` when it lies in such a retry loop
    and its line runs on every thread (`guarded`: an S16 share, such as `threadIdx.x == 0`,
    leaves fewer threads to contend, and is then taken to leave none), else 1."""
    if guarded or not any(getattr(loops.get(start), "spin", False) for start in group.loops):
        return sympy.Integer(1)
    return spin_trips()
