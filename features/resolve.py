"""Bind symbols (--define, launch configuration, then documented defaults) and derive numbers.

Defaults exist only so that a verdict can be given; every use of one is reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import sympy
from roofcast.analyzer.cexpr import CExprError
from roofcast.analyzer.cvalue import MAX_COUNT, is_type_name, parse_value
from roofcast.analyzer.hostvalues import OPTION_GIVEN, UNKNOWN_PREFIX, exe_arg_values
from roofcast.features.launchagree import agree_with_launch
from roofcast.features.mathfuncs import special_costs
from roofcast.features.numeric import NotNumeric, evaluate
from roofcast.features.symbolic import free_symbols, symbol
from roofcast.features.traffic import LaunchTraffic, launch_traffic, machine_of
from roofcast.features.vector import STRUCTURE_FIELDS, FeatureVector
from roofcast.gpu_specs.opclasses import CLASSES, PRECISIONS

DEFAULT_SYMBOL_VALUE = 1024
DEFAULT_TRIP_COUNT = 4
DEFAULT_LAUNCH = {
    "blockDim_x": 256,
    "blockDim_y": 1,
    "blockDim_z": 1,
    "gridDim_x": 1024,
    "gridDim_y": 1,
    "gridDim_z": 1,
}


def default_for(name: str) -> int:
    if name in DEFAULT_LAUNCH:
        return DEFAULT_LAUNCH[name]
    if name.startswith("trip_L"):
        return DEFAULT_TRIP_COUNT
    return DEFAULT_SYMBOL_VALUE


def numeric_bindings(defines: Mapping[str, str]) -> dict[str, float]:
    """The --define values that are numbers (C expressions of constants), by name."""
    out: dict[str, float] = {}
    for name, value in defines.items():
        if is_type_name(value):
            continue  # a type binding such as T=double
        try:
            expr = parse_value(value)
        except CExprError:
            continue  # refused by `check_define` where the user typed it
        if expr.free_symbols:
            continue
        number = float(expr)
        if math.isfinite(number):
            out[name] = int(number) if number.is_integer() else number
    return out


def as_expr(value: sympy.Expr | float | str) -> sympy.Expr:
    """A count or binding as a sympy expression, built without evaluating any text."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, bool | int):
        return sympy.Integer(int(value))
    if isinstance(value, float):
        return sympy.Float(value)
    return parse_value(value)


def substitute(expr: sympy.Expr, values: Mapping[str, float | str]) -> sympy.Expr:
    if not isinstance(expr, sympy.Basic):
        return as_expr(expr)
    if expr.is_Number:
        return expr
    names = sorted({s.name for s in free_symbols(expr) if s.name in values})
    return _substituted(expr, tuple(_binding(n, values[n]) for n in names)) if names else expr


def _binding(name: str, value: float | str) -> tuple:
    """A binding as a memo key: with its type (`3` and `3.0` are equal keys but bind
    different numbers) and a float's exact form (`-0.0` is equal to `0.0`)."""
    return (name, type(value), value, value.hex() if type(value) is float else None)


@lru_cache(maxsize=4096)
def _substituted(expr: sympy.Expr, bindings: tuple[tuple, ...]) -> sympy.Expr:
    """`expr` with its free names bound, kept: copies of a kernel (a program's CUDA and HIP
    versions) and a kernel's counts resolve the same expressions with the same values."""
    values = {binding[0]: binding[2] for binding in bindings}
    # xreplace: a structural swap, many times faster than subs and enough for numbers
    return expr.xreplace(
        {s: as_expr(values[s.name]) for s in free_symbols(expr) if s.name in values}
    )


def _clamp(value: float, key: str, clamped: dict[str, float] | None) -> float:
    """`value` within [0, MAX_COUNT], noting in `clamped` the value of each count that had to
    be clamped: no count is negative (a loop bound below its start, say `-D n=-5` for
    `j < n`, runs the loop no times, as C does), and a runaway product stops at MAX_COUNT."""
    if math.isfinite(value) and 0 <= value <= MAX_COUNT:
        return value
    if clamped is not None:
        clamped[key] = value
    if math.isnan(value) or value < 0:
        return 0.0
    return MAX_COUNT


def _number(expr: sympy.Expr, key: str = "", clamped: dict[str, float] | None = None) -> float:
    try:
        value = float(expr)
    except (TypeError, ValueError, OverflowError):
        try:
            value = float(sympy.N(expr))
        except (TypeError, ValueError, OverflowError):
            return 0.0
    return _clamp(value, key, clamped)


@dataclass
class ResolvedCounts:
    """Per-thread counts as numbers, their symbolic form where unbound, and intensities."""

    flops: dict[str, float]
    special: dict[str, float]
    load_bytes: float
    store_bytes: float
    threads: float
    #: count field -> its partly bound expression (text on output: printing is costly)
    symbolic: dict[str, sympy.Expr | str] = field(default_factory=dict)
    unbound: set[str] = field(default_factory=set)
    defaults: dict[str, int] = field(default_factory=dict)
    structure: dict[str, float] = field(default_factory=dict)
    #: count -> its value before clamping at +-MAX_COUNT (a runaway product)
    clamped: dict[str, float] = field(default_factory=dict)
    #: the launch's DRAM traffic (features/traffic.py), when a GPU was given and it is known
    dram: LaunchTraffic | None = None
    #: which bytes the intensities divide by: "launch" (dram / threads) or "per-thread"
    traffic: str = "per-thread"
    #: every name's value as the counts used it (bindings, launch, defaults): `explain`
    bindings: dict[str, float] = field(default_factory=dict)
    #: what resolution added, said once per kernel (rule U4)
    notes: list[str] = field(default_factory=list)

    @property
    def dram_bytes_per_thread(self) -> float:
        """The bytes one thread's share of the launch moves to or from DRAM."""
        if self.traffic == "launch" and self.dram is not None and self.threads > 0:
            return self.dram.total / self.threads
        return self.bytes

    @property
    def bytes(self) -> float:
        return self.load_bytes + self.store_bytes

    @property
    def fully_resolved(self) -> bool:
        return not self.defaults

    @property
    def intensities(self) -> dict[str, float]:
        total = self.dram_bytes_per_thread
        out = {}
        for cls in CLASSES:
            ops = self.flops.get(cls, 0.0)
            out[cls] = ops / total if total > 0 else (math.inf if ops > 0 else 0.0)
        return out

    def _maybe_symbolic(self, key: str, value: float) -> float | str:
        return str(self.symbolic[key]) if key in self.symbolic else _clean(value)

    def flops_json(self) -> dict[str, float | str]:
        return {c: self._maybe_symbolic(f"flops_{c}", self.flops.get(c, 0.0)) for c in CLASSES}

    def special_json(self) -> dict[str, float]:
        return {k: _clean(v) for k, v in sorted(self.special.items())}

    def bytes_json(self) -> dict[str, float | str]:
        return {
            "load": self._maybe_symbolic("load_bytes", self.load_bytes),
            "store": self._maybe_symbolic("store_bytes", self.store_bytes),
        }

    def intensity_json(self) -> dict[str, float | str]:
        return {c: ("inf" if math.isinf(v) else round(v, 6)) for c, v in self.intensities.items()}

    def defaults_json(self) -> dict[str, int]:
        return dict(sorted(self.defaults.items()))

    def warnings(self) -> list[str]:
        """One line per count that had to be clamped, naming it and the value used."""
        below = [f"{key} {value:.3g}" for key, value in sorted(self.clamped.items()) if value < 0]
        lines = [
            f"{key} is {value:.3g}, beyond {MAX_COUNT:g}: {MAX_COUNT:g} used [D3]"
            for key, value in sorted(self.clamped.items())
            if not value < 0
        ]
        if below:
            lines.append(
                f"counts below 0 ({', '.join(below)}): 0 used, as a loop runs no times [D3]"
            )
        return lines

    def threads_json(self) -> float:
        return _clean(self.threads)

    def structure_json(self, fv: FeatureVector) -> dict[str, float | bool]:
        out: dict[str, float | bool] = dict(self.structure)
        out.update(
            {
                "loop_depth": fv.loop_depth,
                "loops": fv.loops,
                "unknown_trip_loops": fv.unknown_trip_loops,
                "grid_stride_loops": fv.grid_stride_loops,
                "indirect_accesses": fv.indirect_accesses,
                "reuse_accesses": fv.reuse_accesses,
                "distinct_arrays": fv.distinct_arrays,
                "shared_arrays": fv.shared_arrays,
                "device_calls": fv.device_calls,
                "templated": fv.templated,
                "unparsed_regions": fv.unparsed_regions,
            }
        )
        return out


def _clean(value: float) -> float:
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else round(value, 6)


def launch_bindings(
    block: tuple[int, int, int] | None, grid: tuple[int, int, int] | None
) -> dict[str, float]:
    out: dict[str, float] = {}
    for prefix, dims in (("blockDim", block), ("gridDim", grid)):
        if dims:
            for axis, n in zip("xyz", dims, strict=False):
                out[f"{prefix}_{axis}"] = float(n)
    return out


def resolve_counts(
    fv: FeatureVector,
    defines: Mapping[str, str] | None = None,
    context=None,
    gpu=None,
    traffic: str = "launch",
    special_weights: Mapping[str, Mapping[str, int]] | None = None,
) -> ResolvedCounts:
    """User bindings first, then the launch (blockDim/gridDim), then documented defaults.
    With a `gpu`, the launch's DRAM traffic too; `traffic` says which bytes the intensities
    use ("launch": that model's, "per-thread": every thread's first touches). Special
    functions weigh `special_weights` FLOPs per call (a GPU's, `special_costs`), the
    catalogue's by default."""
    if special_weights is None and getattr(gpu, "special_flops", None):
        special_weights = special_costs(gpu.special_flops)  # the GPU file's own costs
    values = numeric_bindings(defines or {})
    if context is not None:
        for k, v in launch_bindings(context.block, context.grid).items():
            values.setdefault(k, v)
        values.update({k: v for k, v in context.extra.items() if k not in values})
    host_values = {**exe_arg_values(context.exe_args if context is not None else ""), **values}
    given = frozenset(values)  # bound before host code: D39 leaves them as they are
    clamped: dict[str, float] = {}
    known = {**host_values, **values}
    host, site_notes = profiled_site(fv, context, known)  # rule D33
    for expr in host.values():  # rule D19: an option the command line lacks
        for s in getattr(expr, "free_symbols", ()):
            if s.name.startswith(OPTION_GIVEN):
                known.setdefault(s.name, 0.0)
    _bind_host_values(host, values, known, clamped)
    host_notes = _unknowns_from_launch(host, values, known)
    if host_notes:
        host_values.update({k: v for k, v in known.items() if k not in values})
        _bind_host_values(host, values, known, clamped)
    host_notes += agree_with_launch(host, values, known, given)  # rule D39
    launch_notes = (
        site_notes
        + host_notes
        + _sizes_from_launch(fv, context, values)
        + _sizes_from_guards(fv, values)
    )
    launch_notes += _csr_trips(fv, values, known)
    exprs: dict[str, sympy.Expr] = {
        f"flops_{c}": fv.flops_total(c, special_weights) for c in PRECISIONS
    }
    exprs["flops_int"] = fv.int_ops
    exprs["load_bytes"] = fv.load_bytes
    exprs["store_bytes"] = fv.store_bytes
    for name in STRUCTURE_FIELDS:
        exprs[name] = getattr(fv, name)
    for (kind, prec), expr in fv.special.items():
        exprs[f"special:{kind}.{prec}"] = expr
    if fv.work_items is not None:
        exprs["threads"] = fv.work_items
    else:
        exprs["threads"] = sympy.Mul(*(symbol(n) for n in DEFAULT_LAUNCH))
    footprint = 0.0
    if fv.footprint is not None:
        resolved_fp = substitute(substitute(fv.footprint, host_values), values)
        if not resolved_fp.free_symbols:
            footprint = _number(resolved_fp, "footprint", clamped)
    # Fully bound expressions go straight to numbers; the rest keep their partly bound form
    # (its free names are the unbound symbols; the count fields' forms are shown to users).
    partial: dict[str, sympy.Expr] = {}
    unbound: set[str] = set()
    for key, expr in exprs.items():
        if not isinstance(expr, sympy.Basic):
            expr = exprs[key] = as_expr(expr)
        if expr.is_Number:
            continue  # most counts: no free names to look at
        if any(s.name not in values for s in free_symbols(expr)):
            partial[key] = substitute(expr, values)
            unbound |= {s.name for s in free_symbols(partial[key])}
    defaults = {name: default_for(name) for name in unbound}
    everything = {**values, **defaults}
    symbolic = {k: e for k, e in partial.items() if free_symbols(e) and k in _SHOWN_SYMBOLIC}
    numbers = {k: _evaluated(e, everything, k, clamped) for k, e in exprs.items()}
    special = {k.split(":", 1)[1]: v for k, v in numbers.items() if k.startswith("special:")}
    notes = launch_notes + _openmp_runtime(fv, context, numbers)
    dram = (
        _launch_traffic(fv, everything, numbers["threads"], gpu, set(defaults), known)
        if gpu is not None
        else None
    )
    return ResolvedCounts(
        flops={
            "sp": numbers["flops_sp"],
            "dp": numbers["flops_dp"],
            "hp": numbers["flops_hp"],
            "int": numbers["flops_int"],
        },
        special=special,
        load_bytes=numbers["load_bytes"],
        store_bytes=numbers["store_bytes"],
        threads=numbers["threads"],
        symbolic=symbolic,
        unbound={
            n
            for n in unbound
            if not (n in DEFAULT_LAUNCH and fv.work_items is None and not _used_in_counts(fv, n))
        },
        defaults={
            n: v
            for n, v in defaults.items()
            if _used_in_counts(fv, n) or n.startswith("trip_L") or fv.work_items is not None
        },
        structure={**{k: numbers[k] for k in STRUCTURE_FIELDS}, "footprint": footprint},
        clamped=clamped,
        dram=dram,
        traffic=traffic if dram is not None else "per-thread",
        bindings=dict(everything),
        notes=notes,
    )


_AXES = tuple(DEFAULT_LAUNCH)


def profiled_site(
    fv: FeatureVector, context, known: Mapping[str, float]
) -> tuple[Mapping[str, sympy.Expr], list[str]]:
    """Rule D33: the host bindings of the launch site that was profiled, with a note naming
    it where the kernel has more than one. With the launch's geometry (`--block`/`--grid`,
    a manifest row) that is the first site whose geometry, valued with `known`, is the
    launch's on every axis; else the first that no axis contradicts (an axis resting on a
    value host code does not show may be D14's); else, and without a geometry, the first
    site (D8, D11). Rule D34: with the profiled launch's ordinal, of those sites the one
    that launches that many times first."""
    if len(fv.launch_sites) < 2:
        return _second_trip(fv, getattr(context, "ordinal", None))
    launched = launch_bindings(context.block, context.grid) if context is not None else {}
    candidates = [0]
    if len(launched) == len(_AXES):
        fits = [_fits(bindings, launched, known) for _, bindings, _ in fv.launch_sites]
        exact = [i for i, fit in enumerate(fits) if fit is True]
        possible = [i for i, fit in enumerate(fits) if fit is None]
        candidates = exact or possible or [0]
        why = "its geometry is the launch's" if exact else "no axis contradicts the launch"
        if not exact and not possible:
            why = "no site's geometry is the launch's"
    else:
        why = "no launch geometry given"
    ordinal = getattr(context, "ordinal", None)
    chosen = candidates[0]
    if ordinal and ordinal > 1 and len(candidates) > 1:
        chosen = _nth_launch(candidates, [site[2] for site in fv.launch_sites], ordinal)
        why += f", and it makes launch {ordinal} of those [D34]"
    label, bindings, _ = fv.launch_sites[chosen]
    note = (
        f"[D33] host values from launch site {chosen + 1} of {len(fv.launch_sites)} "
        f"({label}): {why}"
    )
    if chosen == 0:
        return fv.host_bindings, [note]
    first = fv.launch_sites[0][1]
    host = {n: e for n, e in fv.host_bindings.items() if n not in first}
    host.update(bindings)
    return host, [note]


def _second_trip(
    fv: FeatureVector, ordinal: int | None
) -> tuple[Mapping[str, sympy.Expr], list[str]]:
    """Rule D43: a kernel launched once per call of a host function called in a for loop
    makes its second launch on that loop's second trip: its bindings there, with a note."""
    if ordinal != 2 or not fv.second_trip:
        return fv.host_bindings, []
    host = {**fv.host_bindings, **fv.second_trip}
    note = "[D43] host values from the second trip of the loop its host function is called in"
    return host, [note]


def _nth_launch(candidates: list[int], repeated: list[bool], ordinal: int) -> int:
    """Rule D34: the site of the `ordinal`-th launch, the sites launching in source order, a
    site in a host loop again and again, one outside once; past them all, the last."""
    for count, site in enumerate(candidates, start=1):
        if repeated[site] or count >= ordinal:
            return site
    return candidates[-1]


def _fits(
    bindings: Mapping[str, sympy.Expr], launched: Mapping[str, float], known: Mapping[str, float]
) -> bool | None:
    """Whether a site's geometry is the launch's: True on every axis, False where one
    differs, None where none differs but one has no value here."""
    undecided = False
    for axis in _AXES:
        expr = bindings.get(axis)
        if expr is None:
            undecided = True
            continue
        bound = substitute(expr, known)
        if bound.free_symbols:
            undecided = True
            continue
        if _number(bound) != launched[axis]:
            return False
    return None if undecided else True


def _bind_host_values(
    host: Mapping[str, sympy.Expr],
    values: dict[str, float],
    known: dict[str, float],
    clamped: dict[str, float],
) -> None:
    """Each host binding whose value `known` makes a positive number joins `values`."""
    for _ in range(2):  # a second pass for values over others (U3's blockDim_x over `n`)
        for name, expr in host.items():
            if name in values:
                continue
            bound = substitute(expr, known)
            if not bound.free_symbols:
                number = _number(bound, f"host value of {name}", clamped)
                if number > 0:
                    values[name] = known[name] = number


#: the largest size U5 and D14 solve for (a bisection over 1..this)
MAX_INFERRED_SIZE = 2**40


def _unknowns_from_launch(
    host: Mapping[str, sympy.Expr], values: Mapping[str, float], known: dict[str, float]
) -> list[str]:
    """Rule D14: a launch axis that host code sizes by one host value it cannot show
    (`<<<n, 1>>>` with `n = strlen(seq)`; `dim3 grid(width / 16)` with `width` read from an
    image; an argv word that is not a number), launched as profiled (`--grid`, a manifest
    row), gives that value: the largest whole number at which the axis's expression stays
    below the launched extent plus one (C's division truncates, host expressions divide
    exactly: `(n + 255) / 256` launched with 40 blocks gives n = 10240). The value joins
    `known`; the host bindings over it are then bound."""
    notes = []
    for axis in DEFAULT_LAUNCH:
        expr = host.get(axis)
        extent = values.get(axis)
        if expr is None or extent is None or not isinstance(expr, sympy.Basic):
            continue
        bound = substitute(expr, known)
        free = list(bound.free_symbols)
        if len(free) != 1 or not _solvable(free[0].name) or free[0].name in known:
            continue
        solved = _largest_below(bound, free[0].name, extent + 1)
        if solved is None:
            continue
        known[free[0].name] = solved
        shown = free[0].name.removeprefix(UNKNOWN_PREFIX)
        notes.append(
            f"[D14] {shown} = {solved:g}: the host value that launches {axis} = {extent:g}"
        )
    return notes


def _solvable(name: str) -> bool:
    """Host names D14 may solve for: placeholders and command-line words."""
    return name.startswith(UNKNOWN_PREFIX) or name.startswith("argv_")


def _evaluator(expr: sympy.Expr, name: str) -> Callable[[float], float]:
    """`expr` as a function of `name`; NaN where it has no finite value."""

    def at(n: float) -> float:
        try:
            return float(evaluate(expr, {name: n}))
        except (NotNumeric, OverflowError, ZeroDivisionError, ValueError, TypeError):
            return math.nan

    return at


def _crossing(at: Callable[[float], float], limit: float) -> tuple[int, int]:
    """Bisection over 1..MAX_INFERRED_SIZE of an increasing `at` with at(1) < limit <=
    at(MAX_INFERRED_SIZE): (low, high = low + 1) with at(low) < limit <= at(high)."""
    low, high = 1, MAX_INFERRED_SIZE
    while high - low > 1:
        middle = (low + high) // 2
        if at(middle) < limit:
            low = middle
        else:
            high = middle
    return low, high


def _largest_below(expr: sympy.Expr, name: str, limit: float) -> int | None:
    """The largest whole n in 1..MAX_INFERRED_SIZE with expr(n) < limit, where expr is
    increasing there and expr(n) reaches limit - 1; None otherwise."""
    at = _evaluator(expr, name)
    if not (at(1.0) < limit <= at(MAX_INFERRED_SIZE)) or not at(1.0) <= at(2.0) <= at(
        MAX_INFERRED_SIZE
    ):
        return None
    low, _ = _crossing(at, limit)
    return low if at(low) >= limit - 1 else None


def _sizes_from_launch(fv: FeatureVector, context, values: dict[str, float]) -> list[str]:
    """Rule U5: an OpenMP region whose iteration count rests on one unbound name, launched
    with a known geometry, ran about one iteration per launched thread (the runtime sizes
    the grid from the trip count), so that name is solved from block x grid and added to
    `values`. A runtime that caps its teams makes this a lower bound."""
    if fv.work_items is None or context is None or not context.block or not context.grid:
        return []
    work = as_expr(fv.work_items)
    if work.is_Number:
        return []
    free = [s for s in work.free_symbols if s.name not in values]
    if len(free) != 1:
        return []
    name = free[0].name
    launched = float(math.prod(context.block) * math.prod(context.grid))
    count = _evaluator(substitute(work, values), name)
    if not (count(1.0) <= launched <= count(MAX_INFERRED_SIZE)):
        return []  # not increasing in the name, or the launch lies outside its range
    high = _crossing(count, launched)[1]
    values[name] = high
    return [
        f"[U5] {name} = {high:g}: the region's iteration count taken from its launch "
        f"({launched:g} threads)"
    ]


def _sizes_from_guards(fv: FeatureVector, values: dict[str, float]) -> list[str]:
    """Rule U6: a CUDA kernel that guards its threads with `i < n` was launched with about
    n threads along i: an unbound n is the largest i of the launch plus one (the launch
    dims are in `values` only where the launch is known)."""
    notes = []
    for name, (position, offset) in fv.thread_guards.items():
        if name in values:
            continue
        largest = _largest_position(position, values)
        if largest is None or largest + offset < 1:
            continue
        values[name] = size = largest + offset
        notes.append(f"[U6] {name} = {size:g}: the thread guard's bound, from the launch")
    return notes


_EXTENT_OF = {"threadIdx": "blockDim", "blockIdx": "gridDim"}


def _largest_position(position: sympy.Expr, values: Mapping[str, float]) -> int | None:
    """The largest value of a thread position (a polynomial in threadIdx/blockIdx with
    non-negative coefficients once the launch dims are bound) over the launch, or None."""
    bound = substitute(position, values)
    corners: dict[str, float] = {}
    for s in bound.free_symbols:
        base, _, axis = s.name.partition("_")
        extent = values.get(f"{_EXTENT_OF.get(base, '')}_{axis}")
        if extent is None:
            return None
        corners[s.name] = extent - 1
    try:
        poly = sympy.Poly(bound, *sorted(bound.free_symbols, key=str)) if corners else None
    except sympy.PolynomialError:
        return None
    if poly is not None and any(c < 0 for c in poly.coeffs()):
        return None
    try:
        largest = float(evaluate(bound, corners))
    except (NotNumeric, OverflowError, ZeroDivisionError, ValueError, TypeError):
        return None
    return int(largest) if math.isfinite(largest) and largest >= 0 else None


#: integer instructions the OpenMP offload runtime runs per launched device thread (entry,
#: worksharing-loop setup and teardown): rule U4, chosen on dev.csv by family-grouped CV
OPENMP_RUNTIME_INT_OPS = 40


def _openmp_runtime(fv: FeatureVector, context, numbers: dict[str, float]) -> list[str]:
    """Rule U4: an OpenMP region's launched threads (the launch geometry, where known) each
    run the runtime's own integer work; spread over the region's units of work. Counted
    from SASS (S13), each thread's own counts replace the constant."""
    if fv.runtime_per_thread is not None:
        return _compiled_runtime(fv, context, numbers)
    if fv.work_items is None or context is None or not context.block or not context.grid:
        return []
    launched = math.prod(context.block) * math.prod(context.grid)
    units = numbers["threads"]
    if launched <= 0 or units <= 0:
        return []
    numbers["flops_int"] += OPENMP_RUNTIME_INT_OPS * launched / units
    return [
        f"[U4] OpenMP runtime: {OPENMP_RUNTIME_INT_OPS} int ops per launched thread "
        f"({launched:g} threads over {units:g} units of work)"
    ]


def _compiled_runtime(fv: FeatureVector, context, numbers: dict[str, float]) -> list[str]:
    """Rule S13: what each launched thread runs outside the kernel's loops, spread over the
    units of work; without the launch geometry, one thread per unit of work (as U5)."""
    units = numbers["threads"]
    known = context is not None and context.block and context.grid
    launched = math.prod(context.block) * math.prod(context.grid) if known else units
    if units <= 0 or launched <= 0 or not fv.runtime_per_thread:
        return []
    for key, count in fv.runtime_per_thread.items():
        numbers[key] = numbers.get(key, 0.0) + count * launched / units
    where = f"{launched:g} threads over {units:g} units of work" if known else "one per unit"
    ops = fv.runtime_per_thread.get("flops_int", 0.0)
    return [f"[S13] per launched thread, outside the kernel's loops: {ops:g} int ops ({where})"]


def _launch_traffic(
    fv: FeatureVector,
    values: Mapping[str, float],
    threads: float,
    gpu,
    guessed: set[str] | frozenset[str] = frozenset(),
    host: Mapping[str, float] | None = None,
) -> LaunchTraffic | None:
    """The traffic model on the kernel's accesses, every name bound as the counts are
    (names only an index uses get their documented defaults too). Allocations (T15) are
    bound by host values only (`host`, then `values` less the defaults): a guessed size
    bounds nothing."""
    dims = {d.symbol for d in fv.dims}
    names: set[str] = set()
    for access in fv.accesses:
        for expr in (access.index, access.repeats, access.width):
            if isinstance(expr, sympy.Basic) and not expr.is_Number:
                names |= {s.name for s in free_symbols(expr) if s not in dims}
    for dim in fv.dims:
        names |= {s.name for s in free_symbols(dim.extent)}
    bound = dict(values)
    for name in names - bound.keys():
        bound[name] = default_for(name)
    guessed = frozenset(guessed) | (names - values.keys())
    block = [bound.get(f"blockDim_{axis}", 1) for axis in "xyz"]
    return launch_traffic(
        fv.accesses,
        fv.dims,
        bound,
        threads,
        machine_of(gpu),
        block_threads=float(math.prod(block)) if fv.work_items is None else None,
        guessed=guessed,
        allocations=_allocations(fv, {**(host or {}), **values}, guessed),
    )


def _csr_trips(
    fv: FeatureVector, values: dict[str, float], known: Mapping[str, float]
) -> list[str]:
    """Rule C11: a compressed-row loop runs, over all rows, (elements of the arrays its
    counter indexes) / (elements of the row pointer - 1) times on average, where host code's
    allocations (D28) size both; the fewest elements of the indexed arrays count."""
    if not fv.csr_trips:
        return []
    sizes = _allocations(fv, {**known, **values}, frozenset())
    notes = []
    for trip, ((rows, row_bytes), indexed) in fv.csr_trips.items():
        if trip in values or rows not in sizes:
            continue
        counts = [_elements(sizes[name], unit) for name, unit in indexed if name in sizes]
        pointers = _elements(sizes[rows], row_bytes)
        if not counts or pointers <= 1:
            continue
        values[trip] = min(counts) / (pointers - 1)
        notes.append(
            f"[C11] {trip} = {values[trip]:g}: {min(counts):g} elements over "
            f"{pointers - 1:g} rows of {rows}"
        )
    return notes


def _elements(size: tuple[float, bool], unit: int) -> float:
    number, elements = size
    return number if elements else math.floor(number / unit)


def _allocations(
    fv: FeatureVector, values: Mapping[str, float], guessed: frozenset[str]
) -> dict[str, tuple[float, bool]]:
    """Rule D28's allocations as numbers (bytes, or elements), where host values bind them
    without any documented default."""
    out: dict[str, tuple[float, bool]] = {}
    for array, (size, elements) in fv.allocations.items():
        if any(s.name in guessed for s in size.free_symbols):
            continue
        try:
            number = float(evaluate(size, values))
        except (NotNumeric, OverflowError, ZeroDivisionError, ValueError, TypeError):
            continue
        if math.isfinite(number) and number > 0:
            out[array] = (number, elements)
    return out


_SHOWN_SYMBOLIC = ("flops_sp", "flops_dp", "flops_hp", "flops_int", "load_bytes", "store_bytes")


def _evaluated(
    expr: sympy.Expr, values: Mapping[str, float], key: str, clamped: dict[str, float]
) -> float:
    """The expression's number at `values` (every free name bound), clamped like `_number`."""
    try:
        value = float(evaluate(expr, values))
    except (NotNumeric, OverflowError, ZeroDivisionError, ValueError, TypeError):
        return _number(substitute(expr, values), key, clamped)
    return _clamp(value, key, clamped)


def _used_in_counts(fv: FeatureVector, name: str) -> bool:
    return name in fv.symbols
