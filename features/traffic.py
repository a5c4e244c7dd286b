"""Launch-level DRAM traffic: 32-byte sectors, per-array footprints over the grid, and L2.

The per-thread count charges every thread's first touch of an element to DRAM. A launch
moves far less: neighbouring threads share sectors, threads running at the same time share
elements (a stencil's halo, a GEMM's rows and columns), and while the data fits in L2 a
second touch is a hit. Nsight Compute flushes the caches before each replayed kernel, so
the compulsory footprint is the floor. Rules T1-T15 in docs/counting.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

import sympy
from roofcast.analyzer.session import SessionMemo
from roofcast.features.numeric import NotNumeric, evaluate
from roofcast.features.symbolic import free_symbols

SECTOR = 32  # bytes: the unit DRAM and L2 move (rule T1)
WARP = 32
#: bytes every launch reads besides its arrays: code, kernel parameters, constant banks
#: (rule T7; the median of Nsight Compute's DRAM bytes for dev kernels that touch almost
#: nothing, chosen on dev.csv only)
LAUNCH_OVERHEAD = 4096


@dataclass(frozen=True)
class Access:
    """One distinct global access of a thread (or OpenMP iteration), as the counter met it."""

    array: str
    #: element offset over the dims' symbols and parameters; None when data-dependent
    index: sympy.Expr | None
    unit: int  # bytes per index step (the element, or the struct a member belongs to)
    width: int | sympy.Expr  # bytes read or written at each place (a copy's may be symbolic)
    store: bool
    repeats: sympy.Expr  # how often one thread makes it: its enclosing loops' trip product
    line: int
    #: an unknown index read from memory (`x[col[j]]`); else unknown because it moves with a
    #: loop the dims do not describe (rule T6)
    indirect: bool = True
    #: the ids of its enclosing loops, outermost first (`LoweredKernel.loops`); `repeats` is
    #: their trip product, or fewer where the access is hoisted out of some (M3)
    nest: tuple[int, ...] = ()


@dataclass(frozen=True)
class Dim:
    """A variable the index ranges over: 0 .. extent-1."""

    symbol: sympy.Symbol
    extent: sympy.Expr
    role: str  # "lane": fastest thread axis; "thread"; "block"; "loop"


@dataclass
class ArrayTraffic:
    """What one array moves over the launch."""

    array: str
    requested: float = 0.0  # sector bytes the warps ask for (T1)
    load_footprint: float = 0.0  # distinct sector bytes read (T2)
    store_footprint: float = 0.0
    wave_footprint: float = 0.0  # what one wave of resident blocks touches (T4)
    dram_load: float = 0.0
    dram_store: float = 0.0
    exact: bool = True  # every access's index was affine over known ranges
    lines: set[int] = field(default_factory=set)

    def to_json(self) -> dict:
        return {
            "array": self.array,
            "requested_bytes": _round(self.requested),
            "footprint_bytes": {
                "load": _round(self.load_footprint),
                "store": _round(self.store_footprint),
            },
            "dram_bytes": {"load": _round(self.dram_load), "store": _round(self.dram_store)},
            "from_index": self.exact,
            "lines": sorted(self.lines),
        }


@dataclass
class LaunchTraffic:
    """The launch's DRAM bytes and how they were decided."""

    load: float
    store: float
    arrays: list[ArrayTraffic]
    working_set: float
    l2_bytes: float
    waves: int
    decision: str  # "fits L2" | "wave fits L2" | "spills L2" (T3-T5)

    @property
    def total(self) -> float:
        return self.load + self.store

    def to_json(self) -> dict:
        return {
            "model": "launch",
            "load": _round(self.load),
            "store": _round(self.store),
            "working_set_bytes": _round(self.working_set),
            "l2_bytes": _round(self.l2_bytes),
            "waves": self.waves,
            "l2_decision": self.decision,
            "arrays": [a.to_json() for a in self.arrays],
        }


def _round(value: float) -> float:
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else round(value, 1)


@dataclass(frozen=True)
class Machine:
    """What the model needs of a GPU."""

    l2_bytes: float
    sms: int
    threads_per_sm: int
    blocks_per_sm: int


#: resident threads and blocks per SM by compute capability (CUDA C Programming Guide,
#: "Technical Specifications per Compute Capability"); occupancy limits from registers and
#: shared memory are not known statically, so residency is an upper bound (rule T4)
_RESIDENCY = {
    "7.0": (2048, 32),
    "7.5": (1024, 16),
    "8.0": (2048, 32),
    "8.6": (1536, 16),
    "8.7": (2048, 32),
    "8.9": (1536, 24),
    "9.0": (2048, 32),
}


def machine_of(gpu) -> Machine:
    threads, blocks = _RESIDENCY.get(getattr(gpu, "compute_capability", ""), (2048, 32))
    return Machine(float(gpu.l2_bytes), int(gpu.sms), threads, blocks)


@dataclass(frozen=True)
class _Range:
    """An access's index as numbers: constant + sum of coefficient x dim."""

    low: float
    high: float
    span: float  # elements from the lowest to the highest place, inclusive
    count: float  # places visited, counting repeats of one place
    lane_step: float | None  # elements between neighbouring lanes (None: no lane dim)


def _affine(
    index: sympy.Expr,
    extents: Mapping[sympy.Symbol, float],
    values: Mapping[str, float],
    lanes: frozenset[sympy.Symbol] = frozenset(),
) -> _Range | None:
    """The range of an index affine in the dims (after binding every other name), or None:
    computed once per index, dims and values of its names (`_affine_of`)."""
    bindings = tuple(
        (s, values[s.name]) for s in free_symbols(index) if s not in extents and s.name in values
    )
    return _RANGES((index, tuple(extents.items()), bindings, lanes))


_AffineKey = tuple[
    sympy.Expr,
    tuple[tuple[sympy.Symbol, float], ...],  # the dims' extents
    tuple[tuple[sympy.Symbol, float], ...],  # the values of the index's other names
    frozenset[sympy.Symbol],  # the lane dims
]


def _affine_of(key: _AffineKey) -> _Range | None:
    """`_affine` of a key: a function of sympy expressions and numbers alone (a value and an
    equal one, `3` and `3.0`, bind the same number), so kept for the session (`_RANGES`)."""
    index, dims, bindings, lanes = key
    extents = dict(dims)
    bound = index.xreplace(
        {
            name: sympy.Integer(int(value)) if float(value).is_integer() else sympy.Float(value)
            for name, value in bindings
        }
    )
    if any(s not in extents for s in free_symbols(bound)):
        return None
    terms = bound.as_coefficients_dict()
    if any(
        t != 1 and t not in extents and not isinstance(t, (sympy.floor, sympy.Mod)) for t in terms
    ):
        terms = sympy.expand(bound).as_coefficients_dict()  # products of sums: distribute
    constant = 0.0
    coefficients: dict[sympy.Symbol, float] = {}
    #: T11: (coefficient, the remainder's range, the dims its dividend moves over)
    remainders: list[tuple[float, _Range, frozenset[sympy.Symbol]]] = []
    for term, coefficient in terms.items():
        if term == 1:
            constant += float(coefficient)
        elif term in extents:
            coefficients[term] = coefficients.get(term, 0.0) + float(coefficient)
        elif isinstance(term, sympy.floor) and len(term.args) == 1:
            inner = _affine_floor(term.args[0], extents)
            if inner is None:
                return None
            for s, c in inner.items():
                coefficients[s] = coefficients.get(s, 0.0) + float(coefficient) * c
        elif isinstance(term, sympy.Mod):
            remainder = _remainder(term, extents, lanes)
            if remainder is None:
                return None
            over = frozenset(term.args[0].free_symbols) & frozenset(extents)
            remainders.append((float(coefficient), remainder, over))
        else:
            return None
    low = high = constant
    count = 1.0
    lane_step = None
    counted: set[sympy.Symbol] = set()
    for s, c in coefficients.items():
        extent = max(1.0, extents[s])
        if c == 0:
            continue
        reach = c * (extent - 1)
        low, high = (low + min(0.0, reach)), (high + max(0.0, reach))
        count *= extent
        counted.add(s)
        if s in lanes:
            lane_step = abs(c)
    for c, rem, over in remainders:
        reach = c * rem.high
        low, high = (low + min(0.0, reach)), (high + max(0.0, reach))
        for s in over - counted:  # `e / 8` and `e % 8` visit the places of `e` once
            count *= max(1.0, extents[s])
            counted.add(s)
        if rem.lane_step is not None:
            # neighbouring lanes fall in one period of the `%`: its step is theirs
            lane_step = abs(c) * rem.lane_step
    return _Range(low, high, high - low + 1, count, lane_step)


#: a launch's accesses ask for their ranges again for each run of blocks and wave, and
#: copies of a kernel (`prog-cuda/`, `prog-hip/`) ask alike; a range is never changed
_RANGES: SessionMemo[_AffineKey, _Range | None] = SessionMemo(_affine_of)


def _remainder(
    term: sympy.Mod, extents: Mapping[sympy.Symbol, float], lanes: frozenset[sympy.Symbol]
) -> _Range | None:
    """`a % b` over the dims, `a` affine and non-negative, `b` a number (rule T11): it takes
    `min(b, places of a)` values from 0 to `min(b, high of a + 1) - 1`."""
    dividend, divisor = term.args
    if not divisor.is_number or float(divisor) <= 0:
        return None
    inner = _affine(dividend, extents, {}, lanes)
    if inner is None or inner.low < 0:
        return None
    period = float(divisor)
    high = min(period - 1, inner.high)
    places = min(period, inner.count, high + 1)
    step = inner.lane_step if inner.lane_step is not None and inner.lane_step < period else None
    return _Range(0.0, high, high + 1, places, step)


def _affine_floor(arg: sympy.Expr, extents) -> dict[sympy.Symbol, float] | None:
    """floor(a/c) over the dims, read as a/c: its range, not its steps, is what counts."""
    out: dict[sympy.Symbol, float] = {}
    for term, coefficient in sympy.expand(arg).as_coefficients_dict().items():
        if term == 1:
            continue
        if term not in extents:
            return None
        out[term] = float(coefficient)
    return out


def _number(expr: sympy.Expr, values: Mapping[str, float]) -> float | None:
    try:
        value = float(evaluate(expr, values))
    except (NotNumeric, OverflowError, ZeroDivisionError, ValueError, TypeError):
        return None
    return value if math.isfinite(value) else None


def _sectors_per_lane(rng: _Range | None, unit: int, width: int) -> float:
    """Sector bytes one lane's access costs its warp (rule T1): lanes a few bytes apart
    share sectors; lanes a sector or more apart pay a sector each; no lane dim, one sector
    for the whole warp."""
    if rng is None:
        return float(width)  # data-dependent: as the per-thread count
    sector_width = SECTOR * math.ceil(width / SECTOR)
    if rng.lane_step is None:
        return sector_width / WARP
    stride = rng.lane_step * unit
    if stride <= width:
        return float(width)
    return float(min(stride, sector_width))


def _footprint(rng: _Range, unit: int, width: int) -> float:
    """Distinct sector bytes of one access over the dims' ranges (rule T2)."""
    distinct = min(rng.span, rng.count)
    gap = rng.span / distinct if distinct else 1.0
    per_place = (
        width if gap * unit <= width else min(gap * unit, SECTOR * math.ceil(width / SECTOR))
    )
    return distinct * max(per_place, width)


def launch_traffic(
    accesses: Sequence[Access],
    dims: Sequence[Dim],
    values: Mapping[str, float],
    threads: float,
    machine: Machine,
    block_threads: float | None = None,
    guessed: frozenset[str] = frozenset(),
    allocations: Mapping[str, tuple[float, bool]] | None = None,
) -> LaunchTraffic | None:
    """DRAM load and store bytes of the whole launch, or None when nothing is known.
    `allocations`: array -> its size as host code allocated it, in bytes or (True) in
    elements (rule T15)."""
    if threads <= 0:
        return None  # no accesses is no reason: such a kernel still reads its launch (T7)
    extents: dict[sympy.Symbol, float] = {}
    for dim in dims:
        extent = _number(dim.extent, values)
        if extent is None:
            return None
        extents[dim.symbol] = max(1.0, extent)
    wave_extents, waves = _wave(dims, extents, machine, block_threads)
    lanes = frozenset(d.symbol for d in dims if d.role == "lane")
    guessed_dims = frozenset(
        d.symbol for d in dims if any(s.name in guessed for s in d.extent.free_symbols)
    )
    arrays: dict[str, ArrayTraffic] = {}
    spans: dict[tuple[str, bool], list[tuple[float, float, int]]] = {}
    sums: dict[tuple[str, bool], float] = {}
    wave_sums: dict[str, float] = {}
    wave_spans: dict[str, list[tuple[float, float, int]]] = {}
    unplaced: dict[tuple[tuple[str, bool], tuple[int, ...]], float] = {}  # T10
    sites: list[_Site] = []  # each access placed, for the runs of blocks of T5
    unplaced_at: dict[tuple[tuple[str, bool], tuple[int, ...]], list[int]] = {}  # T13
    placed_in: dict[tuple[tuple[str, bool], tuple[int, ...]], float] = {}  # T13
    for access in accesses:
        traffic = arrays.setdefault(access.array, ArrayTraffic(access.array))
        traffic.lines.add(access.line)
        repeats = _number(access.repeats, values)
        width = access.width if isinstance(access.width, int) else _number(access.width, values)
        if repeats is None or width is None:
            return None
        width = max(1, math.ceil(width))
        index = access.index
        if index is not None and _uses_guesses(index, guessed_dims, guessed):
            index = None  # T8: a place over sizes nobody gave: no reuse is assumed
        rng = _affine(index, extents, values, lanes) if index is not None else None
        requested = threads * repeats * _sectors_per_lane(rng, access.unit, width)
        traffic.requested += requested
        key = (access.array, access.store)
        if rng is None:
            # T6: a data-dependent place. Read through memory (a gather), one distinct place
            # per thread, its repeats hits; moved by a loop (`for (j = start[r]; ...)`), a new
            # place each time
            traffic.exact = False
            if access.indirect and index is access.index:
                footprint = min(requested, threads * width)
            elif index is access.index:
                # T10: sites the dims cannot place, of one array in one loop nest, are
                # neighbours of one place (a stencil's points): the largest stands for all
                site = (key, access.nest)
                footprint = max(0.0, requested - unplaced.get(site, 0.0))
                unplaced[site] = max(unplaced.get(site, 0.0), requested)
                unplaced_at.setdefault(site, []).append(len(sites))
            else:
                footprint = requested
            if index is not None:
                footprint = min(footprint, _bounded(index, extents, values, access.unit, width))
            sums[key] = sums.get(key, 0.0) + footprint
            wave_sums[access.array] = wave_sums.get(access.array, 0.0) + footprint / waves
            sites.append(_Site(access.array, None, access.unit, width, footprint))
            continue
        footprint = min(_footprint(rng, access.unit, width), requested)
        placed = (key, access.nest)
        placed_in[placed] = max(placed_in.get(placed, 0.0), footprint)
        sites.append(_Site(access.array, index, access.unit, width, footprint))
        sums[key] = sums.get(key, 0.0) + footprint
        spans.setdefault(key, []).append((rng.low, rng.high, access.unit))
        wave_rng = _affine(index, wave_extents, values, lanes) if waves > 1 else rng
        wave_fp = _footprint(wave_rng, access.unit, width) if wave_rng else footprint
        wave_sums[access.array] = wave_sums.get(access.array, 0.0) + min(wave_fp, footprint)
        if wave_rng is not None:
            wave_spans.setdefault(access.array, []).append(
                (wave_rng.low, wave_rng.high, access.unit)
            )
    for site, total in unplaced.items():
        # T13: unplaced sites beside a placed site of their array, in their nest or one
        # enclosing it, are that site's neighbours: they add only what exceeds its footprint
        (key, nest) = site
        cut = min(total, max(placed_in.get((key, nest[:k]), 0.0) for k in range(len(nest) + 1)))
        if cut <= 0 or total <= 0:
            continue
        sums[key] -= cut
        wave_sums[key[0]] -= cut / waves
        keep = (total - cut) / total
        for k in unplaced_at[site]:
            sites[k] = replace(sites[k], footprint=sites[k].footprint * keep)
    caps = _allocation_caps(accesses, allocations or {})
    if _contradicted(caps, spans):
        caps = {}
    for (array, store), total in sums.items():
        union = _union_bytes(spans.get((array, store), []))
        footprint = min(total, union) if arrays[array].exact and union else total
        footprint = min(footprint, caps.get(array, math.inf))  # T15
        if store:
            arrays[array].store_footprint = footprint
        else:
            arrays[array].load_footprint = footprint
    for array, traffic in arrays.items():
        wave = wave_sums.get(array, 0.0)
        union = _union_bytes(wave_spans.get(array, []))
        if traffic.exact and union:
            wave = min(wave, union)  # a stencil's neighbours in one wave overlap (T4)
        traffic.wave_footprint = min(wave, traffic.load_footprint + traffic.store_footprint)
    working_set = sum(max(a.load_footprint, a.store_footprint) for a in arrays.values())
    wave_set = sum(a.wave_footprint for a in arrays.values())
    if working_set <= machine.l2_bytes:
        decision = "fits L2"
    elif wave_set <= machine.l2_bytes:
        decision = "wave fits L2"
    else:
        decision = "spills L2"
    runs, later = 1.0, 0.0
    run_footprints: dict[str, float] = {}
    if decision == "spills L2":
        runs, run_footprints = _reuse_runs(sites, dims, extents, values, lanes, arrays, machine)
        later = _later_share(dims, extents, machine, block_threads)
    for traffic in arrays.values():
        traffic.dram_load, traffic.dram_store = traffic.load_footprint, traffic.store_footprint
        if decision == "spills L2" and traffic.requested > 0:
            # T5: the first wave starts together and shares in step; the blocks after it start
            # as others end, and share through L2 only while what the blocks between two
            # sharers touch fits: each run of blocks that keeps its sharing reads its own
            moved = traffic.load_footprint + traffic.store_footprint
            per_run = run_footprints.get(traffic.array, moved)
            staggered = later * runs * per_run
            charged = min(traffic.requested, max(moved, traffic.wave_footprint + staggered))
            scale = charged / moved if moved else 1.0
            traffic.dram_load *= scale
            traffic.dram_store *= scale
    return LaunchTraffic(
        load=LAUNCH_OVERHEAD + sum(a.dram_load for a in arrays.values()),
        store=sum(a.dram_store for a in arrays.values()),
        arrays=sorted(arrays.values(), key=lambda a: -(a.dram_load + a.dram_store)),
        working_set=working_set,
        l2_bytes=machine.l2_bytes,
        waves=waves,
        decision=decision,
    )


def _allocation_caps(
    accesses: Sequence[Access], allocations: Mapping[str, tuple[float, bool]]
) -> dict[str, float]:
    """Rule T15: no launch touches more of an array than host code allocated for it, in
    sectors; a size in elements counts the largest element the kernel reads it as."""
    units: dict[str, int] = {}
    for access in accesses:
        if access.array in allocations:
            # an element size is known where the access was placed in the array (its
            # index, or its line: a copy or a member through `this` is counted unplaced),
            # and of more than a byte unless a byte is what it reads (an unknown type's
            # element counts 1)
            placed = access.index is not None or access.line > 0
            known = placed and (access.unit > 1 or access.width == 1)
            units[access.array] = max(units.get(access.array, 0), access.unit if known else 0)
    caps: dict[str, float] = {}
    for array, unit in units.items():
        size, elements = allocations[array]
        if elements and unit <= 0:
            continue  # a size in elements of no known element
        reach = size * unit if elements else size
        caps[array] = float(SECTOR * math.ceil(reach / SECTOR))
    return caps


def _contradicted(
    caps: Mapping[str, float], spans: Mapping[tuple[str, bool], list[tuple[float, float, int]]]
) -> bool:
    """Rule T15: whether an array's placed accesses, over bound sizes, span more than twice
    its allocation: then host code and the launch disagree on the problem's size (a header's
    macro read in another arm, another launch's buffers) and no allocation is trusted."""
    for (array, _store), ranges in spans.items():
        cap = caps.get(array)
        if cap is not None and _union_bytes(ranges) > 2 * cap:
            return True
    return False


def _bounded(
    index: sympy.Expr,
    extents: Mapping[sympy.Symbol, float],
    values: Mapping[str, float],
    unit: int,
    width: int,
) -> float:
    """Rule T14: the most bytes an offset the dims cannot place can touch, from the range of
    values it can take (in sectors, one more for alignment); infinite when unbounded."""
    bounds = _bounds(index, extents, values)
    if bounds is None:
        return math.inf
    reach = (bounds[1] - bounds[0]) * unit + width
    return float(SECTOR * (math.ceil(reach / SECTOR) + 1))


#: how deep `_bounds` follows an index's operators before calling it unbounded
MAX_BOUND_DEPTH = 24


def _bounds(
    expr: sympy.Expr,
    extents: Mapping[sympy.Symbol, float],
    values: Mapping[str, float],
    depth: int = 0,
) -> tuple[float, float] | None:
    """The lowest and highest value an index can take over the dims (rule T13), by interval
    arithmetic; None when unbounded (a name without a value, an operator it does not know,
    or nesting deeper than MAX_BOUND_DEPTH)."""
    if depth > MAX_BOUND_DEPTH:
        return None
    if expr.is_Number:
        value = float(expr)
        return (value, value) if math.isfinite(value) else None
    if isinstance(expr, sympy.Symbol):
        if expr in extents:
            return 0.0, max(0.0, extents[expr] - 1)
        if expr.name in values:
            value = float(values[expr.name])
            return value, value
        return None
    if isinstance(expr, sympy.Mod):
        dividend, divisor = expr.args
        period = _bounds(divisor, extents, values, depth + 1)
        if period is None or period[0] != period[1] or period[0] <= 0:
            return None
        top = period[0] - 1
        inner = _bounds(dividend, extents, values, depth + 1)
        if inner is not None and inner[0] >= 0:
            return 0.0, min(top, inner[1])
        return -top, top  # C's remainder takes the dividend's sign
    if isinstance(expr, sympy.floor) and len(expr.args) == 1:
        inner = _bounds(expr.args[0], extents, values, depth + 1)
        return None if inner is None else (math.floor(inner[0]), math.floor(inner[1]))
    if isinstance(expr, sympy.Pow) and expr.exp.is_number:
        base = _bounds(expr.base, extents, values, depth + 1)
        whole = expr.exp.is_integer and expr.exp.is_positive
        if base is None or base[0] < 0 or (base[0] == 0 and not whole):
            return None
        ends = sorted((base[0] ** float(expr.exp), base[1] ** float(expr.exp)))
        return ends[0], ends[1]
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        parts = [_bounds(a, extents, values, depth + 1) for a in expr.args]
        if any(p is None for p in parts):
            return None
        low, high = cast(tuple[float, float], parts[0])
        for p in cast(list[tuple[float, float]], parts[1:]):
            if isinstance(expr, sympy.Add):
                low, high = low + p[0], high + p[1]
            else:
                corners = [low * p[0], low * p[1], high * p[0], high * p[1]]
                low, high = min(corners), max(corners)
        return low, high
    return None


def _uses_guesses(
    index: sympy.Expr, guessed_dims: frozenset[sympy.Symbol], guessed: frozenset[str]
) -> bool:
    """Whether an index, or the range of a dim it moves over, rests on a default value."""
    return any(s in guessed_dims or s.name in guessed for s in free_symbols(index))


def _union_bytes(ranges: list[tuple[float, float, int]]) -> float:
    """Bytes covered by the union of element ranges (each in its own element size)."""
    if not ranges:
        return 0.0
    intervals = sorted((low * unit, (high + 1) * unit) for low, high, unit in ranges)
    total = 0.0
    start, end = intervals[0]
    for low, high in intervals[1:]:
        if low > end:
            total += end - start
            start, end = low, high
        else:
            end = max(end, high)
    return total + end - start


@dataclass(frozen=True)
class _Site:
    """One access as T5 re-places it over a run of blocks."""

    array: str
    index: sympy.Expr | None  # None: not placed by the dims (T6, T8, T10)
    unit: int
    width: int
    footprint: float  # over the whole launch


def _run_footprints(
    sites: Sequence[_Site],
    extents: Mapping[sympy.Symbol, float],
    values: Mapping[str, float],
    lanes: frozenset[sympy.Symbol],
    arrays: Mapping[str, ArrayTraffic],
    runs: float,
) -> dict[str, float]:
    """Each array's footprint over one run of blocks (`extents`): T2 over the run, the union
    of its accesses' ranges; an unplaced access's share is its launch footprint / runs."""
    sums: dict[str, float] = {}
    spans: dict[str, list[tuple[float, float, int]]] = {}
    for site in sites:
        rng = _affine(site.index, extents, values, lanes) if site.index is not None else None
        if rng is None:
            share = site.footprint / runs
        else:
            share = min(_footprint(rng, site.unit, site.width), site.footprint)
            spans.setdefault(site.array, []).append((rng.low, rng.high, site.unit))
        sums[site.array] = sums.get(site.array, 0.0) + share
    out: dict[str, float] = {}
    for array, total in sums.items():
        union = _union_bytes(spans.get(array, []))
        if arrays[array].exact and union:
            total = min(total, union)
        traffic = arrays[array]
        out[array] = min(total, traffic.load_footprint + traffic.store_footprint)
    return out


def _reuse_runs(
    sites: Sequence[_Site],
    dims: Sequence[Dim],
    extents: Mapping[sympy.Symbol, float],
    values: Mapping[str, float],
    lanes: frozenset[sympy.Symbol],
    arrays: Mapping[str, ArrayTraffic],
    machine: Machine,
) -> tuple[float, dict[str, float]]:
    """The runs of consecutive blocks that keep their sharing through L2, and each array's
    footprint over one run (rule T5, a layer condition over the grid).

    Blocks start in linear order and, once the first wave retires, one starts as another ends,
    so two blocks `d` apart in that order reach the same point of their work (the same
    iteration of a long loop, or their one pass) `d` block-lifetimes / resident apart: in
    between, the resident blocks touch about what `d` consecutive blocks touch over their
    lifetime. Blocks that share data along block dim k (x: the next block; y: the next row of
    blocks; z: the next plane) are the extents of the dims before k apart, so their sharing
    survives in L2 when the footprint of that run of blocks (dims before k whole, k and
    after one) fits. The kept dims are a prefix (each run holds the one before it); the
    first dim that fails cuts the grid into runs whose sharing is lost between them."""
    blocks = [d for d in dims if d.role == "block"]
    run: dict[sympy.Symbol, float] = dict(extents)
    for d in blocks:
        run[d.symbol] = 1.0
    runs = math.prod(extents[d.symbol] for d in blocks)
    footprints = _run_footprints(sites, run, values, lanes, arrays, runs)
    for dim in blocks:
        if sum(footprints.values()) > machine.l2_bytes:
            break  # blocks sharing along `dim` are a run apart that does not fit
        wider = dict(run)
        wider[dim.symbol] = extents[dim.symbol]
        wider_runs = runs / extents[dim.symbol]
        run, runs = wider, wider_runs
        footprints = _run_footprints(sites, run, values, lanes, arrays, runs)
    return runs, footprints


def _wave(
    dims: Sequence[Dim],
    extents: dict[sympy.Symbol, float],
    machine: Machine,
    block_threads: float | None,
) -> tuple[dict[sympy.Symbol, float], int]:
    """The dims' extents over one wave of resident blocks, and the number of waves (T4).
    Blocks start in linear order, x fastest, so a wave is a run of x, then of y rows."""
    blocks = [d for d in dims if d.role == "block"]
    if not blocks or not block_threads:
        return dict(extents), 1
    resident = _resident(machine, block_threads)
    grid = math.prod(extents[d.symbol] for d in blocks)
    waves = max(1, math.ceil(grid / resident))
    if waves == 1:
        return dict(extents), 1
    wave = dict(extents)
    left = float(resident)
    for dim in blocks:  # x, y, z order
        full = extents[dim.symbol]
        wave[dim.symbol] = max(1.0, min(full, left))
        left = max(1.0, math.ceil(left / full))
    return wave, waves


def _resident(machine: Machine, block_threads: float) -> int:
    """Blocks resident at once over the GPU (T4): an upper bound, as `_RESIDENCY` says."""
    return machine.sms * min(
        machine.blocks_per_sm, max(1, int(machine.threads_per_sm // block_threads))
    )


def _later_share(
    dims: Sequence[Dim],
    extents: Mapping[sympy.Symbol, float],
    machine: Machine,
    block_threads: float | None,
) -> float:
    """The share of the grid's blocks that start after the first wave (T5)."""
    blocks = [d for d in dims if d.role == "block"]
    if not blocks or not block_threads:
        return 0.0
    grid = math.prod(extents[d.symbol] for d in blocks)
    return max(0.0, grid - _resident(machine, block_threads)) / grid
