"""count_features: set up the scope a kernel sees, lower its body, and count the operations."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING, cast

import sympy
import tree_sitter
from roofcast.analyzer.bodyquery import BodyQueryPart
from roofcast.analyzer.cexpr import CExprError
from roofcast.analyzer.cvalue import parse_value
from roofcast.analyzer.index import parameters
from roofcast.analyzer.model import KernelIR
from roofcast.analyzer.openmp import pragma_words
from roofcast.analyzer.parsing import captures, language, node_text
from roofcast.features.clangtypes import attach as attach_clang_types
from roofcast.features.lowering import KernelLowering, Var, unwrap_declarator
from roofcast.features.ompwork import region_dims, region_shape, region_sizes, region_work
from roofcast.features.opcount import OpCounter, special_kind
from roofcast.features.symbolic import builtin, free_symbols, symbol
from roofcast.features.traffic import Dim
from roofcast.features.vector import TALLY_FIELDS, FeatureVector

if TYPE_CHECKING:
    from roofcast.analyzer.callsites import CallSites

_WORKSHARE = {"distribute", "for", "loop"}

#: a CUDA thread's position: threadIdx.x is the fastest (lane) axis; blocks start x first
CUDA_DIMS = tuple(
    Dim(builtin(base, axis), builtin(extent, axis), role)
    for base, extent, role_x, role in (
        ("threadIdx", "blockDim", "lane", "thread"),
        ("blockIdx", "gridDim", "block", "block"),
    )
    for axis, role in (("x", role_x), ("y", role), ("z", role))
)


def count_features(
    ir: KernelIR,
    defines: Mapping[str, str] | None = None,
    by_line: bool = False,
    line_loops: bool = False,
) -> FeatureVector:
    """Per-thread (CUDA) or per-iteration (OpenMP) counts of one kernel; see docs/counting.md.
    `by_line`: also each source line's counts (`fv.by_line`, for `explain`); `line_loops`:
    the loops around each line (`fv.line_loops`, for compile mode)."""
    return _finish(lower(ir, defines, line_loops), by_line)


def lower(
    ir: KernelIR, defines: Mapping[str, str] | None = None, line_loops: bool = False
) -> KernelLowering:
    """Walk one kernel into the counted kernel IR (`.lowered`); what the walk learns besides
    operations and accesses (host bindings, guards, notes) is on `.fv`."""
    defines = {**ir.launch_defines, **(defines or {})}  # the launch's template arguments last
    counter = KernelLowering(ir, defines)
    attach_clang_types(counter, ir)  # rule M10: with a compile command and libclang only
    counter.track_lines = line_loops
    counter.fv.footprint = host_expression(ir.footprint)
    for name, allocation in ir.allocations.items():  # rule D28
        counter.fv.allocations[name] = (allocation.size, allocation.elements)
    for name, text in ir.host_bindings.items():
        value = host_expression(text)
        if value is not None:
            counter.fv.host_bindings[name] = value
    counter.fv.launch_sites = _launch_sites(ir)  # rule D33
    second = {n: host_expression(v) for n, v in ir.second_trip_bindings.items()}  # rule D43
    counter.fv.second_trip = {n: v for n, v in second.items() if v is not None}
    with counter.within_budget():  # rule B1: a runaway walk stops, its counts kept
        if ir.language == "cuda":
            _count_cuda(counter, ir)
        else:
            _count_openmp(counter, ir)
    if counter.clang is not None and counter.clang.summary():
        counter.fv.notes.append(counter.clang.summary())
    return counter


def _launch_sites(ir: KernelIR) -> list[tuple[str, dict[str, sympy.Expr], bool]]:
    """Rules D33, D34: each launch site's host bindings as expressions, labelled `file:line`,
    and whether it lies in a host loop."""
    out = []
    for site, bindings in zip(ir.launches, ir.site_bindings, strict=False):
        values = {name: host_expression(text) for name, text in bindings.items()}
        label = f"{os.path.basename(site.file)}:{site.line}"
        out.append((label, {n: v for n, v in values.items() if v is not None}, site.repeated))
    return out


def _param_var(counter: KernelLowering, type_text: str, name: str, pointer: bool) -> Var:
    t = counter.types.parse(type_text)
    if counter.clang is not None:
        t = counter.clang.param(name, t)
    if pointer or t.pointer:
        return Var(t, space="global")
    value = symbol(name) if t.is_int and name else None
    # D29: a struct (or vector type) passed by value: its fields are host values by name
    fields = t.kind in ("unknown", "struct") or t.lanes > 1
    return Var(t, space="scalar", value=value, fields=fields)


def _count_cuda(counter: KernelLowering, ir: KernelIR) -> None:
    for p in ir.params:
        if p.name:
            counter.declare(p.name, _param_var(counter, p.type, p.name, p.is_pointer))
    counter.dims.extend(CUDA_DIMS)
    body = ir.ast.child_by_field_name("body") if ir.ast is not None else None
    counter.stmt(body)


_ARGV_SYMBOLS = {f"argv_{k}": sympy.Symbol(f"argv_{k}", positive=True) for k in range(1, 32)}


def host_expression(value: sympy.Expr | str | None) -> sympy.Expr | None:
    """A host value as the analyzer found it: a sympy expression over constants and argv_k.
    Text (an IR built by hand) is read with the strict C parser, never evaluated."""
    if value is None or isinstance(value, sympy.Basic):
        return value
    return _host_text(value)


@lru_cache(maxsize=8192)
def _host_text(text: str) -> sympy.Expr | None:
    text = text.strip()
    if not text:
        return None
    try:
        return parse_value(text, _ARGV_SYMBOLS, {"Min": sympy.Min, "Max": sympy.Max})
    except CExprError:
        return None


#: a host function body's declarations (the regions of one host function share its walk)
_DECLARATIONS_PART = BodyQueryPart("declarations", "(declaration) @d")


@cache
def _query(grammar: str, text: str) -> tree_sitter.Query:
    return tree_sitter.Query(language(grammar), text)


def _declare_enclosing(
    counter: KernelLowering,
    func: tree_sitter.Node,
    region: tree_sitter.Node,
    limit: int | None,
    library: CallSites | None = None,
) -> None:
    """Variables of the enclosing function are the region's mapped data (arrays, pointers) or
    its scalar sizes (kept symbolic unless a constant initialises them)."""
    for p in parameters(func):
        if p.name:
            counter.declare(p.name, _param_var(counter, p.type, p.name, p.is_pointer))
    body = func.child_by_field_name("body")
    if body is None:
        return
    from roofcast.analyzer.hostvalues import HostScope, caller_bindings

    # the function's integer parameters stand for what its caller passes (their own host
    # values, bound at resolution): `int n = size / 8;` is size / 8, not unknown
    params = {p.name: symbol(p.name) for p in parameters(func) if p.name and not p.is_pointer}
    # rule D23: a struct parameter's fields as the caller set them (`int n = cfg.n;`)
    passed = caller_bindings(func, library, members=True) if library is not None else {}
    params.update({name: value for name, value in passed.items() if "." in name})
    grammar = counter.ir.host_grammar or counter.grammar  # func may be an includer's
    # rule D21: the folder's constants and one-line helpers (D18) as for a CUDA launch
    host = HostScope(func, grammar, params, library=library)
    declarations = _DECLARATIONS_PART.captures(body, grammar).get("d", [])
    # Declarations before the region (or before the #include that pastes it into func).
    cutoff = region.start_byte if limit is None else limit
    for decl in declarations:
        if decl.start_byte > cutoff:
            continue
        type_node = decl.child_by_field_name("type")
        if type_node is None:
            continue
        base = node_text(type_node)
        is_const = "const" in node_text(decl).split("=")[0].split()
        for d in decl.children_by_field_name("declarator"):
            value_node = d.child_by_field_name("value") if d.type == "init_declarator" else None
            inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            name, stars, _ = unwrap_declarator(inner)
            if not name:
                continue
            vector_like = any(w in base for w in ("vector", "array", "unique_ptr", "shared_ptr"))
            t = counter.types.parse(base + "*" * stars)
            if stars or vector_like:
                if vector_like and not stars:
                    inner_type = (
                        base.split("<", 1)[-1].rsplit(">", 1)[0] if "<" in base else "float"
                    )
                    t = counter.types.parse(inner_type.split(",")[0] + "*")
                counter.declare(name, Var(t, space="global"))
            else:
                value = counter.value(value_node) if is_const and value_node is not None else None
                if value is None and t.is_int:
                    value = symbol(name)
                    bound = (
                        host.value(value_node, decl.start_byte + 1)
                        if value_node is not None
                        else None
                    )
                    if bound is not None and name not in counter.fv.host_bindings:
                        counter.fv.host_bindings[name] = bound
                counter.declare(name, Var(t, space="scalar", value=value))


def _workshare_loops(
    statement: tree_sitter.Node, counter: KernelLowering
) -> list[tuple[tree_sitter.Node, int]]:
    """Outermost `#pragma omp ... distribute/for/loop` loops inside a plain target region."""
    query = _query(counter.grammar, "(preproc_call) @p")
    found: list[tuple[tree_sitter.Node, int]] = []
    for pragma in captures(query, statement).get("p", []):
        words = pragma_words(pragma)
        if len(words) < 2 or words[0] != "omp" or not (set(words) & _WORKSHARE):
            continue
        loop = pragma.next_named_sibling
        while loop is not None and loop.type == "comment":
            loop = loop.next_named_sibling
        if loop is None or loop.type != "for_statement":
            continue
        if any(outer.start_byte <= loop.start_byte < outer.end_byte for outer, _ in found):
            continue
        text = node_text(pragma)
        m = re.search(r"collapse\s*\(\s*(\d+)\s*\)", text)
        found.append((loop, int(m.group(1)) if m else 1))
    return found


def _count_loop_nest(counter: KernelLowering, loop: tree_sitter.Node, collapse: int) -> sympy.Expr:
    """Walk one iteration of a collapsed work-shared nest; returns its iteration count."""
    iterations = sympy.Integer(1)
    counter.scopes.push()
    node = loop
    for level in range(collapse):
        if node is None or node.type != "for_statement":
            break
        init = node.child_by_field_name("initializer")
        if init is not None and init.type == "declaration":
            counter.stmt(init)
        trip, var, _mean = counter.trip_count(node)
        iterations *= trip
        if var is not None and counter.lookup(var) is None:
            counter.declare(var, Var(counter.types.parse("int")))
        if var is not None:
            # The collapsed loop variables are the thread grid: the innermost one is the
            # fastest axis, the outer ones slower axes.
            innermost = level == collapse - 1 or not _nested_for(node)
            axis = "threadIdx.x" if innermost else "threadIdx.y"
            counted = cast(Var, counter.lookup(var))
            counted.deps = frozenset({axis})
            counted.index_value = counter.loop_dim(node, var, trip, "lane" if innermost else "work")
            counted.varying = True
        body = node.child_by_field_name("body")
        if level < collapse - 1:
            while (
                body is not None
                and body.type == "compound_statement"
                and len([c for c in body.named_children if c.type != "comment"]) == 1
            ):
                body = [c for c in body.named_children if c.type != "comment"][0]
            if body is not None and body.type == "for_statement":
                node = body
                continue
        counter.stmt(body)
        break
    counter.scopes.pop()
    return iterations


def _nested_for(node: tree_sitter.Node) -> bool:
    body = node.child_by_field_name("body")
    while body is not None and body.type == "compound_statement":
        kids = [c for c in body.named_children if c.type != "comment"]
        body = kids[0] if len(kids) == 1 else None
    return body is not None and body.type == "for_statement"


def _count_openmp(counter: KernelLowering, ir: KernelIR) -> None:
    pragma, statement, func, limit = ir.ast[:4]
    library = ir.ast[4] if len(ir.ast) > 4 else None  # an IR built by hand has no call sites
    counter.scopes.push()
    _declare_enclosing(counter, func, statement, limit, library)
    counter.scopes.push()
    if ir.collapse and statement.type == "for_statement":
        counter.fv.work_items = _count_loop_nest(counter, statement, ir.collapse)
        return
    loops = _workshare_loops(statement, counter)
    if not loops:
        counter.stmt(statement)
        inner = [
            node_text(p)
            for p in captures(_query(counter.grammar, "(preproc_call) @p"), statement).get("p", [])
        ]
        shape = region_shape(ir.pragma, inner)
        sizes = region_sizes(shape, counter.grammar, counter.value)
        counter.fv.work_items, note = region_work(shape, sizes)
        counter.fv.notes.append(note)
        dims, given = region_dims(shape, sizes)
        counter.dims.extend(dims)
        for name, size in given.items():
            counter.fv.host_bindings.setdefault(name, size)
        return
    total = sympy.Integer(0)
    for loop, collapse in loops:
        counter.access_state = {}  # each nest is its own kernel launch: nothing written yet
        total += _count_loop_nest(counter, loop, collapse)
    counter.fv.work_items = total


def _finish(counter: KernelLowering, by_line: bool) -> FeatureVector:
    """Count the lowered operations into the feature vector."""
    fv = counter.fv
    ops = OpCounter(counter.lowered)
    fv.special = {}
    for name, total in ops.per_thread().items():
        special = special_kind(name)
        if special is not None:
            fv.special[special] = total
        elif name in TALLY_FIELDS:
            setattr(fv, name, total)
    fv.accesses = counter.accesses
    fv.dims = counter.dims
    if by_line:
        fv.by_line = ops.by_line()
        fv.line_rules = ops.line_rules()
        fv.line_nests = ops.line_nests()
    fv.loop_depth = counter.max_depth
    fv.distinct_arrays = len(counter.arrays)
    fv.reuse_accesses = sum(max(0, len(v) - 1) for v in counter.array_indices.values())
    symbols: set[str] = set()
    counts = [getattr(fv, name) for name in TALLY_FIELDS]
    counts.extend(fv.special.values())
    if fv.work_items is not None:
        counts.append(fv.work_items)
    for expr in counts:
        if not expr.is_Number:  # most are: no names to collect
            symbols |= {s.name for s in free_symbols(expr)}
    fv.symbols = symbols
    return fv
