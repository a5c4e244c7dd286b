"""Cooperative groups' sizes and ranks as integer values (docs/counting.md C14).

`cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block)` fixes the tile's size at
compile time, and `cg::this_thread_block()` is the launch's block: a loop such as
`for (j = warp.thread_rank(); j < n; j += warp.size())` is a counted loop (C2, C3), not one
whose bound is unknown. This module reads a declaration's text for the group it makes and
answers the groups' integer queries; the lowering keeps which local holds which group.
"""

from __future__ import annotations

import re

import sympy
from roofcast.features.symbolic import builtin

#: `thread_block_tile<32>` as a type, `tiled_partition<32>(...)` as an initialiser
_TILE = re.compile(r"\b(?:thread_block_tile|tiled_partition)\s*<\s*(\d+)\s*[,>]")
_BLOCK = re.compile(r"\bthis_thread_block\s*\(\s*\)|\bthread_block\b(?!_)")


def _block_threads() -> sympy.Expr:
    return builtin("blockDim", "x") * builtin("blockDim", "y") * builtin("blockDim", "z")


def group_threads(type_text: str, init_text: str) -> sympy.Expr | None:
    """The threads of the group a declaration makes (a tile's size, or the block's
    threads), None when it makes no group this module knows. A tile's size written in the
    type or in the initialiser is a whole number; anything else is not a known group."""
    for text in (type_text, init_text):
        found = _TILE.search(text)
        if found:
            return sympy.Integer(int(found.group(1)))
    for text in (type_text, init_text):
        if _BLOCK.search(text):
            return _block_threads()
    return None


def group_query(threads: sympy.Expr, method: str) -> sympy.Expr | None:
    """A group's integer query: `size()`/`num_threads()` its threads; `thread_rank()` a
    thread's place in it (a thread position, 0 in a trip count as C3 says);
    `meta_group_size()` the tiles of the block. None for any other method (a tile's
    place among the block's, `meta_group_rank()`, is no thread axis of the launch's)."""
    if method in ("size", "num_threads"):
        return threads
    if method == "thread_rank":
        return builtin("threadIdx", "x")
    if method == "meta_group_size":
        return _block_threads() / threads
    return None
