"""FeatureVector: what one thread (or one OpenMP parallel-loop iteration) does.

Counts are sympy expressions over symbols (kernel parameters, macros, launch dimensions)
until `resolve` binds them; the CSV export and the learned model read the resolved view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import sympy
from roofcast.features.mathfuncs import SPECIAL_COSTS

#: Weights that fold division and special functions into the FLOP totals, in FLOPs per call
#: by kind and precision: the catalogue's defaults (features/data/intrinsics.toml, which
#: cites where they come from); a GPU file may override some (`GPU.special_flops`).
SPECIAL_FLOP_WEIGHTS: Mapping[str, Mapping[str, int]] = SPECIAL_COSTS

Number = sympy.Expr


class CallSite(NamedTuple):
    """Compile mode (S14): one place a line of an inlined callee was walked at, for line
    tables without inlined-at locations (clang's), which put the callee's instructions at
    its own lines only."""

    #: the kernel's statement the call is in: (the kernel's file, its line)
    call: tuple[str, int]
    #: trip counts of every loop around the line there, the callers' (the kernel's first)
    #: then its own, outermost first
    trips: tuple[sympy.Expr, ...]
    #: those loops' (file, first line, last line), to tell which kept loops are theirs
    spans: tuple[tuple[str, int, int], ...]
    #: S51: the share of the threads (S16) that run the line from this call
    share: sympy.Expr = sympy.Integer(1)


#: the structure counts tallied per loop context besides FLOPs and global load/store bytes
STRUCTURE_FIELDS: tuple[str, ...] = (
    "int_ops",
    "loads",
    "stores",
    "shared_load_bytes",
    "shared_store_bytes",
    "atomics",
    "barriers",
    "branches",
    "bytes_private",
    "bytes_partial",
    "bytes_broadcast",
    "bytes_rare",
    "flops_tensor",
)
#: every per-thread count the visitor tallies (all sympy-expression fields but `special`)
TALLY_FIELDS: tuple[str, ...] = (
    "flops_hp",
    "flops_sp",
    "flops_dp",
    "load_bytes",
    "store_bytes",
    *STRUCTURE_FIELDS,
)


def zero() -> sympy.Expr:
    return sympy.Integer(0)


@dataclass
class FeatureVector:
    """Per-thread counts (expressions) and structural facts of one kernel.

    flops_*: add/sub/mul by precision, `a*b+c` is 2, `fma()` is 2 (ncu's convention).
    special: calls by (kind, precision), e.g. ("div","sp"); folded into `flops_total` with
    SPECIAL_FLOP_WEIGHTS. Bytes are global-memory bytes, each distinct access once; an
    access invariant in a loop counts once for that loop.
    """

    flops_hp: sympy.Expr = field(default_factory=zero)
    flops_sp: sympy.Expr = field(default_factory=zero)
    flops_dp: sympy.Expr = field(default_factory=zero)
    int_ops: sympy.Expr = field(default_factory=zero)
    load_bytes: sympy.Expr = field(default_factory=zero)
    store_bytes: sympy.Expr = field(default_factory=zero)
    loads: sympy.Expr = field(default_factory=zero)
    stores: sympy.Expr = field(default_factory=zero)
    #: global bytes by how the element varies across threads (private + partial + broadcast
    #: = load + store bytes); see KernelLowering.sharing
    bytes_private: sympy.Expr = field(default_factory=zero)
    bytes_partial: sympy.Expr = field(default_factory=zero)
    bytes_broadcast: sympy.Expr = field(default_factory=zero)
    #: global bytes under an equality guard (`if (i == 0)`): taken by few threads
    bytes_rare: sympy.Expr = field(default_factory=zero)
    shared_load_bytes: sympy.Expr = field(default_factory=zero)
    shared_store_bytes: sympy.Expr = field(default_factory=zero)
    atomics: sympy.Expr = field(default_factory=zero)
    barriers: sympy.Expr = field(default_factory=zero)
    branches: sympy.Expr = field(default_factory=zero)
    #: tensor-core FLOPs (WMMA mma_sync, 2*M*N*K per warp): a class of their own, in no
    #: precision's total and no intensity (the profiled sp/dp/hp FLOPs exclude them too)
    flops_tensor: sympy.Expr = field(default_factory=zero)
    special: dict[tuple[str, str], sympy.Expr] = field(default_factory=dict)
    # structure (plain numbers)
    loop_depth: int = 0
    loops: int = 0
    unknown_trip_loops: int = 0
    grid_stride_loops: int = 0
    indirect_accesses: int = 0
    reuse_accesses: int = 0
    distinct_arrays: int = 0
    shared_arrays: int = 0
    device_calls: int = 0
    templated: bool = False
    #: symbol -> value from host code (over constants and argv_k); see analyzer/hostvalues.py
    host_bindings: dict[str, sympy.Expr] = field(default_factory=dict)
    #: rule D33, a kernel with more than one launch site: (`file:line`, that site's host
    #: bindings, whether it lies in a host loop: D34) per site, the first's bindings being
    #: those of `host_bindings`; empty otherwise
    launch_sites: list[tuple[str, dict[str, sympy.Expr], bool]] = field(default_factory=list)
    #: rule D43: the one launch site's host bindings on the second trip of the loop its
    #: host function is called in, where they differ from `host_bindings`; empty otherwise
    second_trip: dict[str, sympy.Expr] = field(default_factory=dict)
    #: device data footprint (bytes) from host code, over constants and argv_k
    footprint: sympy.Expr | None = None
    #: array -> (its allocation over constants and argv_k, whether in elements rather than
    #: bytes), from host code (rule D28): the traffic model's cap (T15)
    allocations: dict[str, tuple[sympy.Expr, bool]] = field(default_factory=dict)
    #: rule C11: a compressed-row loop's trip symbol -> (the row pointer array and its
    #: element bytes, the arrays the loop's counter indexes and theirs)
    csr_trips: dict[str, tuple[tuple[str, int], tuple[tuple[str, int], ...]]] = field(
        default_factory=dict
    )
    #: OpenMP: iterations of the collapsed work-shared loop nest (the thread grid); None for CUDA.
    work_items: sympy.Expr | None = None
    unparsed_regions: int = 0
    symbols: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    #: CUDA thread guards on a name, `if (i < n)`, `if (i >= n) return;`, `if (i < n - 1)`,
    #: outside any loop: name -> (the guarded thread position over threadIdx/blockIdx and
    #: the launch dims, what to add to its largest value), for rule U6
    thread_guards: dict[str, tuple[sympy.Expr, int]] = field(default_factory=dict)
    #: the traffic model's input (features/traffic.py): distinct global accesses with their
    #: index over `dims` (thread/block positions, loop counters, work-shared iterations)
    accesses: list = field(default_factory=list)
    dims: list = field(default_factory=list)
    #: `explain` only: (source line, count name) -> its per-thread count and the ids of the
    #: docs/counting.md rules that counted it, and the trip counts of the loop nests each
    #: line's counts run in
    by_line: dict[tuple[int, str], sympy.Expr] = field(default_factory=dict)
    line_rules: dict[tuple[int, str], tuple[str, ...]] = field(default_factory=dict)
    line_nests: dict[int, list[str]] = field(default_factory=dict)
    #: (file, line) -> trip counts of the loops around it in its function (compile mode, S3)
    line_loops: dict[tuple[str, int], tuple[sympy.Expr, ...]] = field(default_factory=dict)
    #: (file, line) of an inlined callee -> each inlined call that walked it (its number)
    #: -> where (compile mode, S14); no entry for a line of the kernel's own function
    line_sites: dict[tuple[str, int], dict[int, CallSite]] = field(default_factory=dict)
    #: (file, line) -> the share of the launch's threads that run it (compile mode, S16)
    line_shares: dict[tuple[str, int], sympy.Expr] = field(default_factory=dict)
    #: compile mode, for `explain`: line of the kernel's file -> per-thread FLOPs and int
    #: ops its SASS runs (S7's fields: flops_sp, flops_dp, flops_hp, int_ops)
    sass_by_line: dict[int, dict[str, sympy.Expr]] = field(default_factory=dict)
    #: compile mode: "sass" or "source" (what FLOPs and int ops were counted from) and why
    counted_from: str = ""
    counted_why: str = ""
    #: compile mode, OpenMP (S13): FLOPs and int ops each launched device thread runs outside
    #: the region's loops (the runtime's entry and setup), keyed as resolve's numbers
    #: (flops_sp, flops_dp, flops_hp, flops_int); None: rule U4's constant instead
    runtime_per_thread: dict[str, float] | None = None
    #: why the counts are approximate (nesting or work limits, docs/counting.md N2-N4, B1)
    warnings: list[str] = field(default_factory=list)

    def special_flops(
        self, precision: str, weights: Mapping[str, Mapping[str, int]] | None = None
    ) -> sympy.Expr:
        """FLOPs of one precision's special-function calls at `weights` (kind -> precision ->
        FLOPs per call; SPECIAL_FLOP_WEIGHTS unless a GPU's are given)."""
        weights = SPECIAL_FLOP_WEIGHTS if weights is None else weights
        total = sympy.Integer(0)
        for (kind, prec), count in self.special.items():
            if prec == precision:
                total += count * weights.get(kind, weights["other"])[prec]
        return total

    def flops_total(
        self, precision: str, weights: Mapping[str, Mapping[str, int]] | None = None
    ) -> sympy.Expr:
        """Basic FLOPs of one precision plus its special functions at their weights."""
        base = {"hp": self.flops_hp, "sp": self.flops_sp, "dp": self.flops_dp}[precision]
        return base + self.special_flops(precision, weights)
