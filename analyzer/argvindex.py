"""Rule D44: an element of a listed array at an index the program's arguments give.

`int sizes[4] = {1, 8, 32, 64}; size_t n = sizes[atoi(argv[1])];` picks a problem size by a
command-line number: the element is known once the run's arguments are, so it is kept as a
choice over the index (a Piecewise), decided when a manifest row or `--args` binds argv_k.
"""

from __future__ import annotations

import sympy

#: listed elements a choice is built over, at most (longer lists stay unknown)
MAX_CHOICES = 64


def argv_choice(
    index: sympy.Expr, elements: list[sympy.Expr | None], otherwise: sympy.Expr
) -> sympy.Expr | None:
    """`elements[index]` for an index over the command line's words only (`argv_1`, `argv_1
    - 1`): each element where the index is its position, `otherwise` past the list; None
    where the index rests on anything else or an element has no value."""
    symbols = index.free_symbols
    if not symbols or any(not s.name.startswith("argv_") for s in symbols):
        return None
    if len(elements) > MAX_CHOICES or any(e is None for e in elements):
        return None
    branches = [(e, sympy.Eq(index, i)) for i, e in enumerate(elements)]
    return sympy.Piecewise(*branches, (otherwise, True))
