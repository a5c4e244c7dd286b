"""Compile-mode counts: a kernel's classed SASS (analyzer.sass) times how often each source
line runs per thread (the counter's loop trip counts), into the FeatureVector's FLOP and
integer fields (docs/counting.md, section "Compile mode", rules S3, S5, S7, S14)."""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import sympy
from roofcast.analyzer.compile import Compiler, template_args
from roofcast.analyzer.hostvalues import has_unknown
from roofcast.analyzer.model import KernelIR
from roofcast.analyzer.sass import CLASSES, KernelSass, LineCounts, Loop
from roofcast.analyzer.sasslane import WARP
from roofcast.analyzer.session import SessionMemo
from roofcast.features import oddtrips, outerunroll, siteshare
from roofcast.features.entry import host_expression
from roofcast.features.spintrips import spin_factor
from roofcast.features.vector import CallSite, FeatureVector

Where = tuple[str, int]

#: S30: the share of the threads taken to pass a guard on loaded data (which share does is
#: not known: a half errs by at most 2x on the guarded code whenever a quarter to all pass)
DATA_SHARE = sympy.Rational(1, 2)


def _normalised(line_loops: Mapping[Where, tuple]) -> dict[Where, tuple]:
    return {(_real(f), line): trips for (f, line), trips in line_loops.items()}


#: a path with its links resolved, once per analysis session (links may change between)
_real: SessionMemo[str, str] = SessionMemo(os.path.realpath)


def _normalised_sites(
    line_sites: Mapping[Where, Mapping[int, CallSite]],
) -> dict[Where, list[CallSite]]:
    """S14: per callee line, its distinct sites (an inlined call walked twice, or two calls
    alike, are one site), with real paths."""
    out: dict[Where, list[CallSite]] = {}
    for (file, line), calls in line_sites.items():
        sites: list[CallSite] = []
        for site in calls.values():
            real = CallSite(
                (_real(site.call[0]), site.call[1]),
                site.trips,
                tuple((_real(f), first, last) for f, first, last in site.spans),
                site.share,
            )
            if real not in sites:
                sites.append(real)
        if sites:
            out[(_real(file), line)] = sites
    return out


def _frames(where: tuple[Where, ...], loops: Mapping[Where, tuple]) -> tuple:
    """Trip counts of the loops around a location: its call site's in the kernel, then for
    inlined code the callee line's within its function (S5)."""
    if not where:
        return ()
    outer = where[-1]
    frames = loops.get((_real(outer[0]), outer[1]), ())
    if len(where) > 1:
        inner = where[0]
        frames = frames + loops.get((_real(inner[0]), inner[1]), ())
    return frames


#: where a group's instructions count: (their share, the trips of the loops around them,
#: the line they count at)
Placement = tuple[sympy.Expr, tuple, Where]


def _agreement(site: CallSite, around: set[Where], elsewhere: set[Where]) -> tuple[int, int]:
    """S14: how well a call site fits instructions inside the kept loops whose back edges
    are `around` (the kernel's other kept loops' are `elsewhere`): (minus its loops that
    were kept but are not around them, its loops that are). A loop of the site with no
    kept loop's back edge in its lines was unrolled fully: it says nothing."""
    inside = not_here = 0
    for file, first, last in site.spans:
        if any(f == file and first <= n <= last for f, n in around):
            inside += 1
        elif any(f == file and first <= n <= last for f, n in elsewhere):
            not_here += 1
    return -not_here, inside


def _run_trips(site: CallSite, edges: set[Where]) -> tuple:
    """S14: a site's trips, less those of its one-trip loops with no kept loop's back edge
    on their first line (the compiler keeps such a loop as straight code): S5 keeps the
    outer trips of as many loops as are kept around an instruction, and a loop that is
    not kept would shift them."""
    return tuple(
        trip
        for trip, (file, first, _) in zip(site.trips, site.spans, strict=True)
        if trip != 1 or (file, first) in edges
    )


def _placements(
    sass: KernelSass,
    loops: Mapping[Where, tuple],
    sites: Mapping[Where, list],
    by_site: bool = False,
) -> list[list[Placement]]:
    """Per group (in `sass.groups` order), where its instructions run (S5, S14).

    With inline chains (nvcc's), or on a line of the kernel's own function, one placement:
    S5's trips, at the outermost location. Without chains (clang's line tables), an
    instruction on a line of an inlined callee counts at the sites the counter inlined it
    at, each with the trips of all the loops around that site and then the callee line's
    own: of those sites, the ones whose loops best agree with the kept loops around the
    instructions (S14), each taking an equal share (the copies, one per site, all show
    the callee's line)."""
    chained = any(len(group.where) > 1 for group in sass.groups)
    edges = {loop.start: loop.line for loop in sass.loops if not loop.remainder and loop.line}
    out: list[list[Placement]] = []
    for group in sass.groups:
        where = group.where
        key = (_real(where[0][0]), where[0][1]) if where else None
        own = group.callee < 0  # S15: a called function's lines count per call instead
        found = sites.get(key) if key and own and not chained and len(where) == 1 else None
        if not found:
            line = where[-1] if where else ("", 0)
            out.append([(sympy.Integer(1), _frames(where, loops), line)])
            continue
        around = {(_real(f), n) for f, n in (edges[s] for s in group.loops if s in edges)}
        every = {(_real(f), n) for f, n in edges.values()}
        elsewhere = every - around
        scores = [_agreement(site, around, elsewhere) for site in found]
        best = max(scores)
        chosen = [site for site, score in zip(found, scores, strict=True) if score == best]
        share = sympy.Rational(1, len(chosen))
        if by_site:  # S51: each call's threads, not the callee line's one share
            out.append([(share * s.share, _run_trips(s, every), s.call) for s in chosen])
            continue
        out.append([(share, _run_trips(site, every), site.call) for site in chosen])
    return out


def _unseen(where: tuple[Where, ...], loops: Mapping[Where, tuple]) -> bool:
    """S9: a location in a file the counter walked (a line of it is noted) but on a line it
    did not note: whether that line lies in a source loop is not known (a callee the counter
    did not follow), unlike a toolkit header's line, which the counter never walks."""
    if not where:
        return False
    file, line = os.path.realpath(where[0][0]), where[0][1]
    if (file, line) in loops:
        return False
    # S33: a file beside one it walked is the program's (a function linked from another
    # unit), not a toolkit header's
    folder = os.path.dirname(file)
    return any(f == file or os.path.dirname(f) == folder for f, _ in loops)


def _loop_frames(
    sass: KernelSass, placed: Sequence[Sequence[Placement]]
) -> dict[tuple[int, ...], tuple]:
    """S5: per nest of kept loops, the source trips of its lines that lie in as many source
    loops as it has kept ones (the longest such, then the most instructions). What runs in
    a kept loop runs once per trip, even on a line the counter saw outside it: the test
    and update of a `for` header split over lines, code the compiler moved into the loop."""
    best: dict[tuple[int, ...], tuple[int, int, tuple]] = {}
    for group, places in zip(sass.groups, placed, strict=True):
        for _, frames, _ in places:
            if not group.loops or len(frames) < group.depth or group.odd:
                continue
            weight = (len(frames), sum(group.counts.values()))
            if group.loops not in best or weight > best[group.loops][:2]:
                best[group.loops] = (*weight, frames)
    return {nest: frames for nest, (_, _, frames) in best.items()}


def _borrow(group: LineCounts, frames: tuple, borrowed: Mapping[tuple[int, ...], tuple]) -> tuple:
    """S5: the trips of an instruction inside more kept loops than its line lies in source
    loops: its nest's (`_loop_frames`), else those of the innermost enclosing nest that has
    as many as it has kept loops, if more than its line's: a kept loop no line of the
    source matches (a library's retry loop, an atomic's compare-and-swap) runs at least
    once per trip of the loops around it."""
    if group.loops in borrowed:
        return borrowed[group.loops]
    for k in range(len(group.loops) - 1, len(frames), -1):
        outer = borrowed.get(group.loops[:k])
        if outer is not None and len(outer) == k:
            return outer
    return frames


#: S47: an instruction group's (kept trips, inner trips) when its kept loops are not the
#: outermost of its line's, else None
Picker = Callable[[LineCounts, tuple], "tuple[tuple, tuple] | None"]


def _picker(sass: KernelSass, loops: Mapping[Where, tuple]) -> Picker:
    """S47: `outerunroll.picked_frames` for a group of the kernel's own lines (one
    location, no S14 site), with the back-edge lines of its kept loops."""
    lines = {
        lp.start: (_real(lp.line[0]), lp.line[1])
        for lp in sass.loops
        if lp.line and not lp.remainder
    }
    copies_on = Counter(lines.values())

    def pick(group: LineCounts, frames: tuple) -> tuple[tuple, tuple] | None:
        if len(group.where) != 1:
            return None
        line = (_real(group.where[0][0]), group.where[0][1])
        if tuple(loops.get(line, ())) != tuple(frames):
            return None  # an S14 site's trips, or borrowed ones
        kept_lines = [lines.get(start) for start in group.loops]
        return outerunroll.picked_frames(frames, kept_lines, loops, copies_on)

    return pick


def _own_copies(
    sass: KernelSass,
    placed: Sequence[Sequence[Placement]],
    borrowed: Mapping[tuple[int, ...], tuple],
    pick: Picker | None = None,
) -> dict[tuple[int, ...], int]:
    """S8: per kept loop (its nest), how many times its body repeats: the gcd of the FP and
    global-memory class counts of the lines directly in it, each line's counts first
    divided by the trips of the source loops it lies in beyond the kept ones (fully
    unrolled inner loops, S5: their copies are not the kept loop's unrolling; 1 when
    those trips are not constants dividing the counts). Nests without FP or global work
    are left out (their copies stay the reader's, by opcode)."""
    found: dict[tuple[int, ...], list[int]] = {}
    for group, places in zip(sass.groups, placed, strict=True):
        if not group.loops or group.odd:  # S54: a copy after the loop, not its body
            continue
        work = [
            n
            for cls, n in group.counts.items()
            if cls in CLASSES and cls != "integer" or cls.startswith(("load_", "store_"))
        ]
        if not work:
            continue
        for _, frames, _ in places:
            if len(frames) < group.depth:
                frames = borrowed.get(group.loops, frames)
            picked = pick(group, frames) if pick is not None else None
            inner = sympy.Mul(*(picked[1] if picked else frames[group.depth :]))
            if (
                isinstance(inner, sympy.Integer)
                and inner > 0
                and all(n % int(inner) == 0 for n in work)
            ):
                found.setdefault(group.loops, []).extend(n // int(inner) for n in work)
            else:
                found.setdefault(group.loops, []).append(1)
    return {nest: math.gcd(*work) for nest, work in found.items()}


def class_counts(
    sass: KernelSass,
    line_loops: Mapping[Where, tuple],
    line_sites: Mapping[Where, Mapping[int, CallSite]] | None = None,
) -> dict[str, sympy.Expr]:
    """Per-thread executions by class (and `load_N`/`store_N` global accesses of N bytes):
    the sum over the kernel's lines of `line_class_counts`."""
    return _summed(line_class_counts(sass, line_loops, line_sites))


def _summed(by_line: Mapping[Where, Mapping[str, sympy.Expr]]) -> dict[str, sympy.Expr]:
    out: dict[str, sympy.Expr] = {}
    for counts in by_line.values():
        for cls, n in counts.items():
            out[cls] = out.get(cls, sympy.Integer(0)) + n
    return out


def _in_loop(
    where: tuple[Where, ...], loops: Mapping[Where, tuple], sites: Mapping[Where, list]
) -> bool:
    """S9: whether a location lies in a source loop, its call sites' loops included (S14:
    a callee's line in a line table without inline chains)."""
    if _frames(where, loops) or _unseen(where, loops):
        return True
    if len(where) != 1:
        return False
    return any(site.trips for site in sites.get((_real(where[0][0]), where[0][1]), ()))


def line_class_counts(
    sass: KernelSass,
    line_loops: Mapping[Where, tuple],
    line_sites: Mapping[Where, Mapping[int, CallSite]] | None = None,
    line_shares: Mapping[Where, sympy.Expr] | None = None,
) -> dict[Where, dict[str, sympy.Expr]]:
    """Per-thread executions by class, per line of the kernel's own function (the outermost
    location: an inlined callee's instructions count at their call site).

    Rule S5: an instruction runs (product of the trips of its source line's loops) / (unroll
    factors of the compiler's loops around it) times. Its line is the kernel's call site
    (outermost location), then for inlined code the callee's line within its function.
    A line inside d source loops but only D < d kept loops counts the outer D loops' trips:
    the inner ones were unrolled fully, each copy is an instruction of its own. A kept loop
    without a remainder whose body repeats c times (S8) is unrolled c times when its
    source trip count is a constant c divides. Without inline chains, a callee's line
    counts at the sites the counter inlined it at (`line_sites`, S14). A line only some
    threads run counts its share of them (`line_shares`, S16)."""
    loops = _normalised(line_loops)
    shares = _normalised(line_shares or {})
    sites = _normalised_sites(line_sites or {})
    chained = any(len(group.where) > 1 for group in sass.groups)
    placed = _placements(sass, loops, sites, line_shares is not None)
    slow = {
        region
        for region, wheres in sass.regions.items()
        if not any(_in_loop(where, loops, {} if chained else sites) for where in wheres)
    }
    borrowed = _loop_frames(sass, placed)
    by_start = {loop.start: loop for loop in sass.loops}
    pick = _picker(sass, loops)  # S47
    repeated = _own_copies(sass, placed, borrowed, pick)
    own: list[list[tuple[Where, sympy.Expr]]] = []
    for group, places in zip(sass.groups, placed, strict=True):
        if slow.intersection(group.regions):
            own.append([])  # S9: a branched-over slow path
            continue
        runs_at: list[tuple[Where, sympy.Expr]] = []
        for share, frames, at in places:
            if len(frames) < group.depth:
                frames = _borrow(group, frames, borrowed)  # S5: seen outside the loop
            kept = frames[: min(group.depth, len(frames))]
            picked = pick(group, frames)
            if picked is not None:  # S47: an outer loop unrolled fully, the inner kept
                kept = picked[0]
            unroll = group.unroll
            # S8: a constant trip count the copies divide (not in a nest with a remainder loop)
            if group.unroll == 1:
                for k, trip in enumerate(kept):
                    seen = group.copies[k] if k < len(group.copies) else 1
                    copies = repeated.get(group.loops[: k + 1], seen)
                    if copies > 1 and isinstance(trip, sympy.Integer) and int(trip) % copies == 0:
                        unroll *= copies
                    elif copies <= 1 and isinstance(trip, sympy.Integer):
                        unroll *= _counted_unroll(by_start.get(group.loops[k]), int(trip))
            kept = _whole_passes(group, kept, by_start)  # S54
            runs = sympy.Mul(*kept) / unroll if kept else sympy.Integer(1)
            if group.odd:  # S54: the straight copy after a loop unrolled twice
                trip = frames[group.depth] if len(frames) > group.depth else None
                if trip is None or group.odd != 2 or not oddtrips.exact_trip(trip):
                    continue  # S29: off the main path
                runs *= oddtrips.odd_runs(trip, group.odd)
            runs_at.append((at, runs * share))
        if group.where:  # S16: the share of the threads that run the instruction's line
            few = shares.get((_real(group.where[0][0]), group.where[0][1]), 1)
            if line_shares is not None and siteshare.placed_by_site(group, sites, chained):
                few = 1  # S51: each site's share is in its placement
            if group.beside and few == 1 and group.callee < 0:  # S46: as its caller's lines
                few = _beside_share(group, loops, shares)
            runs_at = [(at, runs * few) for at, runs in runs_at]
        if group.guards:  # S30: behind guards on loaded data, a share of the threads
            runs_at = [(at, runs * DATA_SHARE**group.guards) for at, runs in runs_at]
        if group.lanes != WARP:  # S53: predicated on the lane, some lanes of each warp
            runs_at = [(at, runs * sympy.Rational(group.lanes, WARP)) for at, runs in runs_at]
        if group.loops:  # S32: a compare-and-swap retried on one shared address
            runs_at = [
                (at, runs * spin_factor(group, by_start, _guarded(group, at, shares)))
                for at, runs in runs_at
            ]
        own.append(runs_at)
    out: dict[Where, dict[str, sympy.Expr]] = {}
    for group, runs_at in _per_call(sass.groups, own):
        for at, runs in runs_at:
            line = out.setdefault(at, {})
            for cls, n in group.counts.items():
                line[cls] = line.get(cls, sympy.Integer(0)) + n * runs
    return out


def _beside_share(
    group: LineCounts, loops: Mapping[Where, tuple], shares: Mapping[Where, sympy.Expr]
) -> sympy.Expr:
    """S46: the share of the threads that run inlined library code (a line the counter
    never noted): that of the kernel lines just before and after it, when both were noted
    with the same; 1 (every thread) when they differ or either was not noted. Not in a
    called function (S15): its runs are its `CALL`s', which carry the caller's share."""
    line = (_real(group.where[0][0]), group.where[0][1])
    if line in loops or line in shares:
        return sympy.Integer(1)
    found = [shares.get((_real(f), n)) for f, n in group.beside]
    if len(found) != 2 or found[0] is None or found[0] != found[1]:
        return sympy.Integer(1)
    return found[0]


def _whole_passes(group: LineCounts, kept: Sequence, by_start: Mapping[int, Loop]) -> tuple:
    """S54: the kept trips with each S29 loop unrolled twice (its odd trip run by a copy
    after it) on an exact trip count T covering c * floor(T / c) source trips."""
    out = list(kept)
    for k, trip in enumerate(out):
        loop = by_start.get(group.loops[k]) if k < len(group.loops) else None
        if loop is not None and loop.odd and loop.unroll == 2 and oddtrips.exact_trip(trip):
            out[k] = oddtrips.main_trips(trip, loop.unroll)
    return tuple(out)


def _counted_unroll(loop: Loop | None, trip: int) -> int:
    """S31: the unroll factor of an integer-only loop kept without a remainder loop: its
    counter's step, when the constant its exit compares the counter with is the source
    trip count (within a step: the counter counts iterations, U per pass) and the step
    divides it. A loop whose source step is the counter's compares with trip x step."""
    if loop is None or loop.step < 2 or trip % loop.step:
        return 1
    return loop.step if abs(trip - loop.bound) <= loop.step else 1


def _guarded(group: LineCounts, at: Where, shares: Mapping[Where, sympy.Expr]) -> bool:
    """S32: whether an S16 share (fewer threads than all) holds the group's line or the
    kernel line it counts at."""
    lines = [at, *((group.where[0],) if group.where else ())]
    return any(shares.get((_real(f), n), 1) != 1 for f, n in lines)


def _per_call(
    groups: Sequence[LineCounts], own: Sequence[Sequence[tuple[Where, sympy.Expr]]]
) -> list[tuple[LineCounts, list[tuple[Where, sympy.Expr]]]]:
    """S15: each group with where and how often it runs per thread. The kernel's own code
    runs as counted; a called function's code runs its own count once per executed call,
    at the kernel's lines its calls run from (a function called from another is placed
    at its caller's callers). A function is placed once every function calling it is;
    what only a cycle of calls reaches (recursion of unknown depth) is not counted."""
    sites: dict[int, list[tuple[Where, sympy.Expr]]] = {-1: [(("", 0), sympy.Integer(1))]}
    callers = {start for group in groups for start in group.calls}
    pending = list(range(len(groups)))
    out: list[tuple[LineCounts, list[tuple[Where, sympy.Expr]]]] = []
    while pending:
        ready = [
            n
            for n in pending
            if groups[n].callee in sites
            and (groups[n].callee < 0 or groups[n].callee not in callers)
        ]
        if not ready:
            break
        for n in ready:
            group = groups[n]
            placed = [
                (at if group.callee < 0 else site, runs * times)
                for at, runs in own[n]
                for site, times in sites[group.callee]
            ]
            out.append((group, placed))
            for start, calls in group.calls.items():
                sites.setdefault(start, []).extend((at, runs * calls) for at, runs in placed)
        done = set(ready)
        pending = [n for n in pending if n not in done]
        callers = {start for n in pending for start in groups[n].calls}
    return out


def flop_counts(counts: Mapping[str, sympy.Expr]) -> dict[str, sympy.Expr]:
    """Rule S7's totals from class counts: FLOPs per precision (add, mul, 2 x fma) and
    integer instructions, keyed like FeatureVector's fields."""

    def get(cls: str) -> sympy.Expr:
        return counts.get(cls, sympy.Integer(0))

    return {
        "flops_sp": get("fadd") + get("fmul") + 2 * get("ffma"),
        "flops_dp": get("dadd") + get("dmul") + 2 * get("dfma"),
        "flops_hp": get("hadd") + get("hmul") + 2 * get("hfma"),
        "int_ops": get("integer"),
    }


def apply_sass(fv: FeatureVector, counts: Mapping[str, sympy.Expr]) -> None:
    """Rule S7: FLOPs (add, mul, 2 x fma per precision) and integer instructions from SASS
    replace the source counts; special functions are in the SASS already (dropped), bytes
    stay the source's (DRAM traffic is not what the instructions load)."""

    totals = flop_counts(counts)
    fv.flops_sp, fv.flops_dp = totals["flops_sp"], totals["flops_dp"]
    fv.flops_hp, fv.int_ops = totals["flops_hp"], totals["int_ops"]
    fv.special = {}
    for cls in CLASSES:
        fv.symbols |= {s.name for s in counts.get(cls, sympy.Integer(0)).free_symbols}


def recount(
    ir: KernelIR,
    features: FeatureVector,
    compiler: Compiler,
    bound: Mapping[str, str] | None = None,
) -> None:
    """Compile mode for one counted kernel: FLOPs and int ops from its SASS where it has
    some (`counted_from` "sass"), else the source counts stay, with the reason why."""
    if ir.language != "cuda":
        from roofcast.features.ompsass import recount_openmp  # imports this module

        recount_openmp(ir, features, compiler, bound)
        return
    sass, why = compiler.kernel(ir.file, ir.name, template_args(ir, bound or {}))
    if sass is None:
        features.counted_from, features.counted_why = "source", why
        return
    host = ir.host_bindings or {}
    values = {n: host_expression(v) for n, v in host.items()}
    solved = {n for n, v in values.items() if v is not None and not has_unknown(v)}
    known = features.symbols | solved | set(bound or {})
    shares = known_shares(features.line_shares, known)
    sites = siteshare.known_sites(features.line_sites, known, known_shares)  # S51
    by_line = line_class_counts(sass, features.line_loops, sites, shares)
    apply_sass(features, _summed(by_line))
    features.sass_by_line = own_lines(by_line, ir.file)
    features.counted_from = "sass"
    features.counted_why = compiler.how(ir.file, ir.name)


def known_shares(shares: Mapping[Where, sympy.Expr], known: set[str]) -> dict[Where, sympy.Expr]:
    """S16: the shares over launch extents and `known` names (the source counts' symbols,
    the host's and the command line's bindings); any other (a bound only the guard reads,
    that no launch binds) is 1: its value would be a default, not known."""
    out: dict[Where, sympy.Expr] = {}
    for where, share in shares.items():
        names = {s.name for s in share.free_symbols}
        extents = {n for n in names if n.startswith(("blockDim_", "gridDim_"))}
        out[where] = share if names - extents <= known else sympy.Integer(1)
    return out


def own_lines(by_line: Mapping[Where, Mapping[str, sympy.Expr]], file: str) -> dict:
    """`explain`'s per-line FLOPs and int ops: the lines of the kernel's own file."""
    own = os.path.realpath(file)
    return {
        line: flop_counts(counts)
        for (path, line), counts in by_line.items()
        if os.path.realpath(path) == own
    }
