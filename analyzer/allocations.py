"""What host code allocates for each array a kernel or region touches (rule D28).

The launch traffic model (features/traffic.py) places each array's footprint from its
index expressions; where those cannot be placed (a data-dependent offset, a size nobody
bound) it can overshoot the array itself. Host code often shows the array's size at the
allocation (`cudaMalloc(&d_a, n * sizeof(float))`, `new float[n]`, `map(to: a[0:n])`): no
kernel touches more than that (rule T15). Only one allocation reaching the launch counts:
a pointer assigned twice (a reallocation, a swap, pointer arithmetic) is unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy
import tree_sitter
from roofcast.analyzer.bodyquery import BodyQueryPart
from roofcast.analyzer.hostvalues import HostScope, caller_bindings
from roofcast.analyzer.index import function_name, parameters
from roofcast.analyzer.parsing import (
    enclosing_function,
    expression_node,
    node_text,
)
from roofcast.analyzer.session import SessionNodeCache

if TYPE_CHECKING:
    from roofcast.analyzer.callsites import CallSites


@dataclass(frozen=True)
class Allocation:
    """An array's size as host code allocated it: bytes, or elements of the array's own
    type (`new T[n]`, `T a[n]`, a map section: the traffic model knows each access's
    element size)."""

    size: sympy.Expr
    elements: bool = False


#: allocators whose first argument receives the pointer, and where their size is
_OUT_ALLOCATORS = {
    "cudaMalloc": 1,
    "cudaMallocManaged": 1,
    "cudaMallocHost": 1,
    "cudaHostAlloc": 1,
    "hipMalloc": 1,
    "hipMallocManaged": 1,
    "hipHostMalloc": 1,
    "posix_memalign": 2,
}
#: allocators that return the pointer, and where their size is
_RETURNING = {"malloc": 0, "omp_target_alloc": 0, "_mm_malloc": 0, "aligned_alloc": 1}
_CASTS = {"static_cast", "reinterpret_cast", "const_cast"}
_NULL = {"NULL", "nullptr", "0"}
#: callers followed up from the launching function for a pointer parameter
MAX_ALLOCATION_LEVELS = 2


_PART = BodyQueryPart(
    "allocations",
    """
(init_declarator declarator: (pointer_declarator) value: (_)) @init
(init_declarator declarator: (identifier)
  value: [(call_expression) (cast_expression) (new_expression)]) @init
(assignment_expression left: (identifier)) @assign
(update_expression argument: (identifier)) @assign
(declaration declarator: (array_declarator) @array)
((call_expression function: (_) @function) @call (#match? @function "Malloc|HostAlloc|memalign"))
""",
)


#: name -> [(byte offset, what): an allocation, or None for any other definition]
Events = dict[str, list[tuple[int, tuple[str, tree_sitter.Node] | None]]]
_EVENTS = SessionNodeCache(256)


def _events(func: tree_sitter.Node, grammar: str) -> Events:
    """Every definition of a pointer or array in a function's body, memoised per body (one
    host `main` launches many kernels)."""
    body = func.child_by_field_name("body")
    if body is None:
        return {}
    return _EVENTS.get(body, lambda: _collect(body, grammar), grammar)


def _collect(body: tree_sitter.Node, grammar: str) -> Events:
    found = _PART.captures(body, grammar)
    events: Events = {}

    def note(name: str, at: int, what: tuple[str, tree_sitter.Node] | None) -> None:
        events.setdefault(name, []).append((at, what))

    for init in found.get("init", []):
        declarator = init.child_by_field_name("declarator")
        value = init.child_by_field_name("value")
        name, levels = _declared(declarator)
        if name is None or value is None:
            continue
        if node_text(value).strip() in _NULL:
            continue  # `float *d = NULL;` then `cudaMalloc(&d, ...)`: no definition yet
        note(name, init.start_byte, _returned(value) if levels == 1 else None)
    for assign in found.get("assign", []):
        left = assign.child_by_field_name("left") or assign.child_by_field_name("argument")
        if left is None or left.type != "identifier":
            continue
        right = assign.child_by_field_name("right")
        how = assign.child_by_field_name("operator")
        plain = how is not None and node_text(how) == "="
        if plain and right is not None and node_text(right).strip() in _NULL:
            continue
        what = _returned(right) if plain and right is not None else None
        note(node_text(left), assign.start_byte, what)
    for array in found.get("array", []):
        sizes: list[tree_sitter.Node] = []
        inner: tree_sitter.Node | None = array
        while inner is not None and inner.type == "array_declarator":
            size = inner.child_by_field_name("size")
            if size is None:
                break  # `T a[] = {...}`: the list's length, not followed
            sizes.append(size)
            inner = inner.child_by_field_name("declarator")
        if inner is not None and inner.type == "identifier" and sizes:
            note(node_text(inner), array.start_byte, ("array", array))
    for call in found.get("call", []):
        name = _callee(call)
        position = _OUT_ALLOCATORS.get(name)
        args = call.child_by_field_name("arguments")
        items = list(args.named_children) if args is not None else []
        if position is None or len(items) <= position:
            continue
        target = _strip(items[0])
        if target is None or target.type != "pointer_expression" or operator_of(target) != "&":
            continue
        pointer = target.child_by_field_name("argument")
        if pointer is not None and pointer.type == "identifier":
            note(node_text(pointer), call.start_byte, ("bytes", items[position]))
    for listed in events.values():
        listed.sort(key=lambda item: item[0])
    return events


def operator_of(node: tree_sitter.Node) -> str:
    """The unary operator of a pointer expression (`&x`, `*x`)."""
    return node.children[0].type if node.children else ""


def _declared(declarator: tree_sitter.Node | None) -> tuple[str | None, int]:
    """The name a declarator declares and how many pointer levels it has (`**p`: 2)."""
    levels = 0
    node = declarator
    for _ in range(8):
        if node is None or node.type == "identifier":
            break
        if node.type == "pointer_declarator":
            levels += 1
        elif node.type != "reference_declarator":
            return None, 0  # an array of pointers, a function pointer: not followed
        node = node.child_by_field_name("declarator") or (
            node.named_children[-1] if node.named_children else None
        )
    if node is None or node.type != "identifier":
        return None, 0
    return node_text(node), levels


def _strip(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """`(T*)x`, `(x)`, `static_cast<T*>(x)` -> x."""
    for _ in range(16):
        if node is None:
            return None
        if node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        elif node.type == "cast_expression":
            node = node.child_by_field_name("value")
        elif node.type == "call_expression" and _callee(node) in _CASTS:
            args = node.child_by_field_name("arguments")
            node = args.named_children[0] if args is not None and args.named_children else None
        else:
            return node
    return None


def _callee(call: tree_sitter.Node) -> str:
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "template_function":
        fn = fn.child_by_field_name("name")
    return node_text(fn).split("::")[-1] if fn is not None else ""


def _returned(value: tree_sitter.Node) -> tuple[str, tree_sitter.Node] | None:
    """What an initialiser allocates: ("bytes", size) for malloc & co., ("calloc", call),
    ("new", its declarator) for `new T[n]`; None for anything else."""
    node = _strip(value)
    if node is None:
        return None
    if node.type == "new_expression":
        declarator = node.child_by_field_name("declarator")
        if declarator is not None and declarator.type == "new_declarator":
            return "new", declarator
        return None
    if node.type != "call_expression":
        return None
    name = _callee(node)
    args = node.child_by_field_name("arguments")
    items = list(args.named_children) if args is not None else []
    if name == "calloc" and len(items) == 2:
        return "calloc", node
    position = _RETURNING.get(name)
    if position is None or len(items) <= position:
        return None
    return "bytes", items[position]


#: an allocation's size, valued once however many launches it reaches
_SIZES = SessionNodeCache(1024)


def _sized(
    what: tuple[str, tree_sitter.Node],
    func: tree_sitter.Node,
    grammar: str,
    at: int,
    calls: CallSites | None,
) -> Allocation | None:
    """The size of an allocation in `func`, as host values have it where it is made."""
    outer = caller_bindings(func, calls, placeholders=True, members=True)
    scope = HostScope(func, grammar, outer, placeholders=True, library=calls)
    return _value(what, scope, at)


def _value(what: tuple[str, tree_sitter.Node], scope: HostScope, at: int) -> Allocation | None:
    """The size of one allocation, valued as host values are (rules D8-D24)."""
    kind, node = what
    if kind == "bytes":
        value = scope.value(node, at)
        return Allocation(value) if value is not None else None
    if kind == "calloc":
        args = node.child_by_field_name("arguments")
        items = list(args.named_children) if args is not None else []
        values = [scope.value(item, at) for item in items]
        if len(values) != 2 or values[0] is None or values[1] is None:
            return None
        return Allocation(values[0] * values[1])
    total: sympy.Expr = sympy.Integer(1)
    inner: tree_sitter.Node | None = node
    for _ in range(8):  # `new T[n][m]`, `T a[n][m]`: the product of the lengths
        if inner is None or inner.type not in ("new_declarator", "array_declarator"):
            break
        size = inner.child_by_field_name("length" if kind == "new" else "size")
        value = scope.value(size, at) if size is not None else None
        if value is None:
            return None
        total *= value
        if kind == "new":
            inner = next((c for c in inner.named_children if c.type == "new_declarator"), None)
        else:
            inner = inner.child_by_field_name("declarator")
    return Allocation(total, elements=True)


def _base(arg: tree_sitter.Node | None) -> str | None:
    """The pointer an argument passes: `d_a`, `(float*)d_a`, `d_a + off`, `&d_a[off]` all
    point into d_a's allocation, which bounds what the callee can reach through them."""
    node = _strip(arg)
    for _ in range(16):
        if node is None:
            return None
        if node.type == "identifier":
            return node_text(node)
        if node.type == "binary_expression" and node_text(node).find("+") >= 0:
            node = _strip(node.child_by_field_name("left"))
        elif node.type == "pointer_expression" and operator_of(node) == "&":
            inner = _strip(node.child_by_field_name("argument"))
            if inner is None or inner.type != "subscript_expression":
                return None
            node = _strip(inner.child_by_field_name("argument"))
        else:
            return None
    return None


def allocation_of(
    name: str,
    func: tree_sitter.Node,
    grammar: str,
    at: int,
    calls: CallSites | None,
    levels: int = MAX_ALLOCATION_LEVELS,
) -> Allocation | None:
    """The one allocation of the pointer or array `name` that reaches byte `at` of `func`:
    its own, or for a parameter never defined in `func`, its first caller's argument's (up
    to `levels` callers); None when there is none, or more than one definition."""
    events = [e for e in _events(func, grammar).get(name, []) if e[0] < at]
    if len(events) > 1:
        return None  # reallocated, swapped, moved: which one reaches the launch is unclear
    if events:
        defined_at, what = events[0]
        if what is None:
            return None
        # keyed by the call sites object itself, not its id: an id is reused once the object
        # is freed, and the entry keeps the object (and so its id) alive
        return _SIZES.get(what[1], lambda: _sized(what, func, grammar, defined_at, calls), calls)
    if levels <= 0 or calls is None:
        return None
    names = [p.name for p in parameters(func)]
    if name not in names:
        return None
    position = names.index(name)
    callee = (function_name(func) or "").split("::")[-1]
    for call, call_grammar in calls.get(callee, []):
        caller = enclosing_function(call.parent)
        args = call.child_by_field_name("arguments")
        if caller is None or caller is func or args is None:
            continue
        items = list(args.named_children)
        if len(items) > len(names):
            continue  # another function of that name
        passed = _base(items[position]) if position < len(items) else None
        if passed is None:
            return None
        return allocation_of(passed, caller, call_grammar, call.start_byte, calls, levels - 1)
    return None


def launch_allocations(
    params: list[tuple[str, str]],
    args: list[tree_sitter.Node],
    host_fn: tree_sitter.Node,
    grammar: str,
    at: int,
    calls: CallSites | None,
) -> dict[str, Allocation]:
    """A kernel's pointer parameters (name, declared type) -> the allocation the launch's
    argument points into (rule D28). Pointers to pointers are left out: what they reach
    lies in other allocations."""
    out: dict[str, Allocation] = {}
    for (name, type_text), arg in zip(params, args, strict=False):
        if not name or type_text.count("*") + type_text.count("[") != 1:
            continue
        passed = _base(arg)
        if passed is None:
            continue
        found = allocation_of(passed, host_fn, grammar, at, calls)
        if found is not None:
            out[name] = found
    return out


_SECTION = re.compile(r"(?<![\w.>])([A-Za-z_]\w*)\s*\[([^\]:]*):([^\]]+)\](\s*\[)?")
_WORD = re.compile(r"[A-Za-z_]\w*")


def region_allocations(
    pragmas: list[str],
    statement_text: str,
    func: tree_sitter.Node,
    grammar: str,
    at: int,
    calls: CallSites | None,
) -> dict[str, Allocation]:
    """An OpenMP region's arrays -> their size: a one-dimensional map section's length
    (`map(to: a[0:n])`, the region's own clause first, then the target data regions'
    around it), else the allocation of the name the region uses (D28)."""
    scope: HostScope | None = None
    out: dict[str, Allocation] = {}
    seen: set[str] = set()
    for text in pragmas:
        if "map" not in text:
            continue
        for match in _SECTION.finditer(text):
            name, _low, length, more = match.groups()
            if name in seen:
                continue
            seen.add(name)
            if more:
                continue  # a section of several dimensions: its rows are not followed
            if scope is None:
                outer = caller_bindings(func, calls, placeholders=True, members=True)
                scope = HostScope(func, grammar, outer, placeholders=True, library=calls)
            value_node = expression_node(length)
            value = scope.value(value_node, at) if value_node is not None else None
            if value is not None:
                out[name] = Allocation(value, elements=True)
    events = _events(func, grammar)
    pointers = {p.name for p in parameters(func) if p.is_pointer}
    for word in set(_WORD.findall(statement_text)):
        if word in seen or word not in events and word not in pointers:
            continue
        found = allocation_of(word, func, grammar, at, calls)
        if found is not None:
            out[word] = found
    return out
