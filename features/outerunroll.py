"""Compile mode: an outer loop unrolled fully around a kept inner loop (docs/counting.md
S47).

S5 takes an instruction inside fewer kept loops than its line lies in source loops to be
in the outer ones, the inner ones unrolled fully (each copy an instruction of its own).
A compiler also unrolls a short outer loop fully and keeps the long loop inside it
(`for (k = 0; k < 4; k++) for (j = 0; j < 32; j++)`: four copies of the j loop, one
after the other). Each copy is then a kept loop whose back edge lies on the inner loop's
line: its instructions run the inner loop's trips, not the outer one's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy

Where = tuple[str, int]


def picked_frames(
    frames: tuple,
    kept_lines: Sequence[Where | None],
    line_loops: Mapping[Where, tuple],
    copies_on: Mapping[Where, int],
) -> tuple[tuple, tuple] | None:
    """S47: (the trips of the source loops the kept loops are, the trips of the loops
    inside the innermost of them) for an instruction whose line lies in `frames`' loops
    and inside kept loops whose back edges lie on `kept_lines` (outermost first), when
    those are not the outermost loops: each kept loop is the source loop its back edge's
    line opens (that line's loops are the outer ones of the instruction's line, the last
    its own), and the loops passed over are constants whose product is the number of
    kept copies of the innermost (`copies_on`: kept main loops per back-edge line).
    None when any of that does not hold: S5's outermost loops then stand."""
    depth = len(kept_lines)
    if not 0 < depth < len(frames):
        return None
    picks: list[int] = []
    for line in kept_lines:
        own = line_loops.get(line) if line is not None else None
        if not own or len(own) > len(frames) or tuple(own) != tuple(frames[: len(own)]):
            return None
        if picks and len(own) - 1 <= picks[-1]:
            return None
        picks.append(len(own) - 1)
    if picks == list(range(depth)):
        return None
    skipped = sympy.Mul(*(frames[k] for k in range(picks[-1]) if k not in picks))
    last = kept_lines[-1]
    if not isinstance(skipped, sympy.Integer) or last is None or copies_on.get(last) != skipped:
        return None
    return tuple(frames[k] for k in picks), tuple(frames[picks[-1] + 1 :])
