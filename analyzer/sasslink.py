"""Rule S33: a device function defined in another unit of the program (separate
compilation: clang's `-fgpu-rdc`, nvcc's `-rdc=true`) is reached by a `CALL` to a name the
unit's cubin does not define; the linker would take it from the unit that defines it. The
functions a unit's kernels call but do not have are looked for, by their mangled names,
in the SASS of the other units beside it, as many rounds as they call further such
functions (docs/counting.md, S33)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from roofcast.analyzer.sass import SassFunction, parse_disassembly, program_function

#: rounds of lookup: functions found may call others defined elsewhere again
ROUNDS = 4


def missing_callees(functions: dict[str, SassFunction]) -> set[str]:
    """Names of the program's functions that some function `CALL`s but the unit lacks
    (not local labels, toolkit routines or the device runtime: S6, S15)."""
    out: set[str] = set()
    for function in functions.values():
        for inst in function.instructions:
            target = inst.target
            if inst.base != "CALL" or not target or target in function.labels:
                continue
            if target not in functions and program_function(target):
                out.add(target)
    return out


def link_functions(
    functions: dict[str, SassFunction],
    others: Iterable[Path],
    sass_of: Callable[[Path], tuple[str, str]],
) -> list[tuple[str, str]]:
    """Add to `functions` the missing callees that the units `others` define (`sass_of`:
    a unit's (identity, SASS text), text '' when it does not compile). Returns the
    (unit, identity) pairs looked in, for the cache to tell when they change."""
    missing = missing_callees(functions)
    if not missing:
        return []
    texts: dict[Path, tuple[str, dict[str, SassFunction]]] = {}
    for _ in range(ROUNDS):
        added = False
        for other in others:
            if other not in texts:
                identity, text = sass_of(other)
                texts[other] = (identity, parse_disassembly(text) if text else {})
            identity, defined = texts[other]
            found = {name: defined[name] for name in missing if defined.get(name)}
            found = {n: f for n, f in found.items() if f.instructions}
            if found:
                functions.update(found)
                added = True
                missing = missing_callees(functions)
        if not added or not missing:
            break
    return [(str(other), identity) for other, (identity, _) in texts.items()]
