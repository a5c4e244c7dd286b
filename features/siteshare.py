"""Compile mode: an inlined callee's line run by a different share of the threads at each
of its call sites (docs/counting.md S51).

Without inline chains (clang's line tables) each inlined copy of a callee shows the
callee's own lines; S14 places each copy's instructions at the sites the counter inlined
the callee at. S16 keeps one share per line, and a line noted at two sites with two
shares (`warp_reduce` called by every thread, then again under `if (wid == 0)`) counts
for every thread. Each site records the share its call ran with instead, and the copy
placed at a site counts for that site's threads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

import sympy
from roofcast.analyzer.sass import LineCounts
from roofcast.features.vector import CallSite

Where = tuple[str, int]


def placed_by_site(group: LineCounts, sites: Mapping[Where, list], chained: bool) -> bool:
    """S51: whether S14 places a group's instructions at its line's call sites (the same
    test as `sasscount._placements`): a kernel line inlined from a callee, no chains."""
    where = group.where
    if not where or chained or len(where) != 1 or group.callee >= 0:
        return False
    return bool(sites.get((os.path.realpath(where[0][0]), where[0][1])))


def noted(before: CallSite | None, share: sympy.Expr) -> sympy.Expr:
    """S51: a site's share of a line noted again from the same call: as S16's for a line,
    the one it was noted with, 1 once noted with another (`if (c) { if (t < 32) a(); }`
    on one line: the outer `if` runs for every thread)."""
    if before is None or before.share == share:
        return share
    return sympy.Integer(1)


def known_sites(
    line_sites: Mapping[Where, Mapping[int, CallSite]],
    known: set[str],
    known_shares: Callable[[Mapping[Where, sympy.Expr], set[str]], dict[Where, sympy.Expr]],
) -> dict[Where, dict[int, CallSite]]:
    """S51: the call sites with S16's rule for shares over names no one binds: 1."""
    out: dict[Where, dict[int, CallSite]] = {}
    for where, calls in line_sites.items():
        out[where] = {
            call: site._replace(share=known_shares({where: site.share}, known)[where])
            for call, site in calls.items()
        }
    return out
