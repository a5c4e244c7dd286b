"""Lowering: walks a kernel body once into the counted kernel IR (`features/lowered.py`).

Every operation one thread (or iteration) does is recorded with the rule that counted it,
its source line and its loop nest (the tuple of enclosing loop frames); op counting
(`features/opcount.py`) multiplies by the trips at the end, so sympy is touched once per
distinct nest rather than once per node: lowering stays near parse speed. Each distinct
global access is recorded with its index over the traffic model's dims.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from typing import Any, TypeVar, cast

import sympy
import tree_sitter
from roofcast.analyzer.cexpr import CExprError
from roofcast.analyzer.cvalue import parse_value
from roofcast.analyzer.cvaluetree import MAX_VALUE_CALLS, extremum
from roofcast.analyzer.cvaluetree import apply_value as _apply_value
from roofcast.analyzer.cvaluetree import call_parts as _call_parts
from roofcast.analyzer.cvaluetree import single_return as _single_return
from roofcast.analyzer.cvaluetree import value_operands as _value_operands
from roofcast.analyzer.functionscan import ASSIGNED_PATTERNS, scan_function
from roofcast.analyzer.index import parameters, template_params
from roofcast.analyzer.model import KernelIR
from roofcast.analyzer.parsing import (
    captures,
    chained_comparisons,
    expression_node,
    infix_parts,
    language,
    node_text,
    operator,
    token_text,
)
from roofcast.analyzer.session import SessionNodeCache, SessionRecentTexts
from roofcast.features import (
    coopgroups,
    cycleshare,
    searchloop,
    siteshare,
    threadshare,
    whileloops,
)
from roofcast.features import mathfuncs as mf
from roofcast.features.asynccopy import (
    ASYNC_COPIES,
    WARP,
    WMMA_CALLS,
    asm_operand_values,
    cp_async,
    fragment,
)
from roofcast.features.clangtypes import ClangTypes, declarator_column
from roofcast.features.csr import csr_range
from roofcast.features.ctypes import (
    BOOL,
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    UNKNOWN,
    CType,
    TypeResolver,
    promote,
    split_args,
)
from roofcast.features.lowered import LoweredKernel
from roofcast.features.opcount import SPECIAL_PREFIX
from roofcast.features.scalarbody import scalar_body
from roofcast.features.scopes import Scopes
from roofcast.features.sharedmem import (
    callee_name,
    classes_returning_shared,
    function_returns_shared,
)
from roofcast.features.symbolic import (
    BUILTIN_VECTORS,
    THREAD_POSITION_PREFIXES,
    builtin,
    mean_thread_position,
    on_thread_position,
    position_symbol,
    symbol,
    unknown_trip_symbol,
    zero_thread_position,
)
from roofcast.features.traffic import Access, Dim
from roofcast.features.vector import CallSite, FeatureVector
from roofcast.gpu_specs.opclasses import PRECISION_BYTES

_CASTS = frozenset({"reinterpret_cast", "static_cast", "const_cast", "dynamic_cast"})

MAX_INLINE_DEPTH = 8
MAX_MACRO_DEPTH = 16  # macros defined by macros, followed this deep
#: Rule N2 (docs/counting.md): statements nested deeper than this are counted flat (loops
#: inside once). The walk recurses per nesting level; the limits keep it far from Python's.
MAX_STATEMENT_NESTING = 64
#: Rule N3: expressions nested deeper than this are not counted.
MAX_EXPRESSION_NESTING = 64
#: Rule C9: the counter of a linear loop test, solved for (a name no C source can spell)
_PROBE = sympy.Symbol("roofcast$counter", integer=True)

#: Rule N4: an integer value (trip counts, bound parameters) nested deeper than this, or
#: larger than MAX_VALUE_SIZE sympy nodes, is unknown: sympy recurses over its expressions.
MAX_VALUE_DEPTH = 32
MAX_VALUE_SIZE = 2048
#: Rule B1: statements and expressions one kernel's walk may visit, inlined bodies included;
#: beyond it the walk stops and the counts so far are kept (a count, not a clock, so that
#: every run gives the same report).
WORK_BUDGET = 300_000
#: thread axes; OpenMP work-shared loop variables are given these as dependencies
_X_AXIS = frozenset({"threadIdx.x", "blockIdx.x"})
_NO_NAMES: frozenset[str] = frozenset()
#: rule I4: a `for` loop of at most this many trips, a constant, is unrolled fully by nvcc and
#: clang (their default full-unroll thresholds keep small bodies), so it has no loop control
FULL_UNROLL_TRIPS = 32
#: rule U6: a guard `position OP n` -> what n is beyond the position's largest value, with the
#: position on the left, and on the right (`i < n` runs i up to n - 1; `i >= n` exits there)
_GUARD_LEFT = {"<": 1, ">=": 1, "<=": 0, ">": 0}
_GUARD_RIGHT = {">": 1, "<=": 1, ">=": 0, "<": 0}
_LAUNCH_PREFIXES = (*THREAD_POSITION_PREFIXES, "blockDim_", "gridDim_")
_SLOW_AXES = frozenset({"threadIdx.y", "threadIdx.z", "blockIdx.y", "blockIdx.z"})
_ARITH = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"}
_COMPARE = {"<", "<=", ">", ">=", "==", "!="}
_ASSIGN_OPS = {
    "+=": "+",
    "-=": "-",
    "*=": "*",
    "/=": "/",
    "%=": "%",
    "<<=": "<<",
    ">>=": ">>",
    "&=": "&",
    "|=": "|",
    "^=": "^",
}
#: C7: the compound assignments a straight-code value steps through (`apply_value`'s forms)
_STEPPED = {
    "+=": ("add", (True, True)),
    "-=": ("add", (True, False)),
    "*=": ("mul",),
    "<<=": ("binary", "<<"),
    ">>=": ("binary", ">>"),
}
_MISSING: Any = object()
_ZERO = sympy.Integer(0)  # sympy's singleton zero
_ASSIGNED = SessionNodeCache()  # loop or body node -> names assigned in it
_FLOAT_LITERAL = re.compile(r"^[0-9.]*([0-9]\.|\.[0-9]|[eE][+-]?[0-9])")


@cache
def _assigned_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(language(grammar), ASSIGNED_PATTERNS)


# A loop's names are a slice of the assignments of its function (found with the function's
# calls by `scan_function`) or, for code outside any function, of its file's, found here.
_FILE_ASSIGNMENTS = SessionNodeCache(512)


def _file_assignments(root: tree_sitter.Node, grammar: str) -> tuple[list[int], list[str]]:
    nodes = captures(_assigned_query(grammar), root).get("name", [])
    return [n.start_byte for n in nodes], [node_text(n) for n in nodes]


@dataclass
class Var:
    """What the visitor knows of a name in scope."""

    type: CType
    space: str = "scalar"  # global | shared | constant | local | scalar
    value: sympy.Expr | None = None  # integer value, for trip counts
    deps: frozenset[str] = frozenset()
    loaded: bool = False  # derived from a global load (indirection)
    alias: str = ""  # the caller's name of a pointer bound by an inlined call
    #: a data member of an object in global/shared memory, seen inside one of its methods:
    #: (space, the object's alias, its index text, the names the index depends on)
    member_of: tuple[str, str, str, frozenset[str]] | None = None
    #: its value over the traffic model's dims (loop counters as symbols, not their means)
    index_value: sympy.Expr | None = None
    varying: bool = False  # changes with a loop: `index_value` (None: unknown) is its value
    #: a pointer into a global array: (the array, the element offset over the dims)
    points_into: tuple[str, sympy.Expr | None] | None = None
    #: the loop nest (frame ids) where `value` was last set by a declaration or `=`; None:
    #: elsewhere or unknown (rule C7 reads a `while` counter's start only from its own nest)
    set_at: tuple[int, ...] | None = None
    #: a cooperative group's threads (C14): `warp.size()` of a `thread_block_tile<32>`
    group: sympy.Expr | None = None
    #: a kernel's struct parameter passed by value (D29): its fields are `name.field`
    fields: bool = False


@dataclass
class Frame:
    id: int
    trip: sympy.Expr
    assigned: frozenset[str]
    #: the loop's (file, first line, last line): compile mode's call sites (S14)
    span: tuple[str, int, int] = ("", 0, 0)
    #: compile mode: its trips per thread averaged over the launch (S17; else `trip`)
    line_trip: sympy.Expr | None = None


@dataclass(frozen=True)
class CountedLoop:
    """A `while` / `do` loop with a derived trip count (rule C7): its counter, the counter's
    mean value over the loop (C2) and its value over the traffic model's dims (None: unknown)."""

    trip: sympy.Expr
    var: str
    mean: sympy.Expr | None
    index: sympy.Expr | None


class WorkBudgetExceeded(Exception):
    """Raised by the walk when a kernel has used its WORK_BUDGET (rule B1)."""


# node type -> handler function (or None), shared by all counters: one dict lookup per node
# instead of getattr, and no bound methods tying a counter into a reference cycle (counters
# would then wait for the cyclic garbage collector to be freed)
_EXPR_HANDLERS: dict[str, Callable[..., CType] | None] = {}
_STMT_HANDLERS: dict[str, Callable[..., None] | None] = {}


class KernelLowering:
    def __init__(self, ir: KernelIR, defines: Mapping[str, str]) -> None:
        self.ir = ir
        self.ctx = ir.context
        self.grammar = ir.grammar or (self.ctx.grammar if self.ctx is not None else "cuda")
        self.defines = dict(defines)
        template_types = {t: self.defines.get(t, "float") for t in ir.template_params}
        self.types = TypeResolver(
            self.ctx.typedefs if self.ctx else {},
            self.ctx.structs if self.ctx else {},
            template_types,
        )
        self.fv = FeatureVector(templated=bool(ir.template_params))
        self.scopes: Scopes[Var] = Scopes()
        self.frames: list[Frame] = []
        self.lowered = LoweredKernel()  # what the walk produces
        self.trip_columns: dict[int, list[int]] = {}  # line -> columns of its unknown loops
        self._key: tuple[int, ...] | None = ()  # the frames' ids; None: to be recomputed
        self.access_state: dict[tuple, set[str]] = {}
        self.array_indices: dict[tuple[str, tuple[int, ...]], set[str]] = defaultdict(set)
        self.arrays: set[str] = set()
        #: walking a `for` loop's condition and update: the rule its integer ops fall under
        #: (I3, or I4 for a loop the compiler unrolls fully: none counted)
        self.loop_control: str | None = None
        #: (node id, start, end) -> the names written in it (`_names_in`); this kernel's trees
        self.written_names: dict[tuple[int, int, int], frozenset[str]] = {}
        #: expression -> (its node, its identifiers, None with a subscript): `_read_names`
        self.read_names: dict[tuple[int, int, int], tuple[tree_sitter.Node, tuple | None]] = {}
        self.index_texts: dict[tuple[int, int, int], tuple[tree_sitter.Node, str]] = {}
        self.inline_depth = 0
        self.rare_depth = 0
        self.pasting: list[str] = []
        self.inline_stack: list[str] = []
        self.call_counter = 0
        self.next_atomic = False
        self.macro_values: dict[str, sympy.Expr | None] = {}
        self.max_depth = 0
        #: data members of the objects whose methods are being inlined, innermost last
        self.member_stack: list[dict[str, Var]] = []
        self.stmt_depth = 0  # statements being walked, nested (rule N2)
        self.expr_depth = 0  # expressions being walked, nested (rule N3)
        self.macro_depth = 0  # macro values being evaluated, nested
        self.value_calls = 0  # one-line functions being valued, nested (rule D10)
        self.valued = 0  # `value`s asked outside macros (a replayed body asks none: D-rules)
        #: the counts a scalar body's first walk makes (`walk_inlined`), while it is walked
        self.recording: list[tuple] | None = None
        #: (body, its free names' types) -> (body, work, counts), or (body, None, ()) for a
        #: body whose walk did more than count
        self.replays: dict[tuple, tuple[tree_sitter.Node, int | None, tuple]] = {}
        self.work = 0  # statements and expressions visited (rule B1)
        self.budget = WORK_BUDGET
        self.warned: set[str] = set()  # the rules already named in fv.warnings
        # the traffic model's view (features/traffic.py): each distinct global access with
        # its index over the dims (thread/block positions, loop counters)
        self.accesses: list[Access] = self.lowered.accesses
        self.dims: list[Dim] = self.lowered.dims
        self.index_mode = False  # `value` gives loop counters as symbols, not their means
        self.current_line = ir.line  # the statement being counted (an inlined call's site)
        self.track_lines = False  # compile mode: each line's loops (`note_line`)
        self.placing: tuple[str, sympy.Expr | None, int, int, bool] | None = None  # `place`
        self.source_file = ir.file  # the file of the statements walked (an inlined callee's)
        self.frame_base = 0  # frames of the function being walked start here (compile mode)
        #: the inlined call being walked: (its number, the kernel's line it is on) (S14)
        self.inlined_at: tuple[int, tuple[str, int]] | None = None
        self.own_lines: set[tuple[str, int]] = set()  # lines noted in the kernel's function
        self.thread_share: sympy.Expr = sympy.Integer(1)  # S16: of the threads, those here
        self.spread: dict[int, sympy.Expr] = {}  # S17: a loop node's id -> its mean trips
        self.halving: dict[int, sympy.Expr] = {}  # S18: a loop node's id -> counter's mean
        self.counter_means: dict[str, sympy.Expr] = {}  # S18: in the loop's body
        self.inverses: dict[int, sympy.Expr] = {}  # S50: a doubling loop's mean 1/counter
        self.counter_inverses: dict[str, sympy.Expr] = {}  # S50: in the loop's body
        self.inverse_marks: dict[sympy.Symbol, sympy.Expr] = {}  # S50: a mark's mean 1/i
        self.inverse_loops: dict[str, tree_sitter.Node] = {}  # S50: the counter's loop
        #: C7: a node's id -> whether no conditional encloses it in its function (memo:
        #: a long comma chain asked it per link, each a walk to the body)
        self.straight_nodes: dict[int, bool] = {}

    # ---------------------------------------------------------------- limits
    def spend(self, amount: int = 1) -> None:
        """Charge visited nodes to the kernel's work budget (rule B1)."""
        self.work += amount
        if self.work > self.budget:
            raise WorkBudgetExceeded

    @contextmanager
    def within_budget(self) -> Iterator[None]:
        """Stop the walk, keeping its counts, when the work budget runs out (rule B1)."""
        try:
            yield
        except WorkBudgetExceeded:
            self.fv.warnings.append(
                f"too complex (more than {self.budget} statements and expressions to walk) [B1]:"
                " approximated, counts cover the part walked"
            )

    def approximated(self, rule: str, limit: int, where: tree_sitter.Node | str, how: str) -> None:
        """Say once per kernel and rule where (a node, or words) a nesting limit made the
        counts approximate."""
        if rule in self.warned:
            return
        self.warned.add(rule)
        if not isinstance(where, str):
            where = f"at line {where.start_point[0] + 1 + self.line_offset}"
        self.fv.warnings.append(
            f"nesting deeper than {limit} {where} [{rule.split()[0]}]: approximated ({how})"
        )

    # ---------------------------------------------------------------- tallies
    @property
    def key(self) -> tuple[int, ...]:
        key = self._key
        if key is None:  # frames changed since the last count: most counts reuse the tuple
            key = self._key = tuple(f.id for f in self.frames)
        return key

    def add(
        self, name: str, rule: str, n: float | sympy.Expr = 1, key: tuple[int, ...] | None = None
    ) -> None:
        """Record `n` operations of count `name`, counted by `rule`, at the current line in
        the current nest (or in nest `key`)."""
        if self.recording is not None:
            self.recording.append((name, rule, n, key))
        control = self.loop_control
        if control is not None and name == "int_ops":
            if control == "I4":
                return  # the control of a loop the compiler unrolls fully (rule I4)
            rule = control
        if key is None:
            key = self._key  # `self.key`, inlined: the most frequent call of the walk
            if key is None:
                key = self._key = tuple(f.id for f in self.frames)
        self.lowered.ops[(name, rule, self.current_line, key)] += n

    def add_flops(self, precision: str, n: float = 1, rule: str = "F2") -> None:
        if precision in ("hp", "sp", "dp"):
            self.add(f"flops_{precision}", rule, n)

    def add_special(self, kind: str, precision: str) -> None:
        if precision not in ("hp", "sp", "dp"):
            precision = "sp"
        self.add(f"{SPECIAL_PREFIX}{kind}.{precision}", "F4")

    # ---------------------------------------------------------------- scopes
    def lookup(self, name: str) -> Var | None:
        return self.scopes.visible.get(name)

    def declare(self, name: str, var: Var) -> None:
        if var.set_at is None:
            var.set_at = self.key
        self.scopes.declare(name, var)

    def global_var(self, name: str) -> Var | None:
        """A name the kernel does not declare: a macro, a constant or a file-level variable."""
        if self.ctx is None:
            return None
        if name in self.defines:
            value = _number(self.defines[name])
            return Var(INT if value is None or value.is_integer else DOUBLE, value=value)
        if name in self.ctx.macros or name in self.ctx.constants:
            value = self.macro_value(name)
            text = self.ctx.macros.get(name, self.ctx.constants.get(name, ""))
            kind = (
                FLOAT
                if text.rstrip().endswith(("f", "F")) and "." in text
                else (DOUBLE if _FLOAT_LITERAL.match(text.strip("() ")) else INT)
            )
            return Var(kind, value=value if kind is INT else None)
        if name in self.ctx.globals:
            type_text, decl = self.ctx.globals[name]
            t = self.types.parse(type_text + ("*" if "[" in decl.split("=")[0] else ""))
            space = "constant" if "__constant__" in decl else ("global" if t.pointer else "scalar")
            value = self.global_initializer(name, t, decl) if space == "scalar" else None
            return Var(t, space=space, value=value)
        return None

    def global_initializer(self, name: str, t: CType, decl: str) -> sympy.Expr | None:
        """Rule D7: a file-level integer variable initialised with a constant (`int
        ARRAY_SIZE = 33554432;`) is a host value: its name, bound to the initialiser unless
        something binds it first (the program may change it at run time; `-D` overrides)."""
        if not t.is_int or "=" not in decl:
            return None
        text = decl.split("=", 1)[1].strip().rstrip(";").strip()
        try:
            value = parse_value(text)
        except CExprError:
            return None
        if value.free_symbols or not value.is_number:
            return None
        self.fv.host_bindings.setdefault(name, value)
        return symbol(name)

    def macro_value(self, name: str) -> sympy.Expr | None:
        if name in self.macro_values:
            return self.macro_values[name]
        self.macro_values[name] = None
        text = (
            self.ctx.macros.get(name) if name in self.ctx.macros else self.ctx.constants.get(name)
        )
        # A macro defined by another macro recurses through `value`: a chain of them is
        # followed MAX_MACRO_DEPTH deep, no further (the rest is unknown).
        if not text:
            return None
        if self.macro_depth >= MAX_MACRO_DEPTH:
            self.approximated(
                "N4 macros", MAX_MACRO_DEPTH, f"in macro {name}", "an integer value left unknown"
            )
            return None
        init = expression_node(text)
        self.macro_depth += 1
        try:
            value = self.value(init) if init is not None else None
        finally:
            self.macro_depth -= 1
        self.macro_values[name] = value
        return value

    # ---------------------------------------------------------------- values
    def value(self, node: tree_sitter.Node | None) -> sympy.Expr | None:
        """The integer value of an expression as sympy, or None when unknown or data-dependent.

        Iterative (deep input must not exhaust Python's stack): a chain of `+`/`-`, or of
        `*`, becomes one sympy Add or Mul; nesting deeper than MAX_VALUE_DEPTH, or a result
        sympy could only walk by deep recursion, is unknown (rule N4)."""
        if node is None:
            return None
        if not self.macro_depth:
            self.valued += 1
        result = self._value_leaf(node)
        if result is not _COMPOUND:
            return result
        result = self._value_tree(node)
        if result is _AMBIGUOUS:
            result = self.value_unambiguous(node)
        if result is not None and result.args and not _small_expression(result):
            self.approximated("N4", MAX_VALUE_DEPTH, node, "an integer value left unknown")
            return None
        return result

    def _value_leaf(self, node: tree_sitter.Node) -> sympy.Expr | None | object:
        """The value of a node without operands, or _COMPOUND for one with them."""
        t = node.type
        if t == "identifier":  # the most frequent leaves first (the types exclude each other)
            name = node_text(node)
            var = self.lookup(name)
            if var is None:
                var = self.global_var(name)
                if var is None:
                    return symbol(name)
            if var.loaded:
                return None
            if self.index_mode and var.varying:
                return var.index_value  # None: varies in a way the dims do not say
            return var.value
        if t == "number_literal":
            return _number(node_text(node))
        if t == "call_expression":
            query = _omp_query(node)
            if query is not None:
                return builtin(*query.split("."))
            group = self.group_value(node)
            if group is not None:
                return group
        if t in _VALUE_OPERATIONS:
            return _COMPOUND
        if t == "field_expression":
            base = node.child_by_field_name("argument")
            member = node.child_by_field_name("field")
            if base is not None and member is not None and node_text(base) in BUILTIN_VECTORS:
                return builtin(node_text(base), node_text(member))
            if base is not None and member is not None and base.type == "identifier":
                var = self.lookup(node_text(base))
                field = f"{node_text(base)}.{node_text(member)}"
                if var is not None and var.fields and field in self.fv.host_bindings:
                    return symbol(field)  # D29: a field the launch passes
            return None
        if t == "sizeof_expression":
            inner = node.child_by_field_name("type") or node.child_by_field_name("value")
            if inner is not None:
                tt = (
                    self.types.parse(node_text(inner))
                    if node.child_by_field_name("type")
                    else self.expr_type_only(inner)
                )
                return sympy.Integer(8 if tt.pointer else tt.element_bytes)
            return None
        if t == "conditional_expression" and not self.index_mode:
            return self.clamp_value(node)  # trip counts only: indices keep their places (T2)
        return None  # anything else: unknown

    def clamp_value(self, node: tree_sitter.Node) -> sympy.Expr | None:
        """Rule C8: `a < b ? a : b` is min(a, b) and `a < b ? b : a` max(a, b) (any of `<`,
        `<=`, `>`, `>=`, the operands told apart by their tokens, C5); other `?:` are unknown."""
        picked = whileloops.clamp(node)
        if picked is None:
            return self.position_choice(node)
        how, left, right = picked
        a, b = self.value(left), self.value(right)
        if a is None or b is None:
            return None
        return extremum(how, a, b)

    def position_choice(self, node: tree_sitter.Node) -> sympy.Expr | None:
        """Rule C8: `c ? a : b` whose condition fixes thread positions (`blockIdx.x ==
        gridDim.x - 1`: the last block; every top-level `&&` term an `==` of one position,
        to the first power, with a value no position changes) is `a` for S16's share of the
        threads and `b` for the rest: over the launch, `b + (a - b) * share`, the difference
        taken where the condition holds (its positions solved for). Any other `?:` is
        unknown."""
        cond = node.child_by_field_name("condition")
        consequence = node.child_by_field_name("consequence")
        alternative = node.child_by_field_name("alternative")
        if cond is None or consequence is None or alternative is None:
            return None
        pairs = threadshare.comparisons(_unparenthesized(cond), self.value)
        fixed = threadshare.fixed_positions(pairs)
        if not fixed:
            return None
        a, b = self.value(consequence), self.value(alternative)
        if a is None or b is None:
            return None
        return b + (a - b).subs(fixed) * threadshare.arm_share(pairs)

    def _value_tree(self, root: tree_sitter.Node) -> sympy.Expr | None:
        """`value` of an expression with operators, by an explicit stack: ("eval", node,
        depth) tasks push their operands' values on `done`, ("apply", how, n) tasks combine
        the last n of them."""
        tasks: list[tuple] = [("eval", root, 0)]
        done: list[sympy.Expr | None] = []
        while tasks:
            task = tasks.pop()
            if task[0] == "apply":
                _, how, count = task
                operands = done[len(done) - count :]
                del done[len(done) - count :]
                # `is`, not `in`: `in` compares each sympy operand with None through sympify
                for operand in operands:
                    if operand is None:
                        done.append(None)
                        break
                else:
                    done.append(_value_or_remainder(how, operands))
                continue
            _, node, depth = task
            while node is not None and node.type in ("parenthesized_expression", "cast_expression"):
                if node.type == "cast_expression":
                    if self.cast_as_sum(node):  # `(i) + (j)*n`: a sum, not a cast of `+(j)*n`
                        return _AMBIGUOUS
                    node = node.child_by_field_name("value")
                else:
                    node = node.named_children[0] if node.named_children else None
            if node is None:
                done.append(None)
                continue
            leaf = self._value_leaf(node)
            if leaf is not _COMPOUND:
                done.append(leaf)
                continue
            if depth >= MAX_VALUE_DEPTH:
                self.approximated("N4", MAX_VALUE_DEPTH, node, "an integer value left unknown")
                return None
            how, operands = _value_operands(node)
            if how is None:
                done.append(self.call_value(node) if node.type == "call_expression" else None)
                continue
            tasks.append(("apply", how, len(operands)))
            tasks.extend([("eval", operand, depth + 1) for operand in reversed(operands)])
        return done[-1] if done else None

    def group_value(self, call: tree_sitter.Node) -> sympy.Expr | None:
        """Rule C14: `g.size()`, `g.thread_rank()`, ... of a local cooperative group."""
        function = call.child_by_field_name("function")
        if function is None or function.type != "field_expression":
            return None
        base = function.child_by_field_name("argument")
        method = function.child_by_field_name("field")
        if base is None or method is None or base.type != "identifier":
            return None
        var = self.lookup(node_text(base))
        if var is None or var.group is None:
            return None
        return coopgroups.group_query(var.group, node_text(method))

    def call_value(self, call: tree_sitter.Node) -> sympy.Expr | None:
        """Rule D10: `f(a, b)` with `f`'s body one `return e;` is `e`, its parameters bound to
        the arguments' values and nothing else of the caller in scope."""
        if self.ctx is None or self.value_calls >= MAX_VALUE_CALLS:
            return None
        name, args = _call_parts(call)
        callee = self.ctx.callable(name, len(args)) if name else None
        returned = _single_return(callee.node) if callee is not None else None
        if callee is None or returned is None:
            return None
        params = parameters(callee.node)
        if len(params) != len(args):
            return None
        scope: dict[str, Var] = {}
        for param, arg in zip(params, args, strict=True):
            value = self.value(arg)
            if value is None:
                return None
            scope[param.name] = Var(self.types.parse(param.type), value=value)
        outer, self.scopes = self.scopes, Scopes([scope])
        self.value_calls += 1
        try:
            return self.value(returned)
        finally:
            self.scopes = outer
            self.value_calls -= 1

    def cast_as_sum(self, node: tree_sitter.Node) -> bool:
        """`(i) + x` / `(i) - x` parse as a cast of `+x` to a type `i` (a macro's argument in
        parentheses, `IDX(i,j)`); when `i` is a variable in scope it is a sum."""
        type_node = node.child_by_field_name("type")
        operand = node.child_by_field_name("value")
        if type_node is None or operand is None or operand.type != "unary_expression":
            return False
        name = node_text(type_node).strip()
        return (
            name.isidentifier()
            and operator(operand) in ("+", "-")
            and self.lookup(name) is not None
        )

    def value_unambiguous(self, node: tree_sitter.Node) -> sympy.Expr | None:
        """`value` of an expression with a `(name) + x` read as a cast: the text re-read with
        the parentheses around the variables' names dropped, then valued."""
        text = _PARENTHESIZED_NAME.sub(
            lambda m: m.group(1) if self.lookup(m.group(1)) is not None else m.group(0),
            node_text(node),
        )
        init = expression_node(text)
        if init is None:
            return None
        result = self._value_tree(init)
        return None if result is _AMBIGUOUS else result

    def expr_type_only(self, node: tree_sitter.Node) -> CType:
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]  # sizeof(float4) parses as sizeof of `(float4)`
        if node.type == "identifier":
            var = self.lookup(node_text(node))
            return var.type if var else self.types.parse(node_text(node))
        return UNKNOWN

    # ---------------------------------------------------------------- memory
    def base_of(self, node: tree_sitter.Node) -> tuple[tree_sitter.Node, list[tree_sitter.Node]]:
        """`a[i][j]` -> (a, [i, j])."""
        indices: list[tree_sitter.Node] = []
        while node.type == "subscript_expression":
            children = node.children  # (argument, indices): one call, not two by field name
            idx: tree_sitter.Node | None
            if len(children) == 2 and children[1].type == "subscript_argument_list":
                argument, idx = children
            else:  # a comment or an error among them
                idx = node.child_by_field_name("indices") or node.child_by_field_name("index")
                argument = cast(tree_sitter.Node, node.child_by_field_name("argument"))
            if idx is not None:
                if idx.type == "subscript_argument_list":
                    indices[:0] = list(idx.named_children)
                else:
                    indices.insert(0, idx)
            node = argument
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        return node, indices

    def identifiers(self, nodes: list[tree_sitter.Node]) -> set[str]:
        """The names an expression reads, with the names their values were derived from."""
        if len(nodes) == 1:  # most calls: one expression, its names kept as they are
            names: frozenset[str] | set[str] = self._names_in(nodes[0])
        else:
            names = set()
            for node in nodes:
                names |= self._names_in(node)
        expanded = set(names)
        for name in names:
            var = self.lookup(name)
            if var is not None and var.deps:
                expanded |= var.deps
        return expanded

    def _names_in(self, node: tree_sitter.Node) -> frozenset[str]:
        """The names written in an expression (a node's text never changes: asked again for
        each access through it and each inlined call, walked once per kernel)."""
        kind = node.type
        if kind == "identifier":  # most indices and operands: not worth a cache entry
            return frozenset((node_text(node),))
        if kind == "number_literal":
            return _NO_NAMES
        key = (node.id, node.start_byte, node.end_byte)
        found = self.written_names.get(key)
        if found is None:
            found = self._walk_names(node, key)[0]
        return found

    def _walk_names(
        self, node: tree_sitter.Node, key: tuple[int, int, int]
    ) -> tuple[frozenset[str], tuple[str, ...] | None]:
        """`_names_in` and `_read_names` of one expression, from one walk kept for both:
        an access's index, an assigned value and a call's argument are asked both."""
        names, read = _names_by_text(node)
        self.written_names[key] = names
        self.read_names[key] = (node, read)  # the node keeps its tree, and so its id, alive
        return names, read

    @staticmethod
    def sharing(names: set[str]) -> str:
        """How an access's element varies across threads: `private` (with the fastest thread
        axis), `partial` (only slower axes: neighbouring threads share it), `broadcast`
        (the same for every thread, so caches serve all but the first)."""
        if names & _X_AXIS:
            return "private"
        if names & _SLOW_AXES:
            return "partial"
        return "broadcast"

    def hoisted_key(self, names: set[str]) -> tuple[int, ...]:
        """The loop context an access belongs to: up to the innermost loop that changes it."""
        level = 0
        for i, frame in enumerate(self.frames):
            if names & frame.assigned:
                level = i + 1
        return tuple(f.id for f in self.frames[:level])

    def memory_access(
        self, node: tree_sitter.Node, read: bool, write: bool, member: str | None = None
    ) -> CType:
        """Count a subscript / dereference access; returns the element type."""
        base: tree_sitter.Node | None
        if node.type == "subscript_expression":
            base, indices = self.base_of(node)
        elif node.type == "pointer_expression":
            base, indices = node.child_by_field_name("argument"), []
            while (
                base is not None and base.type == "parenthesized_expression" and base.named_children
            ):
                base = base.named_children[0]
            if (
                base is not None
                and base.type == "binary_expression"
                and operator(base) in ("+", "-")
            ):
                left, right = base.child_by_field_name("left"), base.child_by_field_name("right")
                base_t = self.type_of_pointer_base(left)
                if base_t is not None and base_t.pointer:
                    self.expr(right)
                    self.add("int_ops", "I1")
                    indices = [cast(tree_sitter.Node, right)]
                    base = left
        else:
            return UNKNOWN
        if base is None:
            return UNKNOWN
        for index in indices:
            self.expr(index)
        base_type, space, alias, base_names = self.resolve_base(base)
        element = base_type
        for _ in range(max(1, len(indices))):
            element = element.deref() if element.pointer else element
        if element.kind == "struct" and member is None and base_type.pointer:
            pass
        size = element.element_bytes if not element.pointer else 8
        if member is not None:
            member_type = self.types.member(element, member)
            size = member_type.element_bytes if not member_type.pointer else 8
            element_for_return = member_type
        else:
            element_for_return = element
        if space in ("global", "shared"):
            names = self.identifiers(indices) | base_names
            key_ctx = self.hoisted_key(names)
            index_text = ",".join(self.tokens(i) for i in indices) or "0"
            if member:
                index_text += "." + member
            key = (space, alias, index_text, key_ctx)
            self.arrays.add(alias)
            self.array_indices[(alias, key_ctx)].add(index_text)
            if any(self._is_loaded(i) for i in indices):
                self.fv.indirect_accesses += 1
            if space == "global" and self.fresh(key, read, write):
                unit = size if member is None else max(size, element.element_bytes)
                self.placing = self.place(base, indices, alias, unit, node)
            try:
                self.record_access(key, size, read, write, names)
            finally:
                self.placing = None
        return element_for_return

    def place(
        self,
        base: tree_sitter.Node | None,
        indices: list[tree_sitter.Node],
        alias: str,
        unit: int,
        node: tree_sitter.Node,
    ) -> tuple[str, sympy.Expr | None, int, int, bool]:
        """Where a global access falls, for the traffic model (T2): (array, element offset
        over the dims or None, bytes per offset step, line, whether an unknown offset was read
        from memory), through a pointer into an array where there is one."""
        array = alias
        offset: sympy.Expr | None = sympy.Integer(0)  # bytes
        if base is not None:
            target = self.lookup(node_text(base)) if base.type == "identifier" else None
            pointed = target.points_into if target is not None else self.pointer_target(base)
            if pointed is not None:
                array, offset = pointed
        unit = max(unit, 1)
        if len(indices) > 1:
            index = None  # a[i][j] through pointers to pointers: rows anywhere
        else:
            index = self.index_of(indices[0]) if indices else sympy.Integer(0)
        if index is None or offset is None:
            index = None
        elif offset is not _ZERO or not isinstance(index, sympy.Basic):
            # (at the array's start, a sympy index is the sum itself: no sympy arithmetic)
            index = offset / unit + index
        indirect = index is None and any(self._is_loaded(i) for i in indices)
        return array, index, unit, node.start_point[0] + 1 + self.line_offset, indirect

    def fresh(self, key: tuple, read: bool, write: bool) -> bool:
        """Whether `record_access` will count this access (the traffic model places only
        those: placing costs a valuation of the index)."""
        state = self.access_state.get(key)
        return (read and not state) or (write and (not state or "store" not in state))

    def any_varying(self, names: frozenset[str] | set[str]) -> bool:
        """Whether any of `names` changes with a loop (its index value differs)."""
        for name in names:
            var = self.lookup(name)
            if var is not None and var.varying:
                return True
        return False

    def index_of(self, node: tree_sitter.Node | None) -> sympy.Expr | None:
        """`value` with loop counters as the traffic model's loop dims."""
        if self.index_mode:
            return self.value(node)
        self.index_mode = True
        try:
            return self.value(node)
        finally:
            self.index_mode = False

    def record_access(
        self, key: tuple, size: int, read: bool, write: bool, names: set[str], rule: str = "M2"
    ) -> None:
        """First read of an element is a load, a write a store (once), a read after either free
        (rule M2; `rule` names the rule that found the access)."""
        space, key_ctx = key[0], key[-1]
        state = self.access_state.setdefault(key, set())
        prefix = "shared_" if space == "shared" else ""
        sharing = f"bytes_{self.sharing(names)}"
        todo = (("load", read, not state), ("store", write, "store" not in state))
        for kind, wanted, fresh in todo:
            if not (wanted and fresh):
                continue
            self.add(f"{prefix}{kind}_bytes", rule, size, key_ctx)
            if not prefix:
                self.note_traffic(key, size, kind == "store")
                self.add(f"{kind}s", rule, 1, key_ctx)
                self.add(sharing, rule, size, key_ctx)
                if self.rare_depth:
                    self.add("bytes_rare", rule, size, key_ctx)
            state.add(kind)

    def note_traffic(self, key: tuple, size: object, store: bool) -> None:
        """A distinct global access for the traffic model; where `place` did not say where
        it falls (copies, members through `this`), its place is unknown (T2)."""
        width = size if isinstance(size, int) else as_integer(size)
        if self.placing is not None:
            array, index, unit, line, indirect = self.placing
        else:
            array, index, unit, line, indirect = str(key[1]), None, 1, 0, True
        if not isinstance(width, int):
            index = None  # a copy of symbolic size: charged as the per-thread count (T6)
        nest = key[-1]
        repeats = self.lowered.nest_trips(nest)
        self.accesses.append(
            Access(array, index, unit, width, store, repeats, line, indirect, nest)
        )

    def note_atomic(
        self, base: tree_sitter.Node, indices: list[tree_sitter.Node], node: tree_sitter.Node
    ) -> None:
        """An atomic on global memory, for the traffic model only (T9): L2 performs it, so
        its element is read from DRAM once and written back, like a read-modify-write; the
        per-thread byte counts leave atomics out (they are counted as `atomics`)."""
        base_type, space, alias, _ = self.resolve_base(base)
        if space != "global":
            return
        element = base_type.deref() if base_type.pointer else base_type
        size = element.element_bytes if not element.pointer else 8
        array, index, unit, line, indirect = self.place(base, indices, alias, max(size, 1), node)
        repeats = self.lowered.nest_trips(self.key)
        self.accesses.append(
            Access(array, index, unit, size, True, repeats, line, indirect, self.key)
        )

    def note_atomic_pointer(self, pointer: tree_sitter.Node) -> None:
        """An atomic through a pointer expression (`total`, `hist + 256 * b + k`): placed by
        `pointer_target` for the traffic model (T9), its element the pointer's."""
        target = self.pointer_target(pointer)
        base: tree_sitter.Node | None = _uncast(pointer)
        while base is not None and base.type == "binary_expression":  # `a + i + j`: a
            left = base.child_by_field_name("left")
            base = _uncast(left) if left is not None else None
        if target is None or base is None or base.type != "identifier":
            return
        base_type, space, _, _ = self.resolve_base(base)
        if space != "global" or not base_type.pointer:
            return
        size = max(1, base_type.deref().element_bytes)
        array, offset = target
        index = offset / size if offset is not None else None
        line = pointer.start_point[0] + 1 + self.line_offset
        repeats = self.lowered.nest_trips(self.key)
        self.accesses.append(Access(array, index, size, size, True, repeats, line, False, self.key))

    def _is_loaded(self, node: tree_sitter.Node) -> bool:
        """Whether an expression reads global memory, directly or through a loaded name."""
        kind = node.type
        if kind == "number_literal":
            return False
        if kind == "identifier":  # most indices: `i`
            var = self.lookup(node_text(node))
            return var is not None and var.loaded
        names = self._read_names(node)
        if names is not None:  # no subscript inside: only its names' state decides
            for name in names:
                var = self.lookup(name)
                if var is not None and var.loaded:
                    return True
            return False
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "subscript_expression":
                b, _ = self.base_of(n)
                _, space, _, _ = self.resolve_base(b)
                if space == "global":
                    return True
            if n.type == "identifier":
                var = self.lookup(node_text(n))
                if var is not None and var.loaded:
                    return True
            stack.extend(n.named_children)
        return False

    def tokens(self, node: tree_sitter.Node) -> str:
        """`token_text`, once per kernel for each index (asked at each access through it)."""
        key = (node.id, node.start_byte, node.end_byte)
        found = self.index_texts.get(key)
        if found is None:
            found = self.index_texts[key] = (node, _tokens_by_text(node))  # it keeps its id
        return found[1]

    def _read_names(self, node: tree_sitter.Node) -> tuple[str, ...] | None:
        """The identifiers anywhere in an expression, as `_is_loaded` meets them, or None
        when a subscript is inside (its base's space decides too). A node's text never
        changes: walked once per kernel, not at each access through it."""
        key = (node.id, node.start_byte, node.end_byte)
        found = self.read_names.get(key)
        if found is not None:
            return found[1]
        return self._walk_names(node, key)[1]

    def type_of_pointer_base(self, node: tree_sitter.Node | None) -> CType | None:
        if node is None:
            return None
        if node.type == "identifier":
            var = self.lookup(node_text(node)) or self.global_var(node_text(node))
            return var.type if var else None
        return None

    def resolve_base(self, base: tree_sitter.Node) -> tuple[CType, str, str, set[str]]:
        """(type, memory space, alias for access keys, identifiers) of an access's base."""
        text = " ".join(node_text(base).split())
        if base.type == "identifier":
            var = self.lookup(text) or self.global_var(text)
            if var is None:
                return UNKNOWN.address_of(), "global", text, {text}
            space = (
                var.space if var.space != "scalar" else ("global" if var.type.pointer else "local")
            )
            return var.type, space, var.alias or text, {text} | set(var.deps)
        if base.type == "field_expression":
            arg = base.child_by_field_name("argument")
            member = base.child_by_field_name("field")
            arg_type = self.expr(arg) if arg is not None else UNKNOWN
            if arg is not None and node_text(base.child_by_field_name("operator") or arg) == "->":
                arg_type = arg_type.deref()
            mt = (
                self.types.member(
                    arg_type.deref() if arg_type.pointer else arg_type, node_text(member)
                )
                if member is not None
                else UNKNOWN
            )
            if not mt.pointer:
                mt = mt.address_of()
            names = self.identifiers([arg]) if arg is not None else set()
            return mt, "global", text, names
        t = self.expr(base)
        return (t if t.pointer else t.address_of()), "global", text, self.identifiers([base])

    # ---------------------------------------------------------------- expressions
    def expr(self, node: tree_sitter.Node | None) -> CType:
        """Count one expression (reads only) and return its type.

        Handlers call back here for operands: the walk recurses once per nesting level, so an
        expression nested deeper than MAX_EXPRESSION_NESTING is not counted (rule N3).
        No try/finally restores the depth: an exception ends the kernel's walk."""
        if node is None:
            return UNKNOWN
        self.work += 1
        if self.work > self.budget:
            raise WorkBudgetExceeded
        if self.expr_depth >= MAX_EXPRESSION_NESTING:
            self.approximated("N3", MAX_EXPRESSION_NESTING, node, "the deeper part not counted")
            return UNKNOWN
        t = node.type
        if t == "identifier":  # most operands: `_e_identifier` without the handler table
            # (and without the depth: nothing under it walks an expression, rule N3)
            return self._e_identifier(node)
        if t == "number_literal":
            return _literal_type(node_text(node))
        handler = _EXPR_HANDLERS.get(t, _MISSING)
        if handler is _MISSING:
            handler = _EXPR_HANDLERS[t] = getattr(KernelLowering, "_e_" + t, None)
        self.expr_depth += 1
        if handler is not None:
            result = handler(self, node)
        else:
            if t == "ERROR":
                self.fv.unparsed_regions += 1
            result = UNKNOWN
            for child in node.named_children:
                result = self.expr(child)
        self.expr_depth -= 1
        return result

    def _e_number_literal(self, node: tree_sitter.Node) -> CType:
        return _literal_type(node_text(node))

    def _e_char_literal(self, node: tree_sitter.Node) -> CType:
        return CType("int", 1)

    def _e_true(self, node: tree_sitter.Node) -> CType:
        return BOOL

    _e_false = _e_true

    def _e_string_literal(self, node: tree_sitter.Node) -> CType:
        return CType("int", 1, pointer=1)

    def _e_identifier(self, node: tree_sitter.Node) -> CType:
        name = node_text(node)
        var = self.scopes.visible.get(name)  # `lookup`, inlined: the most frequent operand
        if var is None:
            var = self.global_var(name)
        if var is not None and var.member_of is not None and name != "this":
            return self.member_field(var, name, read=True, write=False)
        return var.type if var else UNKNOWN

    def _e_this(self, node: tree_sitter.Node) -> CType:
        var = self.lookup("this")  # bound by `bind_members` for an inlined method
        return var.type if var is not None else UNKNOWN

    def member_field(self, var: Var, field: str, read: bool, write: bool) -> CType:
        """A data member read or written inside a method of an object in memory: the access
        `obj[i].field` of the call site (same key as writing it there)."""
        assert var.member_of is not None
        space, alias, index_text, names = var.member_of
        size = 8 if var.type.pointer else var.type.element_bytes
        key = (space, alias, f"{index_text}.{field}", self.hoisted_key(set(names)))
        self.record_access(key, size, read, write, set(names), "M7")
        return var.type

    def _e_qualified_identifier(self, node: tree_sitter.Node) -> CType:
        return UNKNOWN

    def _e_parenthesized_expression(self, node: tree_sitter.Node) -> CType:
        children = node.named_children
        while len(children) == 1 and children[0].type == "parenthesized_expression":
            self.spend()  # `((x))` is one level, not two (rule N1)
            children = children[0].named_children
        result = UNKNOWN
        for child in children:
            result = self.expr(child)
        return result

    def _e_comma_expression(self, node: tree_sitter.Node) -> CType:
        """`a, b, c` nests to the right: walked as a list (rule N1)."""
        while True:
            self.expr(node.child_by_field_name("left"))
            right = node.child_by_field_name("right")
            if right is None or right.type != "comma_expression":
                return self.expr(right)
            self.spend()
            node = right

    def _e_sizeof_expression(self, node: tree_sitter.Node) -> CType:
        return LONG

    def _e_cast_expression(self, node: tree_sitter.Node) -> CType:
        self.expr(node.child_by_field_name("value"))
        type_node = node.child_by_field_name("type")
        return self.types.parse(node_text(type_node)) if type_node is not None else UNKNOWN

    def _e_conditional_expression(self, node: tree_sitter.Node) -> CType:
        """`a ? x : b ? y : z` nests to the right: walked as a list (rule N1)."""
        arms: list[CType] = []
        while True:
            self.add("branches", "C1")
            self.expr(node.child_by_field_name("condition"))
            arms.append(self.expr(node.child_by_field_name("consequence")))
            alternative = node.child_by_field_name("alternative")
            if alternative is None or alternative.type != "conditional_expression":
                break
            self.spend()
            node = alternative
        result = self.expr(alternative)
        for arm in reversed(arms):
            result = promote(arm, result)
        return result

    def _e_field_expression(self, node: tree_sitter.Node) -> CType:
        arg = node.child_by_field_name("argument")
        member = node.child_by_field_name("field")
        member_name = node_text(member) if member is not None else ""
        if arg is not None and node_text(arg) in BUILTIN_VECTORS:
            return INT
        if arg is not None and arg.type in ("subscript_expression",):
            return self.memory_access(arg, read=True, write=False, member=member_name)
        through = self.member_through_pointer(node, read=True, write=False)
        if through is not None:
            return through
        base = self.expr(arg)
        operator = node.child_by_field_name("operator")
        if operator is not None and node_text(operator) == "->":
            base = base.deref()
        return self.types.member(base, member_name)

    def member_through_pointer(
        self, node: tree_sitter.Node, read: bool, write: bool
    ) -> CType | None:
        """`p->m` and `(*p).m` with `p` a pointer into global or shared memory: an access to
        the member of element 0 of `p` (as `p[0].m`), the member's size; None otherwise."""
        arg = node.child_by_field_name("argument")
        member = node.child_by_field_name("field")
        op_node = node.child_by_field_name("operator")
        if arg is None or member is None:
            return None
        while arg.type == "parenthesized_expression" and arg.named_children:
            arg = arg.named_children[0]
        if op_node is None or node_text(op_node) != "->":
            if arg.type == "pointer_expression" and operator(arg) == "*":
                return self.memory_access(arg, read=read, write=write, member=node_text(member))
            return None
        if arg.type not in ("identifier", "this"):
            return None
        if node_text(arg) == "this":  # this->field: the member bound for this method
            field_var = self.lookup(node_text(member))
            if field_var is not None and field_var.member_of is not None:
                return self.member_field(field_var, node_text(member), read, write)
            return None
        var = self.lookup(node_text(arg)) or self.global_var(node_text(arg))
        if var is None or not var.type.pointer or var.space not in ("global", "shared"):
            return None
        base_type, space, alias, names = self.resolve_base(arg)
        member_type = self.types.member(base_type.deref(), node_text(member))
        size = 8 if member_type.pointer else member_type.element_bytes
        key_ctx = self.hoisted_key(names)
        self.arrays.add(alias)
        self.array_indices[(alias, key_ctx)].add("0." + node_text(member))
        member_key = (space, alias, "0." + node_text(member), key_ctx)
        if space == "global" and self.fresh(member_key, read, write):
            unit = max(size, base_type.deref().element_bytes)
            self.placing = self.place(arg, [], alias, unit, arg)
        try:
            self.record_access(member_key, size, read, write, names, "M6")
        finally:
            self.placing = None
        return member_type

    def _e_subscript_expression(self, node: tree_sitter.Node) -> CType:
        return self.memory_access(node, read=True, write=False)

    def _e_pointer_expression(self, node: tree_sitter.Node) -> CType:
        op = node.child_by_field_name("operator")
        arg = node.child_by_field_name("argument")
        if op is not None and node_text(op) == "&":
            if arg is not None and arg.type == "subscript_expression":
                base, indices = self.base_of(arg)
                for index in indices:
                    self.expr(index)
                bt, _, _, _ = self.resolve_base(base)
                return bt
            return self.expr(arg).address_of()
        return self.memory_access(node, read=True, write=False)

    def _e_unary_expression(self, node: tree_sitter.Node) -> CType:
        op = operator(node)
        t = self.expr(node.child_by_field_name("argument"))
        if op == "~" and t.is_int:
            self.add("int_ops", "I1")
        if op == "!":
            return BOOL
        return t

    def _e_update_expression(self, node: tree_sitter.Node) -> CType:
        arg = node.child_by_field_name("argument")
        t = self.lvalue(arg, read=True)
        if t.is_float:
            self.add_flops(t.kind, t.lanes)
        else:
            self.add("int_ops", "I1")
        return t

    def _e_binary_expression(self, node: tree_sitter.Node) -> CType:
        """Binary operators associate to the left: `a + b + c + ...` nests down its left
        operands, walked here as a list (rule N1), in the order of a recursive walk."""
        spine = [infix_parts(node)]
        left = spine[0][0]
        while left is not None and left.type == "binary_expression":
            spine.append(infix_parts(left))
            left = spine[-1][0]
        if len(spine) > 1:
            self.spend(len(spine) - 1)
        a = self.expr(left)
        for _, op, right in reversed(spine):
            a = self.binary(op, a, self.expr(right))
        return a

    def binary(self, op: str, a: CType, b: CType) -> CType:
        """Count one binary operation of operand types a and b; returns its type."""
        if op in ("&&", "||"):
            return BOOL
        if op in _COMPARE:
            if not (a.is_float or b.is_float):
                self.add("int_ops", "I1")
            return BOOL
        result = promote(a, b)
        self.arith(op, result)
        return result

    def arith(self, op: str, result: CType) -> None:
        if result.is_float:
            if op == "/":
                for _ in range(result.lanes):
                    self.add_special("div", result.kind)
            elif op in ("+", "-", "*"):
                self.add_flops(result.kind, result.lanes)
        elif op in _ARITH:
            self.add("int_ops", "I1")

    def _e_assignment_expression(self, node: tree_sitter.Node) -> CType:
        left, op, right = infix_parts(node)
        rt = self.expr(right)
        if self.next_atomic:
            self.next_atomic = False
            self.add("atomics", "M9")
            if left is not None and left.type == "subscript_expression":
                base, indices = self.base_of(left)
                for index in indices:
                    self.expr(index)
                self.note_atomic(base, indices, left)
                return rt
        lt = self.lvalue(left, read=op != "=")
        if op in _ASSIGN_OPS:
            self.arith(_ASSIGN_OPS[op], promote(lt, rt) if not lt.pointer else lt)
        if left is not None and left.type == "identifier":
            straight = op == "=" or self.straight_code(node)
            self.track_assignment(node_text(left), op, right, straight)
        return lt

    def lvalue(self, node: tree_sitter.Node | None, read: bool) -> CType:
        """The target of an assignment or update: a store (and a load when `read`)."""
        if node is None:
            return UNKNOWN
        if node.type in ("subscript_expression",) or (
            node.type == "pointer_expression" and operator(node) == "*"
        ):
            return self.memory_access(node, read=read, write=True)
        if node.type == "field_expression":
            arg = node.child_by_field_name("argument")
            member = node.child_by_field_name("field")
            if arg is not None and arg.type == "subscript_expression":
                field = node_text(cast(tree_sitter.Node, member))
                return self.memory_access(arg, read=read, write=True, member=field)
            through = self.member_through_pointer(node, read=read, write=True)
            return through if through is not None else self.expr(node)
        if node.type == "parenthesized_expression" and node.named_children:
            inner = _unparenthesized(node)
            if inner.type != "parenthesized_expression":
                return self.lvalue(inner, read)
        if node.type == "identifier":
            var = self.lookup(node_text(node))
            if var is not None and var.member_of is not None:
                return self.member_field(var, node_text(node), read=read, write=True)
        return self.expr(node)

    def track_assignment(
        self, name: str, op: str, right: tree_sitter.Node | None, straight: bool = False
    ) -> None:
        var = self.lookup(name)
        if var is None:
            # C14: `cg::thread_block_tile<32> warp = cg::tiled_partition<32>(b);` parses as
            # `(tile < 32) > (warp = ...)`: the assignment of an undeclared name declares it
            init = node_text(right) if right is not None and op == "=" else ""
            group = coopgroups.group_threads("", init) if "_partition" in init else None
            if group is not None:
                self.declare(name, Var(UNKNOWN, group=group))
            return
        if op == "=":
            integral = var.type.is_int or var.type.kind == "unknown"
            var.value = self.value(right) if integral else None
            var.set_at = self.key
            var.loaded = self._is_loaded(right) if right is not None and integral else False
            var.deps = frozenset(self.identifiers([right])) if right is not None else frozenset()
            var.index_value = None
            var.varying = False
            if integral and right is not None and self.any_varying(var.deps):
                var.varying = True
                var.index_value = self.index_of(right)
            elif var.points_into is not None or (var.space == "global" and var.type.pointer):
                var.points_into = self.pointer_target(right) if right is not None else None
        else:
            stepped = self.stepped_value(var, op, right) if straight else None
            var.value = stepped
            if stepped is not None and right is not None:  # C7: `sk -= 2;` before `while (sk > 0)`
                var.set_at = self.key
                var.deps = var.deps | frozenset(self.identifiers([right]))
            var.index_value = None
            var.varying = var.varying or bool(self.frames)  # `i += s` in a loop
            pointer = var.space == "global" and var.type.pointer
            if pointer and op in ("+=", "-=") and not self.frames and right is not None:
                # `src += row * pitch + x` before any loop: the thread's own place in the array
                array, start = var.points_into or (var.alias or name, sympy.Integer(0))
                step = max(1, var.type.deref().element_bytes)
                moved = self.index_of(right)
                sign = -1 if op == "-=" else 1
                offset = None if moved is None or start is None else start + sign * moved * step
                var.points_into = (array, offset)
            elif var.points_into is not None:
                var.points_into = (var.points_into[0], None)  # `p += s`: somewhere in the array

    def straight_code(self, node: tree_sitter.Node) -> bool:
        """C7: whether an assignment runs whenever its function does: no `if`, `switch`,
        loop, `?:` or `&&` between it and the function's body. Each ancestor's answer is
        kept, so a chain of n assignments walks n ancestors in all, not n squared."""
        memo = self.straight_nodes
        path: list[int] = []
        straight = True
        parent = node.parent
        while parent is not None and parent.type not in _BODIES:
            known = memo.get(parent.id)
            if known is not None:
                straight = known
                break
            if parent.type in _CONDITIONAL:
                straight = False
                break
            path.append(parent.id)
            parent = parent.parent
        for seen in path:
            memo[seen] = straight
        return straight

    def stepped_value(self, var: Var, op: str, right: tree_sitter.Node | None) -> sympy.Expr | None:
        """Rule C7: `n op= e` in straight code (outside every loop of the kernel and of its
        inlined callers) is `n = n op e`, as an `=` would value it: an integer whose value
        and `e`'s are known, not read from memory. In a loop the value changes per trip and
        stays unknown."""
        if self.frames or right is None or var.loaded or var.value is None:
            return None
        how = _STEPPED.get(op)
        if how is None or not (var.type.is_int or var.type.kind == "unknown"):
            return None
        if self._is_loaded(right):
            return None
        amount = self.value(right)
        if amount is None:
            return None
        return _apply_value(how, [var.value, amount])

    def _e_call_expression(self, node: tree_sitter.Node) -> CType:
        fn_node = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        args = list(args_node.named_children) if args_node is not None else []
        name = node_text(fn_node) if fn_node is not None else ""
        if fn_node is not None and fn_node.type == "template_function":
            name = node_text(fn_node.child_by_field_name("name") or fn_node)
            target = fn_node.child_by_field_name("arguments")
            if name in _CASTS and target is not None and target.named_children:
                for a in args:  # `reinterpret_cast<const V *>(in)`: the type named, not in's
                    self.expr(a)
                return self.types.parse(node_text(target.named_children[0]))
        obj: tree_sitter.Node | None = None
        if fn_node is not None and fn_node.type == "field_expression":
            member = fn_node.child_by_field_name("field")
            name = node_text(member) if member is not None else name
            obj = fn_node.child_by_field_name("argument")
            if name == "sync":
                self.add("barriers", "M9")
                return UNKNOWN
        bare = name.split("::")[-1]
        if mf.ATOMICS.match(bare):
            self.add("atomics", "M9")
            for a in args[1:]:
                self.expr(a)
            if args and args[0].type == "pointer_expression":
                inner = args[0].child_by_field_name("argument")
                if inner is not None and inner.type == "subscript_expression":
                    base, indices = self.base_of(inner)
                    for index in indices:
                        self.expr(index)
                    self.note_atomic(base, indices, inner)
            elif args:
                self.expr(args[0])
                self.note_atomic_pointer(args[0])
            return INT
        if bare in mf.BARRIERS and bare != "sync":
            self.add("barriers", "M9")
            for a in args:
                self.expr(a)
            return INT
        if bare in mf.LOADS and args:
            return self.load_through_pointer(args[0])
        if bare in mf.STORES and len(args) >= 2:
            self.expr(args[1])
            self.store_through_pointer(args[0])
            return UNKNOWN
        if bare in ASYNC_COPIES:
            return self.async_copy(name, args)
        if bare in WMMA_CALLS and self.wmma(bare, args):
            return UNKNOWN
        arg_types = [self.expr(a) for a in args]
        first = arg_types[0] if arg_types else UNKNOWN
        widest = first
        for at in arg_types[1:]:
            widest = promote(widest, at)
        if bare in mf.SPECIAL:
            kind, forced = mf.SPECIAL[bare]
            precision = forced or (widest.kind if widest.is_float else "dp")
            self.add_special(kind, precision)
            return CType(precision, PRECISION_BYTES.get(precision, 4))
        if bare in mf.FMA:
            forced, lanes = mf.FMA[bare]
            precision = forced or (widest.kind if widest.is_float else "dp")
            self.add_flops(precision, 2 * lanes)
            return CType(precision, PRECISION_BYTES[precision], lanes)
        if bare in mf.BASIC:
            precision, lanes = mf.BASIC[bare]
            self.add_flops(precision, lanes)
            return CType(precision, PRECISION_BYTES[precision], lanes)
        if bare in mf.INT_INTRINSICS:
            self.add("int_ops", "I1")
            return INT
        if bare in mf.MINMAX:
            if not widest.is_float:
                self.add("int_ops", "I1")
            return widest
        if bare in mf.FREE:
            return widest
        prefixed = mf.prefix_result(bare)  # shuffles, votes, conversions, make_float4, ...
        if prefixed is not None and not self.program_defines(bare, len(args), obj):
            prefix, result = prefixed
            if result == "named":
                return self.types.parse(bare[len(prefix) :])
            if result in PRECISION_BYTES:
                return CType(result, PRECISION_BYTES[result])
            return first if result == "first" else UNKNOWN
        if self.ctx is not None:
            functor = self.functor_operator(fn_node) if obj is None else None
            if functor is not None:  # `f(x)` with `F f` a class: its operator()
                return self.inline(functor, args, arg_types, fn_node, None)
            callee = self.ctx.callable(bare, len(args))
            if callee is not None and not callee.is_kernel:
                return self.inline(callee, args, arg_types, obj, fn_node)
        return widest if widest.is_float else UNKNOWN

    def program_defines(self, name: str, arity: int, obj: tree_sitter.Node | None) -> bool:
        """Whether a free call's name is a function the program defines (rule U1): a
        catalogue prefix names the toolkit's calls (`make_float4`), but the program's own
        `make_positive` is its code, and the prefix must not hide its body."""
        if self.ctx is None or obj is not None:
            return False
        callee = self.ctx.callable(name, arity)
        return callee is not None and not callee.is_kernel

    def async_copy(self, name: str, args: list[tree_sitter.Node]) -> CType:
        """`cuda::memcpy_async`, `cooperative_groups::memcpy_async`,
        `__pipeline_memcpy_async`: the source's bytes are loaded and the destination's stored,
        like a plain copy. A thread-scope copy (destination pointer first) moves its size;
        a group's copy (group first) is shared by the threads of the block."""
        types = [self.expr(a) for a in args]
        if len(args) < 3:
            return UNKNOWN
        share: sympy.Expr = sympy.Integer(1)
        element: CType | None = None  # sizes are in bytes but for the element-count form
        size: tree_sitter.Node | None
        if types[0].pointer or name.endswith("__pipeline_memcpy_async"):
            dst, src, size = args[0], args[1], args[2]
        else:
            share = sympy.Mul(*(symbol(f"blockDim_{a}") for a in "xyz"))
            if len(args) >= 5 and not types[2].pointer:  # (group, dst, n, src, n): elements
                dst, src, size = args[1], args[3], args[4]
                element = types[3].deref()
            else:
                dst, src, size = args[1], args[2], args[3] if len(args) > 3 else None
        while size is not None and size.type == "call_expression":  # aligned_size_t<16>(n)
            inner = size.child_by_field_name("arguments")
            size = inner.named_children[0] if inner is not None and inner.named_children else None
        nbytes = self.value(size) if size is not None else None
        if nbytes is not None and element is not None:
            nbytes = nbytes * element.element_bytes
        if nbytes is None:
            nbytes = sympy.Integer(self.types.parse("float").element_bytes)
            self.fv.notes.append(f"{name}: size not known, one 4-byte element counted [A1]")
        self.address_access(src, nbytes / share, read=True, write=False, rule="A1")
        self.address_access(dst, nbytes / share, read=False, write=True, rule="A1")
        return UNKNOWN

    def address_access(
        self,
        ptr: tree_sitter.Node | None,
        nbytes: sympy.Expr,
        read: bool,
        write: bool,
        rule: str,
    ) -> None:
        """`nbytes` read or written at the address `ptr` (`tile`, `g + k`, `&a[i]`) by a copy
        or matrix operation, in the memory its root pointer lives in."""
        root = ptr
        while root is not None:
            if root.type in ("parenthesized_expression", "cast_expression") and root.named_children:
                root = root.child_by_field_name("value") or root.named_children[-1]
            elif root.type == "binary_expression" and operator(root) in ("+", "-"):
                root = root.child_by_field_name("left")
            elif root.type == "pointer_expression" and operator(root) == "&":
                root = root.child_by_field_name("argument")
            elif root.type == "subscript_expression":
                root, _ = self.base_of(root)
            else:
                break
        if ptr is None or root is None:
            return
        _, space, alias, names = self.resolve_base(root)
        if space not in ("global", "shared"):
            return
        names = names | self.identifiers([ptr])
        key = (space, alias, "@" + " ".join(node_text(ptr).split()), self.hoisted_key(names))
        self.arrays.add(alias)
        self.record_access(key, nbytes, read, write, names, rule)

    def wmma(self, bare: str, args: list[tree_sitter.Node]) -> bool:
        """Warp matrix operations on `wmma::fragment`s, each thread's share of the warp's:
        `mma_sync` 2*M*N*K tensor-core FLOPs (`flops_tensor`, a class of its own),
        `load_matrix_sync` / `store_matrix_sync` the fragment's matrix bytes. False when the
        fragment's type is not known (then it is an ordinary call)."""
        frag_arg = args[1] if bare == "store_matrix_sync" or bare.endswith("mma_sync") else None
        frag_arg = args[0] if bare == "load_matrix_sync" and args else frag_arg
        if frag_arg is None or len(args) < 2:
            return False
        base, _ = self.base_of(frag_arg)
        var = self.lookup(node_text(base)) if base.type == "identifier" else None
        shape = fragment(var.type.name) if var is not None else None
        if shape is None:
            return False
        for a in args:
            if a is not frag_arg:
                self.expr(a)
        m, n, k = (self.shape_value(t) for t in (shape.m, shape.n, shape.k))
        if bare.endswith("mma_sync"):
            self.add("flops_tensor", "A2", 2 * m * n * k / WARP)
            return True
        rows, cols = (self.shape_value(t) for t in shape.rows_cols)
        element = shape.element_bytes
        pointer = args[1] if bare == "load_matrix_sync" else args[0]
        if element is None:  # accumulator of an unnamed type: the pointer's element
            element = self.expr_type_only(pointer).deref().element_bytes
        nbytes = rows * cols * sympy.nsimplify(element) / WARP
        self.address_access(
            pointer,
            nbytes,
            read=bare == "load_matrix_sync",
            write=bare == "store_matrix_sync",
            rule="A2",
        )
        return True

    def shape_value(self, text: str) -> sympy.Expr:
        """A fragment dimension: a number, or a macro / constant's value, else a symbol."""
        text = text.strip()
        if text.isdigit():
            return sympy.Integer(int(text))
        var = self.global_var(text)
        if var is not None and var.value is not None:
            return var.value
        return symbol(text) if text.isidentifier() else sympy.Integer(16)

    def _e_gnu_asm_expression(self, node: tree_sitter.Node) -> CType:
        """Inline PTX: operands are evaluated; each `cp.async` loads its size from global
        memory (the source operand's pointer) and stores it to shared memory."""
        operands = asm_operand_values(node)
        for value in operands:
            self.expr(value)
        code = node.child_by_field_name("assembly_code")
        text = node_text(code) if code is not None else ""
        for copy in cp_async(text):
            size = (
                sympy.Integer(copy.size)
                if copy.size is not None
                else self.value(operands[copy.size_operand])
                if copy.size_operand is not None and copy.size_operand < len(operands)
                else None
            )
            if size is None:
                size = sympy.Integer(16)
                self.fv.notes.append("cp.async: size operand not known, 16 bytes counted [A1]")
            if copy.src_operand < len(operands):
                self.address_access(
                    operands[copy.src_operand], size, read=True, write=False, rule="A1"
                )
            line = node.start_point[0] + 1
            self.record_access(
                ("shared", f"cp.async@{line}", "0", self.key), size, False, True, set(), "A1"
            )
        return UNKNOWN

    def functor_operator(self, fn_node: tree_sitter.Node | None):
        """The `operator()` a call `f(...)` reaches when `f` is a variable of class type."""
        if fn_node is None or fn_node.type != "identifier" or self.ctx is None:
            return None
        var = self.lookup(node_text(fn_node))
        if var is None or var.type.pointer or not var.type.name:
            return None
        name = var.type.name.split("<")[0].strip()
        for candidate in self.ctx.functions.get("operator()", []):
            owner = method_class(candidate)
            if owner is not None and owner[0] == name:
                return candidate
        return None

    def load_through_pointer(self, arg: tree_sitter.Node) -> CType:
        if arg.type == "pointer_expression" and operator(arg) == "&":
            inner = arg.child_by_field_name("argument")
            if inner is not None and inner.type == "subscript_expression":
                return self.memory_access(inner, read=True, write=False)
        return self.memory_access_pointer_arith(arg, read=True, write=False)

    def store_through_pointer(self, arg: tree_sitter.Node) -> None:
        if arg.type == "pointer_expression" and operator(arg) == "&":
            inner = arg.child_by_field_name("argument")
            if inner is not None and inner.type == "subscript_expression":
                self.memory_access(inner, read=False, write=True)
                return
        self.memory_access_pointer_arith(arg, read=False, write=True)

    def memory_access_pointer_arith(self, node: tree_sitter.Node, read: bool, write: bool) -> CType:
        """`p + i` used as an address (in __ldg(p + i))."""
        base, index = node, None
        if node.type == "binary_expression" and operator(node) == "+":
            base = cast(tree_sitter.Node, node.child_by_field_name("left"))
            index = node.child_by_field_name("right")
        if index is not None:
            self.expr(index)
            self.add("int_ops", "I1")
        base_type, space, alias, names = self.resolve_base(base)
        element = base_type.deref()
        if space in ("global", "shared"):
            idx_nodes = [index] if index is not None else []
            key_ctx = self.hoisted_key(self.identifiers(idx_nodes) | names)
            key = (
                space,
                alias,
                " ".join(node_text(index).split()) if index is not None else "0",
                key_ctx,
            )
            if space == "global" and self.fresh(key, read, write):
                self.placing = self.place(base, idx_nodes, alias, element.element_bytes, node)
            try:
                self.record_access(
                    key,
                    element.element_bytes,
                    read,
                    write,
                    self.identifiers(idx_nodes) | names,
                    "M5",
                )
            finally:
                self.placing = None
        return element

    def inline(
        self,
        callee,
        args: list[tree_sitter.Node],
        arg_types: list[CType],
        obj: tree_sitter.Node | None = None,
        fn_node: tree_sitter.Node | None = None,
    ) -> CType:
        """Add a device function's counts at the call site, binding its parameters (and, for
        a method, the object's data members: see `bind_members`)."""
        return_type_node = callee.node.child_by_field_name("type")
        return_type = self.types.parse(node_text(return_type_node)) if return_type_node else UNKNOWN
        body = callee.node.child_by_field_name("body")
        if (
            body is None
            or self.inline_depth >= MAX_INLINE_DEPTH
            or callee.name in self.inline_stack
        ):
            # Recursion: one level is counted; deeper calls are data-dependent and flagged.
            if callee.name in self.inline_stack:
                self.fv.notes.append(f"recursive call to {callee.name} counted once")
            return return_type
        self.inline_stack.append(callee.name)
        self.fv.device_calls += 1
        self.inline_depth += 1
        self.call_counter += 1
        scope: dict[str, Var] = {}
        for i, param in enumerate(parameters(callee.node)):
            if not param.name:
                continue
            ptype = self.types.parse(param.type)
            arg = args[i] if i < len(args) else None
            deps = frozenset(self.identifiers([arg])) if arg is not None else frozenset()
            if ptype.pointer or param.type.endswith("&"):
                space, alias = "global", f"{param.name}@{self.call_counter}"
                if arg is not None:
                    base, _ = self.base_of(arg) if arg.type == "subscript_expression" else (arg, [])
                    if base.type == "pointer_expression":
                        base = base.child_by_field_name("argument") or base
                        if base.type == "subscript_expression":
                            base, _ = self.base_of(base)
                    if base.type == "identifier":
                        var = self.lookup(node_text(base)) or self.global_var(node_text(base))
                        if var is not None:
                            space = (
                                var.space
                                if var.space != "scalar"
                                else ("global" if var.type.pointer else "local")
                            )
                        if (
                            param.type.endswith("&")
                            and not ptype.pointer
                            and arg.type == "identifier"
                        ):
                            space = var.space if var is not None else "local"
                    if arg.type != "identifier" or not param.type.endswith("&"):
                        alias = f"{node_text(arg)}@{self.call_counter}"
                scope[param.name] = Var(
                    ptype,
                    space=space
                    if ptype.pointer
                    else (
                        space
                        if space in ("global", "shared") and param.type.endswith("&")
                        else "scalar"
                    ),
                    value=self.value(arg),
                    deps=deps,
                    alias=alias,
                )
                if ptype.pointer and space == "global" and arg is not None:
                    scope[param.name].points_into = self.pointer_target(arg)
                if param.type.endswith("&") and not ptype.pointer:
                    scope[param.name] = Var(ptype, space="scalar", value=self.value(arg), deps=deps)
            else:
                scope[param.name] = Var(
                    ptype,
                    value=self.value(arg),
                    deps=deps,
                    loaded=self._is_loaded(arg) if arg is not None else False,
                )
                if arg is not None and self.any_varying(deps):
                    scope[param.name].varying = True
                    scope[param.name].index_value = self.index_of(arg)
        for bound in scope.values():
            bound.set_at = self.key  # a parameter is set at each call
        members = self.bind_members(callee, obj, fn_node)
        saved_scopes = self.scopes
        self.scopes = Scopes([self.scopes.outermost, {**members, **scope}])
        self.member_stack.append(members)
        outer = self.source_file, self.frame_base, self.inlined_at
        self.inlined_at = (self.call_counter, (str(self.ir.file), self.current_line))
        self.source_file, self.frame_base = str(callee.file), len(self.frames)
        try:
            self.walk_inlined(callee, body, scope)
        finally:
            self.source_file, self.frame_base, self.inlined_at = outer
            self.member_stack.pop()
            self.scopes = saved_scopes
            self.inline_depth -= 1
            self.inline_stack.pop()
        return return_type

    def walk_inlined(self, callee, body: tree_sitter.Node, scope: dict[str, Var]) -> None:
        """Walk an inlined body. A body that only computes with scalars (`scalar_body`)
        counts the same at every call of this kernel whose free names have the same types:
        its first walk's counts and work are recorded, and replayed at the next such call
        instead of walking it again (byte-identical counts, at a fraction of the cost)."""
        shape = None
        if (
            self.recording is None
            and not self.track_lines
            and not self.next_atomic
            and all(not v.type.pointer and v.space == "scalar" for v in scope.values())
            and method_class(callee) is None
        ):
            shape = scalar_body(body)
        if (
            shape is None
            or (shape.declares and self.clang is not None)
            or self.stmt_depth + shape.height >= MAX_STATEMENT_NESTING
            or self.expr_depth + shape.height >= MAX_EXPRESSION_NESTING
        ):
            self.stmt(body)
            return
        kernel_scope = self.scopes.outermost
        if any(name in kernel_scope and name not in scope for name in shape.assigned):
            self.stmt(body)  # it assigns a name of the kernel's: that changes its state
            return
        free = tuple(
            (var.type, var.member_of is None)
            if name not in scope and (var := kernel_scope.get(name)) is not None
            else None
            for name in shape.names
        )
        key = (body.id, body.start_byte, body.end_byte, free)
        known = self.replays.get(key)
        if known is None:
            self.record_inlined(body, key)
            return
        _, work, counts = known
        if work is None or self.work + work > self.budget:
            self.stmt(body)  # not replayable, or the budget runs out inside: walked (B1)
            return
        self.work += work
        for name, rule, n, at in counts:
            self.add(name, rule, n, at)

    def _replay_state(self) -> tuple:
        """What a replayed body must leave as it was: everything but counts and work."""
        fv = self.fv
        return (
            len(fv.warnings),
            len(fv.notes),
            fv.device_calls,
            fv.shared_arrays,
            fv.unparsed_regions,
            fv.indirect_accesses,
            len(fv.host_bindings),
            self.call_counter,
            len(self.accesses),
            len(self.access_state),
            len(self.arrays),
            len(self.trip_columns),
            len(self.frames),
            self.valued,
        )

    def record_inlined(self, body: tree_sitter.Node, key: tuple) -> None:
        """`walk_inlined`'s first walk of a scalar body: its counts are kept when the walk
        did nothing else (no warning, note, access, value or call changed state)."""
        state = self._replay_state()
        work = self.work
        self.recording = []
        try:
            self.stmt(body)
            counts = tuple(self.recording)
        finally:
            self.recording = None
        if self._replay_state() == state and all(at is None for *_, at in counts):
            self.replays[key] = (body, self.work - work, counts)
        else:
            self.replays[key] = (body, None, ())

    def bind_members(
        self, callee, obj: tree_sitter.Node | None, fn_node: tree_sitter.Node | None
    ) -> dict[str, Var]:
        """A method's view of its object: data members of an object in global or shared
        memory (`pts[i].norm()`, `p->norm()`) are accesses to that element's members; members
        of a local or by-value object are registers; pointer members point to global data.
        A method called without an object (from another method) sees the caller's object."""
        owner = method_class(callee)
        if owner is None:
            return {}
        if obj is None:
            return self.member_stack[-1] if self.member_stack else {}
        op_node = fn_node.child_by_field_name("operator") if fn_node is not None else None
        arrow = op_node is not None and node_text(op_node) == "->"
        obj_type, place = self.object_place(obj, arrow)
        class_name, params = owner
        type_name = obj_type.name or class_name
        if "<" not in type_name and class_name in self.types.template_types:
            type_name = self.types.template_types[class_name]
        name = type_name.split("<")[0].strip()
        args = split_args(type_name.split("<", 1)[1].rsplit(">", 1)[0]) if "<" in type_name else []
        bound = self.types.template_types
        mapping = {p: bound.get(a, a) for p, a in zip(params, args, strict=False)}
        text = " ".join(node_text(obj).split())
        members: dict[str, Var] = {}
        fields = self.types.structs.get(name, self.types.structs.get(class_name, []))
        for type_text, field, size in fields:
            for param, arg in mapping.items():
                type_text = re.sub(rf"\b{re.escape(param)}\b", arg, type_text)
            t = self.types.parse(type_text)
            if size:  # an array member: elements of the object itself
                alias = f"{place[1]}[{place[2]}].{field}" if place else f"{text}.{field}"
                members[field] = Var(
                    t.address_of(),
                    space=place[0] if place else "local",
                    alias=alias,
                    deps=place[3] if place else frozenset(),
                )
            elif t.pointer:  # a device pointer the object holds
                members[field] = Var(t, space="global", alias=f"{text}.{field}")
            elif place is not None:
                members[field] = Var(t, member_of=place)
            else:  # a register, symbolic like a kernel's scalar parameter
                members[field] = Var(t, value=symbol(field) if t.is_int else None)
        struct_type = self.types.parse(name) if name in self.types.structs else obj_type
        members["this"] = Var(
            struct_type.address_of(), space=place[0] if place else "local", member_of=place
        )
        return members

    def object_place(
        self, obj: tree_sitter.Node, arrow: bool
    ) -> tuple[CType, tuple[str, str, str, frozenset[str]] | None]:
        """The type of the object a method is called on and, when it lives in global or
        shared memory, where: (space, alias, index text, index names), as `memory_access`
        keys its elements."""
        while obj.type == "parenthesized_expression" and obj.named_children:
            obj = obj.named_children[0]
        if obj.type == "pointer_expression" and operator(obj) == "*":
            inner = obj.child_by_field_name("argument")
            if inner is None:
                return UNKNOWN, None
            obj, arrow = inner, True
        if obj.type == "subscript_expression":
            base, indices = self.base_of(obj)
            for index in indices:
                self.expr(index)
            base_type, space, alias, names = self.resolve_base(base)
            element = base_type
            for _ in indices:
                element = element.deref() if element.pointer else element
            if arrow:
                element = element.deref()
            if space not in ("global", "shared") or arrow:
                return element, None
            index_text = ",".join(self.tokens(i) for i in indices)
            return element, (space, alias, index_text, frozenset(names | self.identifiers(indices)))
        if obj.type != "identifier":
            return self.expr_type_only(obj), None
        var = self.lookup(node_text(obj)) or self.global_var(node_text(obj))
        if var is None:
            return UNKNOWN, None
        if not arrow:
            return var.type, None
        if not var.type.pointer or var.space not in ("global", "shared"):
            return var.type.deref(), None
        _, space, alias, names = self.resolve_base(obj)
        return var.type.deref(), (space, alias, "0", frozenset(names))

    # ---------------------------------------------------------------- statements
    def stmt(self, node: tree_sitter.Node | None) -> None:
        """Count one statement. Like `expr`, the walk recurses once per nesting level: a
        statement nested deeper than MAX_STATEMENT_NESTING is counted flat (rule N2)."""
        if node is None:
            return
        self.work += 1
        if self.work > self.budget:
            raise WorkBudgetExceeded
        if self.stmt_depth >= MAX_STATEMENT_NESTING:
            self.approximated(
                "N2", MAX_STATEMENT_NESTING, node, "the deeper statements counted flat, loops once"
            )
            self.flat_statements(node)
            return
        t = node.type
        handler = _STMT_HANDLERS.get(t, _MISSING)
        if handler is _MISSING:
            handler = _STMT_HANDLERS[t] = getattr(KernelLowering, "_s_" + t, None)
        self.stmt_depth += 1
        outer_line = self.current_line
        if not self.inline_depth:
            self.current_line = node.start_point[0] + 1 + self.line_offset
        if self.track_lines:
            self.note_line(node)
        if handler is not None:
            handler(self, node)
        elif node.type == "ERROR":
            self.fv.unparsed_regions += 1
            for child in node.named_children:
                self.stmt(child)
        elif node.type.endswith("_statement") or node.type in ("declaration", "type_definition"):
            for child in node.named_children:
                self.stmt(child) if child.type.endswith("statement") else self.expr(child)
        else:
            self.expr(node)
        self.stmt_depth -= 1
        self.current_line = outer_line

    def flat_statements(self, node: tree_sitter.Node) -> None:
        """Rule N2: a statement nested too deep to walk recursively, walked with a stack.
        Its statements and expressions are counted in order, every arm as taken (as
        everywhere), but its loops are not loop contexts (their bodies count once, in the
        enclosing loop's context) and its blocks share one scope."""
        self.scopes.push()
        rare_depth = self.rare_depth
        pending: list[tree_sitter.Node | int] = [node]  # an int: a change of rare_depth
        try:
            while pending:
                item = pending.pop()
                if isinstance(item, int):
                    self.rare_depth += item
                    continue
                if item is None:
                    continue
                if item is not node:
                    self.spend()
                self.flat_statement(item, pending)
        finally:
            self.rare_depth = rare_depth
            self.scopes.pop()

    def flat_statement(self, node: tree_sitter.Node, pending: list) -> None:
        """Count one statement of `flat_statements`; the statements in it go on `pending`
        (a stack: pushed last to first)."""
        t = node.type
        children = node.named_children
        field = node.child_by_field_name
        if t in ("compound_statement", "declaration_list", "else_clause", "ERROR"):
            self.fv.unparsed_regions += t == "ERROR"
            pending.extend(reversed(children))
        elif t == "if_statement":
            self.add("branches", "C1")
            cond = field("condition")
            for child in cond.named_children if cond is not None else ():
                self._s_declaration(child) if child.type == "declaration" else self.expr(child)
            rare = int(cond is not None and "==" in node_text(cond))
            alternative = field("alternative")
            if alternative is not None:
                pending.append(alternative)
            pending.append(-rare)
            pending.append(field("consequence"))
            self.rare_depth += rare
        elif t == "for_statement":
            init = field("initializer")
            if init is not None:
                self._s_declaration(init) if init.type == "declaration" else self.expr(init)
            self.expr(field("condition"))
            self.expr(field("update"))
            pending.append(field("body"))
        elif t in ("while_statement", "do_statement", "switch_statement"):
            self.expr(field("condition"))
            pending.append(field("body"))
        elif t == "for_range_loop":
            pending.append(field("body"))
        elif t == "case_statement":
            self.add("branches", "C1")
            value = field("value")
            pending.extend(c for c in reversed(children) if c != value)
        elif t == "labeled_statement":
            pending.extend(reversed(children[1:]))
        elif t in ("preproc_if", "preproc_ifdef"):
            arm = []
            for child in children:
                if child.type in ("preproc_else", "preproc_elif", "preproc_elifdef"):
                    break
                if child != field("condition") and child.type != "identifier":
                    arm.append(child)
            pending.extend(reversed(arm))
        elif t in _FLAT_LEAVES:  # statements without statements in them
            getattr(KernelLowering, "_s_" + t)(self, node)
        elif t.endswith("_statement") or t == "type_definition":
            pending.extend(reversed(children))  # what is no statement lands below: `expr`
        else:
            self.expr(node)

    def _s_compound_statement(self, node: tree_sitter.Node) -> None:
        """`{ { ... } }`: a block whose only statement is a block is one level (rule N1)."""
        depth = len(self.scopes)
        share = self.thread_share  # S16: an early `return` in it leaves fewer threads
        try:
            while True:
                self.scopes.push()
                children = node.named_children
                if len(children) != 1 or children[0].type != "compound_statement":
                    break
                self.spend()
                node = children[0]
            for child in children:
                self.stmt(child)
        finally:
            self.scopes.close_to(depth)
            self.thread_share = share

    _s_declaration_list = _s_compound_statement

    def _s_expression_statement(self, node: tree_sitter.Node) -> None:
        for child in node.named_children:
            self.expr(child)

    def _s_return_statement(self, node: tree_sitter.Node) -> None:
        for child in node.named_children:
            self.expr(child)

    def _s_comment(self, node: tree_sitter.Node) -> None:
        return

    def _s_preproc_call(self, node: tree_sitter.Node) -> None:
        text = node_text(node)
        if re.search(r"#\s*pragma\s+omp\s+atomic", text):
            self.next_atomic = True
        elif re.search(r"#\s*pragma\s+omp\s+barrier", text):
            self.add("barriers", "M9")

    def _s_preproc_if(self, node: tree_sitter.Node) -> None:
        """Count the first arm of `#if`/`#ifdef` (the configuration a default build sees)."""
        for child in node.named_children:
            if child.type in ("preproc_else", "preproc_elif", "preproc_elifdef"):
                break
            if child is node.child_by_field_name("condition") or child.type == "identifier":
                continue
            self.stmt(child)

    _s_preproc_ifdef = _s_preproc_if

    def _s_preproc_def(self, node: tree_sitter.Node) -> None:
        return

    def _s_labeled_statement(self, node: tree_sitter.Node) -> None:
        for child in node.named_children[1:]:
            self.stmt(child)

    def _s_declaration(self, node: tree_sitter.Node) -> None:
        type_node = node.child_by_field_name("type")
        prefix = node_text(node).split("=")[0]
        shared = "__shared__" in prefix
        base_text = node_text(type_node) if type_node is not None else "int"
        if base_text == "auto":
            base_text = ""
        for decl in node.children_by_field_name("declarator"):
            value_node = (
                decl.child_by_field_name("value") if decl.type == "init_declarator" else None
            )
            inner = (
                decl.child_by_field_name("declarator") if decl.type == "init_declarator" else decl
            )
            name, stars, is_array = unwrap_declarator(inner)
            init_type = UNKNOWN
            if value_node is not None:
                if value_node.type == "initializer_list":
                    for child in value_node.named_children:
                        self.expr(child)
                else:
                    init_type = self.expr(value_node)
            t = self.types.parse(base_text + "*" * stars) if base_text else init_type
            if not name:
                continue
            if self.clang is not None and inner is not None:  # rule M10: clang's type
                line = inner.start_point[0] + 1 + self.line_offset
                t = self.clang.declared(self.source_file, line, name, declarator_column(inner), t)
            if shared:
                space = "shared"
                self.fv.shared_arrays += 1
            elif is_array:
                space = "local"
            elif t.pointer:
                space = self.pointer_space(value_node)
            else:
                space = "scalar"
            # Only integers feed trip counts; skipping the rest keeps sympy off the hot path.
            integral = t.is_int or t.kind == "unknown"
            value = self.value(value_node) if value_node is not None and integral else None
            loaded = self._is_loaded(value_node) if value_node is not None and integral else False
            deps = (
                frozenset(self.identifiers([value_node])) if value_node is not None else frozenset()
            )
            var = Var(t, space=space, value=value, deps=deps, loaded=loaded)
            init = node_text(value_node) if value_node is not None else ""
            if "thread_block" in base_text or "_partition" in init or "thread_block" in init:
                var.group = coopgroups.group_threads(base_text, init)  # C14
            if value_node is not None and integral and self.any_varying(deps):
                var.varying = True
                var.index_value = self.index_of(value_node)
            elif value_node is not None and space == "global" and t.pointer:
                var.points_into = self.pointer_target(value_node)
            self.declare(name, var)

    def pointer_target(self, value_node: tree_sitter.Node) -> tuple[str, sympy.Expr | None] | None:
        """`a + off` / `&a[off]` / `(T*)((char*)a + off)` / `b` (itself pointing into `a`):
        (a, the offset in bytes) for the traffic model; None when not of those forms."""
        node = _uncast(value_node)
        offset: sympy.Expr | None = sympy.Integer(0)
        if node.type == "binary_expression" and operator(node) in ("+", "-"):
            # `a + i + j*n` is `(a + i) + j*n`: every right operand steps from the pointer
            terms: list[tuple[tree_sitter.Node, int]] = []
            left: tree_sitter.Node | None = node
            while left is not None and left.type == "binary_expression" and len(terms) < 64:
                if operator(left) not in ("+", "-"):
                    return None
                right = left.child_by_field_name("right")
                if right is None:
                    return None
                terms.append((right, -1 if operator(left) == "-" else 1))
                pointer = left.child_by_field_name("left")
                left = _uncast(pointer) if pointer is not None else None
            if left is None or pointer is None:
                return None
            step = self.expr_type_only_pointer(pointer)
            for right, sign in terms:
                value = self.index_of(right)
                offset = None if value is None or offset is None else offset + sign * value * step
            node = left
        elif node.type == "pointer_expression" and operator(node) == "&":
            inner = node.child_by_field_name("argument")
            if inner is None or inner.type != "subscript_expression":
                return None
            node, indices = self.base_of(inner)
            offset = self.index_of(indices[0]) if len(indices) == 1 else None
            if offset is not None:
                offset = offset * self.expr_type_only_pointer(node)
        if node is None or node.type != "identifier":
            return None
        var = self.lookup(node_text(node)) or self.global_var(node_text(node))
        if var is None or not var.type.pointer:
            return None
        if var.points_into is not None:
            array, base_offset = var.points_into
            total = None if base_offset is None or offset is None else base_offset + offset
            return array, total
        return (var.alias or node_text(node)), offset

    def expr_type_only_pointer(self, node: tree_sitter.Node) -> int:
        """Bytes one step of pointer arithmetic on `node` moves: its element's size, or 1
        for a cast to a char pointer."""
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        if node.type == "cast_expression":
            type_node = node.child_by_field_name("type")
            if type_node is not None:
                t = self.types.parse(node_text(type_node).replace(" ", ""))
                return max(1, t.deref().element_bytes) if t.pointer else 1
        if node.type == "identifier":
            var = self.lookup(node_text(node)) or self.global_var(node_text(node))
            if var is not None and var.type.pointer:
                return max(1, var.type.deref().element_bytes)
        return 1

    def pointer_space(self, value_node: tree_sitter.Node | None) -> str:
        """A local pointer lives where its initialiser points: `float* row = A + i*n` is global."""
        if value_node is None:
            return "local"
        stack = [value_node]
        while stack:
            n = stack.pop()
            if n.type == "identifier":
                var = self.lookup(node_text(n)) or self.global_var(node_text(n))
                if (
                    var is not None
                    and var.space in ("global", "shared", "local")
                    and (var.type.pointer or var.space == "shared")
                ):
                    return var.space
            if n.type == "pointer_expression" and operator(n) == "&":
                target = n.child_by_field_name("argument")
                var = self.lookup(node_text(target)) if target is not None else None
                if (
                    var is not None
                    and target is not None
                    and target.type == "identifier"
                    and not var.type.pointer
                ):
                    # `&local`: the address of a variable of this thread
                    return var.space if var.space in ("global", "shared") else "local"
            if n.type in ("call_expression",):
                name = callee_name(n)
                if name in _CASTS:  # reinterpret_cast<float*>(tile): the argument decides
                    stack.extend(n.named_children)
                elif self.call_returns_shared(n, name):
                    return "shared"
                continue
            stack.extend(n.named_children)
        return "global"

    def call_returns_shared(self, call: tree_sitter.Node, name: str) -> bool:
        """`SharedMemory<T>()` / `smem()`: a helper handing out `extern __shared__` storage."""
        if not name or self.ctx is None:
            return False
        args = call.child_by_field_name("arguments")
        callee = self.ctx.callable(name, len(args.named_children) if args is not None else 0)
        if callee is not None and function_returns_shared(callee.node):
            return True
        classes = getattr(self, "_shared_classes", None)
        if classes is None:
            own = self.ir.ast[2] if isinstance(self.ir.ast, tuple) else self.ir.ast
            roots = [h.tree.root_node for h in self.ctx.headers.values()]
            while own is not None and own.parent is not None:
                own = own.parent
            classes = self._shared_classes = classes_returning_shared(
                [own, *roots] if own is not None else roots, self.grammar
            )
        return name in classes

    def _s_if_statement(self, node: tree_sitter.Node) -> None:
        """`if ... else if ... else if ...` nests in its `else`s: walked as a list (N1)."""
        if self.track_lines and threadshare.exits(node):  # S16: `if (i >= n) return;`
            cond = cast(tree_sitter.Node, node.child_by_field_name("condition"))
            rest = threadshare.arm_share(threadshare.comparisons(cond, self.value, True))
            self.walk_if(node)
            self.thread_share = self.thread_share * rest
            return
        self.walk_if(node)

    def share_value(self, node: tree_sitter.Node) -> sympy.Expr | None:
        """S16's value of a comparison's side: a halving counter's mean over its loop (S18);
        a remainder by a doubling counter, by a mark standing for the counter (S50)."""
        if node.type == "identifier" and node_text(node) in self.counter_means:
            return self.counter_means[node_text(node)]
        divisor = node.child_by_field_name("right") if node.type == "binary_expression" else None
        operator = node.child_by_field_name("operator") if divisor is not None else None
        if divisor is not None and operator is not None and node_text(operator) == "%":
            counter = self.doubled_counter(divisor)
            left = self.value(node.child_by_field_name("left"))
            if counter is not None and left is not None:
                mark = sympy.Symbol(f"S50_{counter}")
                self.inverse_marks[mark] = self.counter_inverses[counter]
                return sympy.Mod(left, mark)
        return self.value(node)

    def doubled_counter(self, node: tree_sitter.Node) -> str | None:
        """S50: the doubling (halving) loop counter a name is, itself or a copy of it made
        in the loop (`int p = i;`, and no other assignment of it there)."""
        if node.type != "identifier":
            return None
        name = node_text(node)
        if name in self.counter_inverses:
            return name
        var = self.lookup(name)
        if var is None or len(var.deps) != 1:
            return None
        (counter,) = var.deps
        loop = self.inverse_loops.get(counter)
        if loop is None or cycleshare.copies(loop, name) != [counter]:
            return None
        return counter

    def walk_if(self, node: tree_sitter.Node) -> None:
        chained = False
        while True:
            self.add("branches", "C1")
            cond = node.child_by_field_name("condition")
            if cond is not None and not self.frames and not self.inline_depth:
                self._note_thread_guards(cond)
            if cond is not None:
                for child in cond.named_children:
                    self.expr(child) if child.type != "declaration" else self.stmt(child)
            # An equality test (`i == 0`, `x == n-1`) selects few threads: what it guards is
            # counted as taken (docs/counting.md) and also tallied apart, for the learned model.
            rare = cond is not None and "==" in node_text(cond)
            self.rare_depth += rare
            share = self.thread_share
            # S16: an `if` with no `else`, not in an else-if chain (no S10 pair to decide)
            alone = node.child_by_field_name("alternative") is None and not chained
            if self.track_lines and cond is not None and alone:  # S16: the threads taking it
                pairs = threadshare.comparisons(cond, self.share_value)
                self.thread_share = share * threadshare.arm_share(pairs)
                if self.counter_inverses:  # S50: `ty % i == 0`, i doubling
                    self.thread_share *= cycleshare.remainder_share(pairs, self.inverse_marks)
            try:
                self.stmt(node.child_by_field_name("consequence"))
            finally:
                self.rare_depth -= rare
                self.thread_share = share
            alt = node.child_by_field_name("alternative")
            if alt is None:
                return
            children = alt.named_children
            if len(children) != 1 or children[0].type != "if_statement":
                break
            self.spend()  # the inner `if`
            node, chained = children[0], True
        for child in children:
            self.stmt(child)

    def _note_thread_guards(self, cond: tree_sitter.Node) -> None:
        """Rule U6's input: the comparisons of a thread position with a plain name in a
        guard's `&&`/`||` chain (`i < n`, `n > i`, `i >= n`), the first of each name."""
        for op, left, right in chained_comparisons(list(cond.named_children), ("&&", "||")):
            if op in _GUARD_LEFT:  # `i < n` and `n > i` both say n = largest i + 1
                self._note_thread_guard(left, right, _GUARD_LEFT[op])
                self._note_thread_guard(right, left, _GUARD_RIGHT[op])

    def _note_thread_guard(
        self, position: tree_sitter.Node, name: tree_sitter.Node, offset: int
    ) -> None:
        value = self.value(name)
        loaded = self.guarded_load(name) if value is None else None
        value = loaded if loaded is not None else value
        if value is None:
            return
        shift, bound = value.as_coeff_Add()  # `i < n - 1`: n is one more than `n - 1`
        if not isinstance(bound, sympy.Symbol) or not shift.is_Integer:
            return
        if bound.name.startswith(THREAD_POSITION_PREFIXES):
            return
        offset -= int(shift)
        where = self.value(position)
        if where is None or bound.name in self.fv.thread_guards:
            return
        names = {s.name for s in where.free_symbols}
        if not any(n.startswith(THREAD_POSITION_PREFIXES) for n in names):
            return
        if all(n.startswith(_LAUNCH_PREFIXES) for n in names):
            self.fv.thread_guards[bound.name] = (where, offset)
            if loaded is not None:  # U8: the local now stands for the guard's size
                var = cast(Var, self.lookup(bound.name))
                var.value, var.loaded, var.deps = loaded, False, frozenset()

    def guarded_load(self, name: tree_sitter.Node) -> sympy.Symbol | None:
        """Rule U8: a local integer of unknown value set before any loop (`int n =
        p->count;`, read from memory) that a thread guard compares with a thread position,
        as a symbol of its own name (the guard then sizes it, U6); None for anything else."""
        if name.type != "identifier":
            return None
        var = self.lookup(node_text(name))
        if var is None or var.value is not None or var.type.pointer or var.space != "scalar":
            return None
        if not (var.type.is_int or var.type.kind == "unknown") or var.set_at != ():
            return None
        return symbol(node_text(name))

    def _s_preproc_include(self, node: tree_sitter.Node) -> None:
        """A header pasted into a body (`for (...) { #include "step.h" }`): count its code."""
        path = node.child_by_field_name("path")
        name = node_text(path).strip('"<>').split("/")[-1] if path is not None else ""
        index = self.ctx.headers.get(name) if self.ctx is not None else None
        if index is None or name in self.pasting or len(self.pasting) > 4:
            return
        self.pasting.append(name)
        try:
            for child in index.tree.root_node.named_children:
                if child.type not in ("function_definition", "preproc_def", "preproc_function_def"):
                    self.stmt(child)
        finally:
            self.pasting.pop()

    def _s_else_clause(self, node: tree_sitter.Node) -> None:
        for child in node.named_children:
            self.stmt(child)

    def _s_switch_statement(self, node: tree_sitter.Node) -> None:
        self.expr(node.child_by_field_name("condition"))
        self.stmt(node.child_by_field_name("body"))

    def _s_case_statement(self, node: tree_sitter.Node) -> None:
        self.add("branches", "C1")
        for child in node.named_children:
            if child is node.child_by_field_name("value"):
                continue
            self.stmt(child)

    def _s_break_statement(self, node: tree_sitter.Node) -> None:
        return

    _s_continue_statement = _s_break_statement
    _s_goto_statement = _s_break_statement

    # loops -----------------------------------------------------------------
    def assigned_in(self, node: tree_sitter.Node) -> frozenset[str]:
        def names() -> frozenset[str]:
            owner = node
            while owner.type != "function_definition" and owner.parent is not None:
                owner = owner.parent
            if owner.type == "function_definition":
                scan = scan_function(owner, self.grammar)
                starts, found = scan.assigned_starts, scan.assigned_names
            else:
                compute = partial(_file_assignments, owner, self.grammar)
                starts, found = _FILE_ASSIGNMENTS.get(owner, compute, self.grammar)
            inside = slice(bisect_left(starts, node.start_byte), bisect_left(starts, node.end_byte))
            return frozenset(found[inside])

        return _ASSIGNED.get(node, names, self.grammar)

    def moved_in(self, body: tree_sitter.Node, names: set[str]) -> bool:
        """Whether a loop body changes one of `names` (a loop bound's): an assignment
        of it, not of a variable of the same name the body declares (rule C12)."""
        maybe = names & self.assigned_in(body)
        return bool(maybe) and bool(whileloops.rebinds(body, maybe))

    def push_frame(self, trip: sympy.Expr, node: tree_sitter.Node, variable: str = "") -> Frame:
        line = node.start_point[0] + 1 + self.line_offset
        loop = self.lowered.add_loop(trip, line, variable)
        last = node.end_point[0] + 1 + self.line_offset
        span = (str(self.source_file), line, last)
        frame = Frame(id=loop.id, trip=trip, assigned=self.assigned_in(node), span=span)
        frame.line_trip = self.spread.pop(node.id, None)
        self.frames.append(frame)
        if self.track_lines:
            self.note_line(node)  # a loop's own line (its test and update) runs once per trip
        self._key = None
        self.fv.loops += 1
        self.max_depth = max(self.max_depth, len(self.frames))
        return frame

    def note_line(self, node: tree_sitter.Node) -> None:
        """Compile mode: the trip counts of the loops around a source line, within its own
        function (docs/counting.md S3); the innermost statement of a line is noted last."""
        where = (self.source_file, node.start_point[0] + 1 + self.line_offset)
        self.fv.line_loops[where] = tuple(_line_trip(f) for f in self.frames[self.frame_base :])
        threadshare.note_share(self.fv.line_shares, where, self.thread_share)
        threadshare.note_continued(self.fv.line_shares, node, where, self.thread_share)  # S35
        # S14: an inlined callee's line also keeps, per inlined call, every loop around it
        if self.inlined_at is None:
            self.own_lines.add(where)
            self.fv.line_sites.pop(where, None)
        elif where not in self.own_lines:
            call, site = self.inlined_at
            calls = self.fv.line_sites.setdefault(where, {})
            calls[call] = CallSite(
                site,
                tuple(_line_trip(f) for f in self.frames),
                tuple(f.span for f in self.frames),
                siteshare.noted(calls.get(call), self.thread_share),  # S51
            )

    def note_spread(
        self, node: tree_sitter.Node, op: str, start: sympy.Expr, end: sympy.Expr, amount
    ) -> None:
        """S17: a loop striding over thread positions, its mean trips over the launch."""
        mean = threadshare.spread_trip(op, start, end, amount)
        if mean is not None:
            self.spread[node.id] = mean

    def pop_frame(self, frame: Frame) -> None:
        self.frames.remove(frame)
        self._key = None

    def unknown_trip(self, node: tree_sitter.Node) -> sympy.Expr:
        """`trip_L<line>`; a second loop starting on the same line gets `trip_L<line>_2`, and
        so on in column order met, so two loops on one line are never bound together."""
        self.fv.unknown_trip_loops += 1
        line = node.start_point[0] + 1 + self.line_offset
        columns = self.trip_columns.setdefault(line, [])
        column = node.start_point[1]
        if column not in columns:
            columns.append(column)
        return unknown_trip_symbol(line, columns.index(column) + 1)

    line_offset = 0
    clang: ClangTypes | None = None  # rule M10: the unit's types from clang (clangtypes.attach)

    def _s_for_statement(self, node: tree_sitter.Node) -> None:
        self.scopes.push()
        try:
            init = node.child_by_field_name("initializer")
            if init is not None:
                self.stmt(init) if init.type == "declaration" else self.expr(init)
            trip, var, mean = self.trip_count(node)
            frame = self.push_frame(trip, node, var or "")
            try:
                if var is not None:
                    existing = self.lookup(var)
                    if existing is not None:
                        existing.value = mean
                        existing.loaded = False
                        existing.set_at = None  # the mean, not a value it starts from
                # I4: a small constant trip count is unrolled fully, its control compiled away
                self.loop_control = "I4" if self.unrolled_fully(node, trip) else "I3"
                try:
                    self.expr(node.child_by_field_name("condition"))
                    self.expr(node.child_by_field_name("update"))
                finally:
                    self.loop_control = None
                counter = self.lookup(var) if var is not None else None
                if var is not None and counter is not None:  # after the update (`i += s`)
                    counter.index_value = self.loop_dim(node, var, trip, "loop")
                    counter.varying = True
                    self.trailing_counters(node, var, counter.index_value)
                halving = self.halving.pop(node.id, None)
                if var is not None and halving is not None:
                    self.counter_means[var] = halving  # S18
                inverse = self.inverses.pop(node.id, None)
                if var is not None and inverse is not None:
                    self.counter_inverses[var] = inverse  # S50
                    self.inverse_loops[var] = node
                self.stmt(node.child_by_field_name("body"))
            finally:
                self.pop_frame(frame)
                if var is not None:
                    self.counter_means.pop(var, None)
                    self.counter_inverses.pop(var, None)
                    self.inverse_loops.pop(var, None)
        finally:
            self.scopes.pop()

    def trailing_counters(self, node: tree_sitter.Node, var: str, index: sympy.Expr | None) -> None:
        """C10: a name the update sets from the counter's own step (`k = j++`) is, in the
        body, the counter's value one trip earlier (`k = ++j`: this trip's), over the same
        loop dim; its first trip's value (set before the loop) is ignored."""
        update = node.child_by_field_name("update")
        pending: list[tree_sitter.Node] = [update] if update is not None else []
        while pending:
            term = pending.pop()
            if term.type == "comma_expression":
                pending.extend(c for c in term.named_children)
                continue
            right = term.child_by_field_name("right")
            left = term.child_by_field_name("left")
            if term.type != "assignment_expression" or operator(term) != "=":
                continue
            if left is None or left.type != "identifier" or right is None:
                continue
            step = self.update_step(right, var) if right.type == "update_expression" else None
            trailing = self.lookup(node_text(left))
            if step is None or trailing is None:
                continue
            before = node_text(right).strip().endswith(("++", "--"))
            trailing.varying = True
            trailing.index_value = None if index is None else index - step[1] * before

    def unrolled_fully(self, node: tree_sitter.Node, trip: sympy.Expr) -> bool:
        """Rule I4: a constant trip count of at most FULL_UNROLL_TRIPS, not one averaged over
        an enclosing loop's counter (`j < i`) and not held back by `#pragma unroll 1`."""
        if not (trip.is_Integer and int(trip) <= FULL_UNROLL_TRIPS):
            return False
        condition = node.child_by_field_name("condition")
        if condition is not None and self.any_varying(self._names_in(condition)):
            return False
        before = node.prev_named_sibling
        while before is not None and before.type == "comment":
            before = before.prev_named_sibling
        return not (
            before is not None
            and before.type == "preproc_call"
            and re.fullmatch(r"#\s*pragma\s+unroll\s*\(?\s*1\s*\)?\s*", node_text(before).strip())
        )

    def loop_dim(
        self, node: tree_sitter.Node, var: str, trip: sympy.Expr, role: str
    ) -> sympy.Expr | None:
        """A counted loop's counter over the traffic model's dims: start + step * d, with
        d a new dim 0 .. trip-1 (T2); None for loops not of that form."""
        init = node.child_by_field_name("initializer")
        update = node.child_by_field_name("update")
        start_node = _init_value(init, var)
        step = self.loop_step(update, var) if update is not None else None
        if start_node is None or step is None or step[0] != "add":
            return None
        start = self.index_of(start_node)
        if start is None:
            return None
        dim = position_symbol(f"{role}_{len(self.dims)}")
        self.dims.append(Dim(dim, trip, role))
        return start + step[1] * dim

    def _s_for_range_loop(self, node: tree_sitter.Node) -> None:
        self.scopes.push()
        frame = self.push_frame(self.unknown_trip(node), node)
        try:
            self.stmt(node.child_by_field_name("body"))
        finally:
            self.pop_frame(frame)
            self.scopes.pop()

    def _s_while_statement(self, node: tree_sitter.Node) -> None:
        counted = self.counted_while(node)
        if counted is not None:
            trip = counted.trip
        elif whileloops.never_true(node.child_by_field_name("condition")):
            trip = sympy.Integer(1 if node.type == "do_statement" else 0)  # C13
        else:
            trip = self.unknown_trip(node)
        frame = self.push_frame(trip, node, counted.var if counted is not None else "")
        try:
            if node.type != "do_statement":
                self.expr(node.child_by_field_name("condition"))
            if counted is not None:  # inside the loop the counter is its mean, as in C2
                var = self.lookup(counted.var)
                if var is not None:
                    var.value, var.set_at = counted.mean, None
                    var.varying, var.index_value = True, counted.index
            self.stmt(node.child_by_field_name("body"))
            if node.type == "do_statement":
                self.expr(node.child_by_field_name("condition"))
        finally:
            self.pop_frame(frame)

    _s_do_statement = _s_while_statement

    def counted_while(self, node: tree_sitter.Node) -> CountedLoop | None:
        """Rule C7: a `while` / `do` loop that counts a local from a known start to a bound
        by one update per trip; None for any other loop (C4)."""
        body = node.child_by_field_name("body")
        if body is None or whileloops.continues(body):
            return None
        do = node.type == "do_statement"
        for test in whileloops.counted_tests(node.child_by_field_name("condition")):
            found = self.counted_test(test, body, do)
            if found is not None:
                return found
        return None

    def counted_test(
        self, test: whileloops.CountedTest, body: tree_sitter.Node, do: bool
    ) -> CountedLoop | None:
        var = self.lookup(test.var)
        if var is None or var.loaded or var.value is None or var.set_at != self.key:
            return None  # not a local whose value on entering the loop is known
        updates = whileloops.counter_updates(body, test.var)
        if test.update is not None:
            if updates:
                return None
            update = test.update
        elif len(updates) == 1 and whileloops.runs_every_trip(updates[0], body):
            update = updates[0]
        else:
            return None
        step = self.update_step(update, test.var)
        end = self.value(test.bound) if test.bound is not None else sympy.Integer(0)
        if step is None or end is None:
            return None
        if test.bound is not None and self.moved_in(body, self.identifiers([test.bound])):
            return None  # the bound moves inside the loop
        kind, amount = step
        loop = body.parent  # the `while` itself
        if self.track_lines and kind == "add" and not do and not test.pre and loop is not None:
            self.note_spread(loop, test.op, var.value, end, amount)
        start = zero_thread_position(var.value)
        end = zero_thread_position(end)
        # the first value tested: the start, or the start after one update when the update
        # runs before the test (`++i < n`, or a `do` loop's body)
        advanced = test.pre or (do and test.update is None)
        first = _advance(start, kind, amount) if advanced else start
        trip = _trip(test.op, first, end, kind, amount) if first is not None else None
        if trip is None:
            return None
        if do:
            trip = trip + 1  # the body runs once before the first test
        if trip.is_number:
            trip = sympy.Max(trip, 1 if do else 0)
        if kind != "add":
            return CountedLoop(trip, test.var, None, None)
        index = var.index_value if var.varying else var.value
        if index is not None:  # the counter over a new loop dim of the traffic model (T2)
            dim = position_symbol(f"loop_{len(self.dims)}")
            self.dims.append(Dim(dim, trip, "loop"))
            index = index + amount * dim
        return CountedLoop(trip, test.var, (start + end) / 2, index)

    def trip_count(
        self, node: tree_sitter.Node
    ) -> tuple[sympy.Expr, str | None, sympy.Expr | None]:
        """(trip count, loop variable, its mean value over the loop). The counter is the
        first name the initialiser sets that the condition tests and the update steps (rule
        C10: `for (int i = 64, c = 0; c < n; i++, c++)` counts `c`), else a name the update
        steps whose value on entering the loop is known (`for (; i < n; i++)`)."""
        init = node.child_by_field_name("initializer")
        cond = node.child_by_field_name("condition")
        update = node.child_by_field_name("update")
        starts = self.loop_starts(init)
        first_var = starts[0][0] if starts else None
        if cond is None or update is None:
            return self.unknown_trip(node), first_var, None
        for var, start in [*starts, *self.entering_counters(update, starts)]:
            if start is None:
                continue
            bound = self.loop_bound(cond, var)
            step = self.loop_step(update, var)
            if bound is not None and step is not None:
                return self.counted_for(node, var, start, bound, step)
        trip = self.unknown_trip(node)
        self.note_csr(node, init, trip)
        return trip, first_var, None

    def note_csr(self, node: tree_sitter.Node, init: tree_sitter.Node | None, trip) -> None:
        """Rule C11: a compressed-row range loop's trip, kept for resolve to bind from the
        arrays' allocations (D28) as their mean over the rows."""
        found = csr_range(node, _init_values(init))
        if found is None or not isinstance(trip, sympy.Symbol):
            return
        _var, rows, indexed = found
        sizes = {name: self.element_bytes(name) for name in (rows, *indexed)}
        arrays = tuple((name, sizes[name]) for name in indexed if sizes[name])
        if sizes[rows] and arrays:
            self.fv.csr_trips[trip.name] = ((rows, sizes[rows]), arrays)

    def element_bytes(self, name: str) -> int:
        """The element size of the pointer or array `name`, 0 when unknown."""
        var = self.lookup(name)
        if var is None or not var.type.pointer:
            return 0
        return max(0, var.type.deref().element_bytes)

    def counted_for(
        self,
        node: tree_sitter.Node,
        var: str,
        start: sympy.Expr,
        bound: tuple[str, sympy.Expr],
        step: tuple[str, sympy.Expr],
    ) -> tuple[sympy.Expr, str | None, sympy.Expr | None]:
        """Rule C2's trip count of a `for` loop whose counter, start, bound and step are
        known; unknown (C4) where the bound moves inside the loop."""
        cond = cast(tree_sitter.Node, node.child_by_field_name("condition"))
        update = node.child_by_field_name("update")
        op, end = bound
        kind, amount = step
        body = node.child_by_field_name("body")
        bound_names = self.identifiers([cond]) - {var}
        if body is not None and self.moved_in(body, bound_names):
            return self.unknown_trip(node), var, None  # the bound moves inside the loop
        if update is not None and "gridDim" in node_text(update):
            self.fv.grid_stride_loops += 1
        if self.track_lines and kind == "add":
            self.note_spread(node, op, start, end, amount)
        if kind == "add" and on_thread_position(end) and not on_thread_position(start):
            end = mean_thread_position(end)  # S27: `j < i` averaged over the threads
        start, end = zero_thread_position(start), zero_thread_position(end)
        trip = _trip(op, start, end, kind, amount)
        if self.track_lines and kind in ("mul", "div") and trip is not None:
            mean_value = threadshare.halving_mean(op, start, end, kind, amount, trip)
            if mean_value is not None:
                self.halving[node.id] = mean_value
            inverse = cycleshare.inverse_mean(kind, amount, start, trip)
            if inverse is not None:
                self.inverses[node.id] = inverse  # S50
        if trip is None:
            return self.unknown_trip(node), var, None
        if isinstance(trip, sympy.Integer):  # most loops: Max(n, 0) without sympy's Max
            trip = trip if trip.p >= 0 else sympy.Integer(0)
        elif trip.is_number:
            trip = sympy.Max(trip, 0)
        mean = (start + end) / 2 if kind == "add" else None
        if searchloop.is_linear_search(node, var):
            return (trip + 1) / 2, var, mean  # C15: a search stops halfway on average
        return trip, var, mean

    def entering_counters(
        self, update: tree_sitter.Node, starts: list[tuple[str, sympy.Expr | None]]
    ) -> list[tuple[str, sympy.Expr | None]]:
        """Rule C10: names the update steps that the initialiser does not set, each with its
        value on entering the loop where that is known as C7 knows a `while` counter's (a
        local set in this loop nest, not read from memory)."""
        named = {name for name, _ in starts}
        out: list[tuple[str, sympy.Expr | None]] = []
        pending: list[tree_sitter.Node] = [update]
        while pending:  # the update's terms left to right (`i += 2, k += 2`: i first)
            term = pending.pop()
            if term.type == "comma_expression":
                pending.extend(reversed(term.named_children))
                continue
            target = term.child_by_field_name(
                "argument" if term.type == "update_expression" else "left"
            )
            name = node_text(target) if target is not None else ""
            var = self.lookup(name) if target is not None and target.type == "identifier" else None
            if name in named or var is None or var.loaded or var.value is None:
                continue
            if var.set_at == self.key and self.update_step(term, name) is not None:
                named.add(name)
                out.append((name, var.value))
        return out

    def loop_starts(self, init: tree_sitter.Node | None) -> list[tuple[str, sympy.Expr | None]]:
        """Every name a `for` initialiser sets, in order, with its start value (None:
        unknown): `int i = 64, c = 0` and `e = 0, j = lo` set two."""
        out: list[tuple[str, sympy.Expr | None]] = []
        for name, value in _init_values(init):
            out.append((name, self.value(value)))
        return out

    def loop_bound(self, cond: tree_sitter.Node, var: str) -> tuple[str, sympy.Expr] | None:
        """The first comparison of `var` in a condition's `&&` terms, left to right."""
        pending: list[tree_sitter.Node | None] = [cond]
        while pending:
            term = pending.pop()
            if term is not None:
                term = _unparenthesized(term)
            if term is None or term.type != "binary_expression":
                continue
            if operator(term) == "&&":
                pending.append(term.child_by_field_name("right"))
                pending.append(term.child_by_field_name("left"))
                continue
            found = self.comparison_bound(term, var)
            if found is not None:
                return found
        return None

    def comparison_bound(self, cond: tree_sitter.Node, var: str) -> tuple[str, sympy.Expr] | None:
        op = operator(cond)
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if op not in ("<", "<=", ">", ">=", "!="):
            return None
        flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
        if _is_var(left, var):
            value = self.value(right)
            return (op, value) if value is not None else None
        if _is_var(right, var):
            value = self.value(left)
            return (flip[op], value) if value is not None else None
        if op == "!=":
            return None
        for side, other, how in ((left, right, op), (right, left, flip[op])):
            found = self.linear_bound(side, other, var)
            if found is not None:
                return how, found
        return None

    def linear_bound(
        self, side: tree_sitter.Node | None, other: tree_sitter.Node | None, var: str
    ) -> sympy.Expr | None:
        """Rule C9: a test of `a*v + b` against `e`, with `a` a positive constant or a
        positive size (`2*mb < j`, `i*stride + tid < n`), tests `v` against `(e - b)/a`."""
        counter = self.lookup(var)
        if side is None or other is None or counter is None or var not in self._names_in(side):
            return None
        saved = counter.value, counter.loaded, counter.varying
        counter.value, counter.loaded, counter.varying = _PROBE, False, False
        try:
            expr = self.value(side)
        finally:
            counter.value, counter.loaded, counter.varying = saved
        end = self.value(other)
        if expr is None or end is None or _PROBE in end.free_symbols:
            return None
        expr = sympy.expand(expr)
        slope = expr.diff(_PROBE)
        if _PROBE in slope.free_symbols or not slope.is_positive:
            return None
        return (end - expr.subs(_PROBE, 0)) / slope

    def loop_step(self, update: tree_sitter.Node, var: str) -> tuple[str, sympy.Expr] | None:
        """The step of `var` in the first of an update's comma terms that changes it."""
        pending: list[tree_sitter.Node | None] = [update]
        while pending:
            term = pending.pop()
            if term is None:
                continue
            if term.type == "comma_expression":
                pending.append(term.child_by_field_name("right"))
                pending.append(term.child_by_field_name("left"))
                continue
            found = self.update_step(term, var)
            if found is not None:
                return found
        return None

    def update_step(self, update: tree_sitter.Node, var: str) -> tuple[str, sympy.Expr] | None:
        if update.type == "update_expression":
            if not _is_var(update.child_by_field_name("argument"), var):
                return None
            return (
                ("add", sympy.Integer(1))
                if "++" in node_text(update)
                else ("add", sympy.Integer(-1))
            )
        if update.type == "assignment_expression":
            left = update.child_by_field_name("left")
            if not _is_var(left, var):
                # `k = j++`: the right side's own step of `var` (C10)
                right = update.child_by_field_name("right")
                if (
                    right is not None
                    and right.type == "update_expression"
                    and operator(update) == "="
                ):
                    return self.update_step(right, var)
                return None
            op = operator(update)
            right = update.child_by_field_name("right")
            amount = self.value(right)
            if op == "=" and right is not None and right.type == "binary_expression":
                inner_op = operator(right)
                rl, rr = right.child_by_field_name("left"), right.child_by_field_name("right")
                other = rr if _is_var(rl, var) else (rl if _is_var(rr, var) else None)
                if other is None:
                    return None
                op, amount = inner_op + "=", self.value(other)
            if amount is None:
                return None
            amount = zero_thread_position(amount)
            if op in ("<<=", ">>="):
                # a shift by 64 or more is undefined in C; 2**amount is built only for a shift
                # (a huge `+=` step, `n -= 1317624576693539401L`, must not become a power)
                if amount.is_number and not (amount.is_Integer and 0 <= amount < 64):
                    return None
                return ("mul" if op == "<<=" else "div"), 2**amount
            steps = {"+=": "add", "-=": "add", "*=": "mul", "/=": "div"}
            if op not in steps:
                return None
            return steps[op], -amount if op == "-=" else amount
        return None


def method_class(callee) -> tuple[str, list[str]] | None:
    """(class name, its template parameters) of a method definition: defined in the class
    body, or out of line as `Class<T>::method`; None for a free function."""
    node = callee.node.parent
    if node is not None and node.type == "template_declaration":
        node = node.parent
    if node is not None and node.type == "field_declaration_list":
        owner = node.parent
        name = owner.child_by_field_name("name") if owner is not None else None
        if name is None:
            return None
        return node_text(name).split("<")[0].strip(), template_params(owner)
    if "::" in callee.name:
        owner_text = callee.name.rsplit("::", 1)[0].split("::")[-1]
        return owner_text.split("<")[0].strip(), list(callee.template_params)
    return None


_AMBIGUOUS = object()  # `_value_tree`: a `(name) + x` read as a cast; see value_unambiguous
_PARENTHESIZED_NAME = re.compile(r"\(\s*([A-Za-z_]\w*)\s*\)")


def _uncast(node: tree_sitter.Node) -> tree_sitter.Node:
    """The operand under parentheses and casts, C's and C++'s (`reinterpret_cast<T*>(p)`)."""
    while True:
        if node.type in ("parenthesized_expression", "cast_expression") and node.named_children:
            node = node.child_by_field_name("value") or node.named_children[-1]
            continue
        if node.type == "call_expression" and callee_name(node) in _CASTS:
            args = node.child_by_field_name("arguments")
            if args is not None and len(args.named_children) == 1:
                node = args.named_children[0]
                continue
        return node


def _init_values(init: tree_sitter.Node | None) -> list[tuple[str, tree_sitter.Node | None]]:
    """The names a `for` initialiser sets and their start values (`int i = s, j = t`,
    `i = s, j = t`), in order; a declarator without a value is left out."""
    out: list[tuple[str, tree_sitter.Node | None]] = []
    if init is None:
        return out
    if init.type == "declaration":
        for decl in init.children_by_field_name("declarator"):
            if decl.type == "init_declarator":
                name = node_text(cast(tree_sitter.Node, decl.child_by_field_name("declarator")))
                out.append((name, decl.child_by_field_name("value")))
        return out
    pending: list[tree_sitter.Node] = [init]
    while pending:  # a comma chain nests to the left: walk it without recursion
        term = pending.pop()
        if term.type == "comma_expression":
            right, left = term.child_by_field_name("right"), term.child_by_field_name("left")
            pending.extend(t for t in (right, left) if t is not None)
        elif term.type == "assignment_expression" and operator(term) == "=":
            left = term.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                out.append((node_text(left), term.child_by_field_name("right")))
    return out


def _init_value(init: tree_sitter.Node | None, var: str | None = None) -> tree_sitter.Node | None:
    """The start value of a `for` initialiser (`int i = s` or `i = s`): `var`'s, or the
    first name's."""
    for name, value in _init_values(init):
        if var is None or name == var:
            return value
    return None


def as_integer(value: object) -> object:
    """A sympy Integer as int; anything else as it is."""
    return int(value) if isinstance(value, sympy.Integer) else value


def _unparenthesized(node: tree_sitter.Node) -> tree_sitter.Node:
    """`((x))` -> `x` (a parenthesized expression's first named child, as `base_of`)."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


#: statement kinds whose handler walks no statement: `flat_statements` calls it
_FLAT_LEAVES = frozenset(
    {
        "expression_statement",
        "return_statement",
        "declaration",
        "comment",
        "preproc_call",
        "preproc_def",
        "preproc_include",
        "break_statement",
        "continue_statement",
        "goto_statement",
    }
)
_COMPOUND = object()  # `_value_leaf`: the node has operands


#: C7: statements whose parts run some of the time (or many times): an assignment in
#: them is no straight-code definition
_CONDITIONAL = frozenset(
    {
        "if_statement",
        "switch_statement",
        "case_statement",
        "conditional_expression",
        "for_statement",
        "for_range_loop",
        "while_statement",
        "do_statement",
        "binary_expression",  # `c && (n -= 2)`
    }
)
_BODIES = frozenset({"function_definition", "lambda_expression"})


def _value_or_remainder(how: tuple, operands: list[sympy.Expr]) -> sympy.Expr | None:
    """`apply_value`, with `a % b` of a symbolic `a` (`threadIdx.x % 16`, `idx % n`) kept as
    sympy's Mod: an index's remainder has a known range (rule T11), where unknown it had none."""
    value = _apply_value(how, operands)
    if value is None and how == ("binary", "%") and not operands[1].is_zero:
        return sympy.Mod(*operands, evaluate=False)  # its eval asks costly assumptions
    return value


_VALUE_OPERATIONS = frozenset(
    {
        "parenthesized_expression",
        "cast_expression",
        "binary_expression",
        "unary_expression",
        "call_expression",
    }
)


#: OpenMP's thread queries as the CUDA builtins they stand for in a CUDA-style region (rule
#: U3): a team is a block, its threads the block's
OMP_QUERIES = {
    "omp_get_thread_num": "threadIdx.x",
    "omp_get_team_num": "blockIdx.x",
    "omp_get_num_threads": "blockDim.x",
    "omp_get_num_teams": "gridDim.x",
}


#: (node kind, descendant count, text) -> `_names_of`: a text seen before (the same index in
#: a -hip copy of a -cuda kernel, a helper inlined by many kernels) has the same names. The
#: kind's id is its grammar's (one text can parse differently under the CUDA and C++ grammars)
_NAMES_BY_TEXT: SessionRecentTexts[tuple[frozenset[str], tuple[str, ...] | None]] = (
    SessionRecentTexts(4_000_000)
)


#: (node kind, descendant count, text) -> `token_text`: nine in ten indices' texts were met
#: before (a -hip copy's, a helper's inlined by many kernels), and their walk is the cost
_TOKENS_BY_TEXT: SessionRecentTexts[str] = SessionRecentTexts(2_000_000)


_T = TypeVar("_T")


def _by_text(
    memo: SessionRecentTexts[_T], walk: Callable[[tree_sitter.Node], _T], node: tree_sitter.Node
) -> _T:
    """`walk(node)`, remembered by (the node's kind, its node count, its text)."""
    text = node.text or b""
    key = (node.kind_id, node.descendant_count, text)
    return memo.get(key, len(text), partial(walk, node))


def _tokens_by_text(node: tree_sitter.Node) -> str:
    """`token_text`, remembered by the expression's text."""
    return _by_text(_TOKENS_BY_TEXT, token_text, node)


def _names_by_text(node: tree_sitter.Node) -> tuple[frozenset[str], tuple[str, ...] | None]:
    """`_names_of`, remembered by the expression's text (its walk is the cost)."""
    return _by_text(_NAMES_BY_TEXT, _names_of, node)


def _names_of(node: tree_sitter.Node) -> tuple[frozenset[str], tuple[str, ...] | None]:
    """`KernelLowering._names_in`'s and `_read_names`' walk, one for both: the names written
    in an expression (`threadIdx.x` and `omp_get_thread_num()` as thread axes, not walked
    into); and every identifier anywhere in it (in no particular order: `_is_loaded` asks
    whether any is loaded), or None when a subscript is inside."""
    names: set[str] = set()
    read: list[str] = []
    subscripted = False  # then only the names' part of the tree is left to walk
    stack = [(node, True)]  # (node, whether it is in the names' part)
    while stack:
        n, named = stack.pop()
        kind = n.type
        if kind == "identifier":  # a leaf
            text = node_text(n)
            if named:
                names.add(text)
            read.append(text)
            continue
        if kind == "subscript_expression":
            subscripted = True
        if named:
            if kind == "number_literal":
                continue  # a leaf: no names
            if kind == "field_expression" and node_text(n.named_children[0]) in BUILTIN_VECTORS:
                names.add(" ".join(node_text(n).split()))  # `threadIdx.x`: which thread axis
                named = False
            elif kind == "call_expression" and (query := _omp_query(n)) is not None:
                names.add(query)  # omp_get_thread_num(): threadIdx.x
                named = False
        if named or not subscripted:
            stack.extend([(child, named) for child in n.named_children])
    return frozenset(names), None if subscripted else tuple(read)


def _omp_query(node: tree_sitter.Node) -> str | None:
    """The builtin an argument-less `omp_get_thread_num()` & co. stands for, else None."""
    function = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if function is None or function.type != "identifier" or args is None or args.named_children:
        return None
    return OMP_QUERIES.get(node_text(function))


@lru_cache(maxsize=4096)
def _small_expression(expr: sympy.Basic) -> bool:
    """At most MAX_VALUE_DEPTH deep and MAX_VALUE_SIZE nodes as a tree (a subexpression
    shared n times counted n times: sympy's recursive walks visit it n times). Measured over
    the shared graph, each node once, so that an exponentially large tree costs nothing.
    Kept per value (a structural measure, keyed by sympy's own equality): indices and trip
    counts are valued again at each access and inlined call, mostly to the same values."""
    measured: dict[int, tuple[int, int]] = {}  # id -> (height, tree size)
    stack: list[tuple[sympy.Basic, bool]] = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if not ready:
            if key in measured:
                continue
            if not node.args:
                measured[key] = (1, 1)
                continue
            stack.append((node, True))
            stack.extend((arg, False) for arg in node.args)
            continue
        parts = [measured[id(arg)] for arg in node.args]
        height = 1 + max(h for h, _ in parts)
        size = 1 + sum(n for _, n in parts)
        if height > MAX_VALUE_DEPTH or size > MAX_VALUE_SIZE:
            return False
        measured[key] = (height, size)
    return True


def unwrap_declarator(node: tree_sitter.Node | None) -> tuple[str, int, bool]:
    """`*p`, `a[N][M]`, `&r` -> (name, levels of pointer/array, is an array)."""
    stars, is_array = 0, False
    while node is not None:
        if node.type == "pointer_declarator":
            stars += 1
        elif node.type == "array_declarator":
            stars += 1
            is_array = True
        elif node.type in ("identifier", "field_identifier"):
            return node_text(node), stars, is_array
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            ids = [c for c in node.named_children if c.type == "identifier"]
            return (node_text(ids[0]) if ids else ""), stars, is_array
        node = nxt
    return "", stars, is_array


def _is_var(node: tree_sitter.Node | None, var: str) -> bool:
    while node is not None and node.type in ("parenthesized_expression", "cast_expression"):
        node = (
            node.child_by_field_name("value")
            if node.type == "cast_expression"
            else (node.named_children[0] if node.named_children else None)
        )
    return node is not None and node.type == "identifier" and node_text(node) == var


def _advance(start: sympy.Expr, kind: str, amount: sympy.Expr) -> sympy.Expr | None:
    """A counter's value after one update of the given kind (C integer division for numbers)."""
    if kind == "add":
        return start + amount
    if kind == "mul":
        return start * amount
    if start.is_Integer and amount.is_Integer and amount != 0:
        return sympy.Integer(int(start) // int(amount)) if start >= 0 else None
    return start / amount if amount != 0 else None


def _line_trip(frame: Frame) -> sympy.Expr:
    return frame.trip if frame.line_trip is None else frame.line_trip


def _trip(
    op: str, start: sympy.Expr, end: sympy.Expr, kind: str, amount: sympy.Expr
) -> sympy.Expr | None:
    if kind == "div" and start == 0 and end == 0 and op in (">", "!="):
        return sympy.Integer(0)  # `for (k = 0; k > 0; k >>= 1)`: the first test fails
    if all(isinstance(v, sympy.Integer) for v in (start, end, amount)):
        counted = integer_trip(op, int(start), int(end), kind, int(amount))
        if counted is not None:
            return sympy.Integer(counted)
    trip = closed_form_trip(op, start, end, kind, amount)
    if trip is not None and trip.is_number and not (trip.is_real and trip.is_finite):
        return None  # a logarithm of 0 or less (`n >>= 1` from n = 0): no count
    return trip


def closed_form_trip(
    op: str, start: sympy.Expr, end: sympy.Expr, kind: str, amount: sympy.Expr
) -> sympy.Expr | None:
    """Trip count as a sympy expression: ceiling of the span over the step, or of its log."""
    if kind == "add":
        if amount == 0:
            return None
        if op in ("<", "!=") and (amount.is_positive or not amount.is_number):
            return _ceiling_ratio(end - start, amount)
        if op == "<=":
            return _ceiling_ratio(end - start + 1, amount)
        if op in (">", "!=") and amount.is_negative:
            return _ceiling_ratio(start - end, -amount)
        if op == ">=" and amount.is_negative:
            return _ceiling_ratio(start - end + 1, -amount)
        if op == ">" and not amount.is_number:
            return None
        return None
    if kind == "mul" and op in ("<", "<=", "!="):
        if start == 0:
            return None
        span = sympy.log(end / start, 2) / sympy.log(amount, 2)
        return sympy.floor(span) + 1 if op == "<=" else sympy.ceiling(span)
    if kind == "div" and op in (">", ">=", "!="):
        if end == 0 and op in (">", "!="):
            return sympy.floor(sympy.log(start, 2) / sympy.log(amount, 2)) + 1
        if end == 0:
            return None
        span = sympy.log(start / end, 2) / sympy.log(amount, 2)
        return sympy.floor(span) + 1 if op == ">=" else sympy.ceiling(span)
    return None


def _ceiling_ratio(span: sympy.Expr, step: sympy.Expr) -> sympy.Expr:
    """ceiling(span / step); a unit step over an integer polynomial, or a number, skips
    sympy's slow evaluation of the ceiling."""
    if step == 1 and _integer_polynomial(span):
        return span
    ratio = span / step
    if ratio.is_Rational:
        return sympy.Integer(-(-ratio.p // ratio.q))
    if ratio.is_number:
        return sympy.ceiling(ratio)
    # Symbolic: pull integer terms out as sympy's evaluation would (ceiling(n/4 - 1) is
    # ceiling(n/4) - 1), without its millisecond of assumption queries per call.
    if _integer_polynomial(ratio):
        return ratio
    terms = sympy.Add.make_args(ratio)
    whole = [t for t in terms if _integer_polynomial(t)]
    rest = [t for t in terms if not _integer_polynomial(t)]
    return sympy.Add(*whole) + sympy.ceiling(sympy.Add(*rest), evaluate=False)


def _integer_polynomial(expr: sympy.Expr) -> bool:
    pending = [expr]  # a stack, not recursion: values are small (N4), but cheaply so
    while pending:
        expr = pending.pop()
        if expr.is_Integer or (expr.is_Symbol and expr.is_integer):
            continue
        if expr.is_Add or expr.is_Mul:
            pending.extend(expr.args)
            continue
        if expr.is_Pow:
            base, exponent = expr.args
            natural = (exponent.is_Integer and exponent >= 0) or (
                exponent.is_Symbol and exponent.is_integer and exponent.is_nonnegative
            )
            if natural:
                pending.append(base)
                continue
        return False
    return True


def integer_trip(op: str, start: int, end: int, kind: str, amount: int) -> int | None:
    """The trip count of a loop whose bounds and step are integers, in integer arithmetic:
    the same values as `closed_form_trip` without sympy's slow exact ceiling of logs."""
    if kind == "add":
        if amount > 0 and op in ("<", "!=", "<="):
            span = end - start + (1 if op == "<=" else 0)
        elif amount < 0 and op in (">", "!=", ">="):
            span = start - end + (1 if op == ">=" else 0)
            amount = -amount
        else:
            return None
        return max(0, -(-span // amount))
    if amount < 2 or start <= 0 or end < 0 or (end == 0 and kind == "mul"):
        return None
    if kind == "mul" and op in ("<", "<=", "!="):
        low, high, inclusive = start, end, op == "<="
    elif kind == "div" and op in (">", ">=", "!="):
        if end == 0:
            if op == ">=":
                return None
            low, high, inclusive = 1, start, True
        else:
            low, high, inclusive = end, start, op == ">="
    else:
        return None
    # inclusive: #{k >= 0 : low * amount^k <= high}; else the least k with low * amount^k >= high
    count, value = 0, low
    while (value <= high) if inclusive else (value < high):
        value *= amount
        count += 1
    return count


@lru_cache(maxsize=8192)
def _literal_type(text: str) -> CType:
    """The type of a number literal: its text decides (asked once per distinct text)."""
    text = text.lower()
    if text.startswith("0x"):
        return INT
    if text.endswith("f") or text.endswith("f16"):
        return FLOAT
    if _FLOAT_LITERAL.match(text) or text.endswith("."):
        return DOUBLE
    return LONG if text.endswith(("l", "ll", "ul", "ull")) else INT


@lru_cache(maxsize=8192)
def _number(text: str) -> sympy.Expr | None:
    t = text.strip().rstrip("uUlLfF").strip()
    t = t.replace("'", "")
    if t.startswith(("-", "+")):  # signs, however many: each strips like a number's text
        negative = False
        while t.startswith(("-", "+")):
            negative ^= t[0] == "-"
            t = t[1:].strip().rstrip("uUlLfF").strip()
        inner = _number(t)
        return None if inner is None else (-inner if negative else inner)
    try:
        if t.lower().startswith("0x"):
            return sympy.Integer(int(t, 16))
        if t.lower().startswith("0b"):
            return sympy.Integer(int(t, 2))
        if re.fullmatch(r"[0-9]+", t):
            return sympy.Integer(int(t))
        if re.fullmatch(r"[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?|[0-9]+\.", t):
            value = float(t)
            return sympy.Integer(int(value)) if value.is_integer() else sympy.Float(value)
    except ValueError:
        return None
    return None
