"""Rule D39: a kernel argument that host code passes as the very expression of one of the
launch's axes (`k<<<nblocks, 256>>>(.., nblocks, ..)`) held, at that launch, the extent the
profiler saw on that axis. Where host code values the expression otherwise (a macro taken
from the wrong `#if` arm, a size the program changes in ways not followed), the launch as
profiled is the truth, so the argument takes the launched extent."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import sympy
from roofcast.features.numeric import NotNumeric, evaluate

#: the launch axes a host binding may name, as `resolve` binds them
AXES = ("gridDim_x", "gridDim_y", "gridDim_z", "blockDim_x", "blockDim_y", "blockDim_z")


def agree_with_launch(
    host: Mapping[str, sympy.Expr],
    values: dict[str, float],
    known: Mapping[str, float],
    given: Collection[str] = (),
) -> list[str]:
    """Set each bound argument of `values` whose host expression is exactly a launch axis's
    (not a number: a literal axis says nothing of the argument) to that axis's launched
    extent in `values`, where host code valued it otherwise; a note for each. Names in
    `given` (bound before host code: `--define`, a manifest's values) are left alone."""
    notes: list[str] = []
    for axis in AXES:
        expr = host.get(axis)
        extent = values.get(axis)
        if not isinstance(expr, sympy.Basic) or expr.is_Number or extent is None:
            continue
        try:
            shown = float(evaluate(expr, dict(known)))
        except (NotNumeric, OverflowError, ZeroDivisionError, ValueError, TypeError):
            shown = None
        if shown is not None and shown == extent:
            continue
        for name, argument in host.items():
            if name in AXES or name in given or argument != expr:
                continue
            if values.get(name) in (None, extent):
                continue
            notes.append(
                f"[D39] {name} = {extent:g}: passed as the launch's {axis}, launched with"
                f" {extent:g} (host code gives {values[name]:g})"
            )
            values[name] = extent
    return notes
