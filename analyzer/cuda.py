"""CUDA kernels: every `__global__` function (templates too), its parameters, signature,
the `__device__` functions it reaches (networkx call graph) and host launch sites."""

from __future__ import annotations

import re
from functools import partial

import networkx as nx
import sympy
import tree_sitter
from roofcast.analyzer.allocations import Allocation, launch_allocations
from roofcast.analyzer.callerloop import second_trip_parameters
from roofcast.analyzer.callsites import CallSites
from roofcast.analyzer.context import Context
from roofcast.analyzer.functionscan import scan_function
from roofcast.analyzer.hostvalues import (
    HostScope,
    bind_call,
    caller_bindings,
    device_allocations,
    launch_geometry,
)
from roofcast.analyzer.index import FileIndex, FunctionInfo, parameters, template_params
from roofcast.analyzer.model import KernelIR, LaunchSite, Param
from roofcast.analyzer.parsing import enclosing_function, node_text
from roofcast.analyzer.session import SessionNodeCache

MAX_HOST_CONTEXT_CHARS = 6000


def signature(name: str, params: list[Param]) -> str:
    return f"{name}({', '.join(p.type for p in params)})"


def callees(func: tree_sitter.Node, grammar: str) -> list[str]:
    """Names the function's body calls, in source order."""
    body = func.child_by_field_name("body")
    if body is None:
        return []
    start, end = body.start_byte, body.end_byte
    names = []
    for node in scan_function(func, grammar).callees:
        if not start <= node.start_byte < end:
            continue  # a call in the declarator (a default argument, decltype)
        if node.type == "template_function":
            node = node.child_by_field_name("name") or node
        names.append(node_text(node).split("::")[-1])
    return names


def device_closure(kernel: FunctionInfo, context: Context) -> list[FunctionInfo]:
    """`__device__` (or plain, inlinable) functions reachable from the kernel, in BFS order."""
    graph = nx.DiGraph()
    graph.add_node(kernel.name)
    frontier = [kernel]
    infos: dict[str, FunctionInfo] = {}
    while frontier:
        fn = frontier.pop(0)
        if fn.callees is None:  # shared by every kernel of the file that reaches fn
            fn.callees = callees(fn.node, context.grammar)
        for callee in fn.callees:
            target = context.callable(callee, -1)
            if target is None or target.is_kernel:
                continue
            graph.add_edge(fn.name, target.name)
            if target.name not in infos:
                infos[target.name] = target
                frontier.append(target)
    order = [n for n in nx.bfs_tree(graph, kernel.name) if n != kernel.name]
    return [infos[n] for n in order if n in infos]


def launch_sites(index: FileIndex) -> list[tuple[str, LaunchSite, tree_sitter.Node]]:
    sites = []
    for call in index.launches:
        fn = call.child_by_field_name("function")
        config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
        args = call.child_by_field_name("arguments")
        if fn is None or config is None:
            continue
        if fn.type == "template_function":
            fn = fn.child_by_field_name("name") or fn
        cfg = [node_text(c) for c in config.named_children]
        site = LaunchSite(
            file=str(index.path),
            line=call.start_point[0] + 1,
            grid=cfg[0] if cfg else "",
            block=cfg[1] if len(cfg) > 1 else "",
            args=tuple(node_text(a) for a in args.named_children) if args else (),
            repeated=_in_host_loop(call),
        )
        sites.append((node_text(fn).split("::")[-1], site, call))
    return sites


_LOOPS = frozenset({"for_statement", "for_range_loop", "while_statement", "do_statement"})
_FUNCTIONS = frozenset({"function_definition", "lambda_expression"})


def _in_host_loop(call: tree_sitter.Node) -> bool:
    """Whether a launch lies in a loop of the function around it (rule D34)."""
    node = call.parent
    while node is not None and node.type not in _FUNCTIONS:
        if node.type in _LOOPS:
            return True
        node = node.parent
    return False


LaunchMap = dict[str, list[tuple[LaunchSite, tree_sitter.Node]]]


def launch_map(indices: list[FileIndex]) -> LaunchMap:
    """Kernel name -> host launch sites, over the given files."""
    launches: LaunchMap = {}
    for other in indices:
        for name, site, node in launch_sites(other):
            launches.setdefault(name, []).append((site, node))
    return launches


def kernels_in(
    index: FileIndex, context: Context, launches: LaunchMap, calls: CallSites | None = None
) -> list[KernelIR]:
    kernels = []
    for fn in index.functions:
        if not fn.is_kernel:
            continue
        params = parameters(fn.node)
        closure = device_closure(fn, context)
        # launch sites in source order: the same every run, whatever the indexing order
        sites = sorted(launches.get(fn.bare_name, []), key=lambda s: (s[0].file, s[0].line))
        host = ""
        footprint: sympy.Expr | None = None
        bindings: dict[str, sympy.Expr] = {}
        launch_defines: dict[str, str] = {}
        allocations: dict[str, Allocation] = {}
        if sites:
            call = sites[0][1]
            host_fn = enclosing_function(call)
            host = node_text(host_fn)[:MAX_HOST_CONTEXT_CHARS] if host_fn is not None else ""
            args = call.child_by_field_name("arguments")
            outer = {}
            if host_fn is not None:
                outer = caller_bindings(host_fn, calls, placeholders=True, members=True)  # D14, D23
            bindings = _site_bindings(fn, params, call, host_fn, outer, calls)
            if host_fn is not None and args is not None:
                pointers = [(p.name, p.type) if p.is_pointer else ("", "") for p in params]
                allocations = launch_allocations(  # rule D28
                    pointers, list(args.named_children), host_fn, "cuda", call.start_byte, calls
                )
            if host_fn is not None:
                launch_defines = _template_arguments(call, fn.template_params, host_fn, outer)
                footprint = _HOST_FOOTPRINT.get(
                    host_fn, partial(_footprint, host_fn, outer), tuple(outer.items())
                )
        per_site = _other_sites(fn, params, sites, bindings, calls) if len(sites) > 1 else []
        second: dict[str, sympy.Expr] = {}
        if len(sites) == 1 and not sites[0][0].repeated and host_fn is not None:
            second = _second_trip(fn, params, sites[0][1], host_fn, bindings, calls)
        kernels.append(
            KernelIR(
                name=fn.bare_name,
                file=str(index.path),
                line=fn.line,
                end_line=fn.node.end_point[0] + 1,
                language="cuda",
                signature=signature(fn.bare_name, params),
                params=params,
                source=_display(index, _with_template(fn.node)),
                device_functions=[d.name for d in closure],
                device_sources=[_display_fn(d) for d in closure],
                template_params=fn.template_params,
                launches=[s for s, _ in sites],
                host_context=host,
                host_bindings=bindings,
                site_bindings=per_site,
                second_trip_bindings=second,
                launch_defines=launch_defines,
                footprint=footprint,
                allocations=allocations,
                ast=fn.node,
                context=context,
                grammar=index.grammar,
            )
        )
    return kernels


def _site_bindings(
    fn: FunctionInfo,
    params: list[Param],
    call: tree_sitter.Node,
    host_fn: tree_sitter.Node | None,
    outer: dict[str, sympy.Expr],
    calls: CallSites | None,
) -> dict[str, sympy.Expr]:
    """Rules D8 and D11: one launch site's host values, its arguments bound to the
    kernel's parameters and its `<<<grid, block>>>` beside them."""
    args = call.child_by_field_name("arguments")
    bindings: dict[str, sympy.Expr] = {}
    if host_fn is not None and args is not None:
        bindings = bind_call(
            [p.name for p in params],
            list(args.named_children),
            host_fn,
            "cuda",
            call.start_byte,
            outer,
            frozenset(p.name for p in params if p.is_pointer),
            calls,
            fn.node,  # rule D29: a struct passed by value passes its fields
        )
    _add_geometry(bindings, call, host_fn, outer, calls)
    return bindings


def _add_geometry(
    bindings: dict[str, sympy.Expr],
    call: tree_sitter.Node,
    host_fn: tree_sitter.Node | None,
    outer: dict[str, sympy.Expr],
    calls: CallSites | None,
) -> None:
    """Rule D11: the launch's `<<<grid, block>>>` joins its bindings (a parameter of that
    name keeps its own)."""
    config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
    if host_fn is not None and config is not None:
        geometry = launch_geometry(config, host_fn, call.start_byte, outer, calls)
        for name, value in geometry.items():
            bindings.setdefault(name, value)


#: launch sites of one kernel whose bindings are kept (rule D33); later ones are not read
MAX_BOUND_SITES = 16


def _other_sites(
    fn: FunctionInfo,
    params: list[Param],
    sites: list[tuple[LaunchSite, tree_sitter.Node]],
    first: dict[str, sympy.Expr],
    calls: CallSites | None,
) -> list[dict[str, sympy.Expr]]:
    """Rule D33: the host bindings of each launch site (arguments and geometry, as D8 and
    D11 value the first's), in `sites` order, the first's being `first`; resolution picks
    the one whose geometry is the profiled launch's."""
    out = [first]
    for _, call in sites[1:MAX_BOUND_SITES]:
        host_fn = enclosing_function(call)
        outer: dict[str, sympy.Expr] = {}
        if host_fn is not None:
            outer = caller_bindings(host_fn, calls, placeholders=True, members=True)
        out.append(_site_bindings(fn, params, call, host_fn, outer, calls))
    return out


def _second_trip(
    fn: FunctionInfo,
    params: list[Param],
    call: tree_sitter.Node,
    host_fn: tree_sitter.Node,
    first: dict[str, sympy.Expr],
    calls: CallSites | None,
) -> dict[str, sympy.Expr]:
    """Rule D43: the one launch site's bindings with its host function's parameters as
    passed on the second trip of the caller's loop around the call; empty where there is
    no such loop or nothing differs from `first`."""
    outer = second_trip_parameters(host_fn, calls)
    if outer is None:
        return {}
    bindings = _site_bindings(fn, params, call, host_fn, outer, calls)
    return bindings if bindings != first else {}


def _template_arguments(
    call: tree_sitter.Node,
    names: list[str],
    host_fn: tree_sitter.Node,
    outer: dict[str, sympy.Expr],
) -> dict[str, str]:
    """`k<double, 4 * W><<<...>>>(...)` -> {T: "double", B: "32"} for `template <typename T,
    int B>`: types as written, values where host code makes them a whole number."""
    function = call.child_by_field_name("function")
    arguments = function.child_by_field_name("arguments") if function is not None else None
    if function is None or function.type != "template_function" or arguments is None:
        return {}
    scope = HostScope(host_fn, "cuda", outer)
    unbound = set(template_params(host_fn))  # a templated launcher's own parameters
    out: dict[str, str] = {}
    for name, argument in zip(names, arguments.named_children, strict=False):
        if argument.type == "type_descriptor":
            text = " ".join(node_text(argument).split())
            if not unbound & set(re.findall(r"[A-Za-z_]\w*", text)):
                out[name] = text
            continue
        value = scope.value(argument, call.start_byte)
        if value is not None and value.is_Integer:
            out[name] = str(int(value))
    return out


# Kernels launched from one host function (often all of a file's) share its footprint.
_HOST_FOOTPRINT = SessionNodeCache(256)


def _footprint(host_fn: tree_sitter.Node, outer: dict) -> sympy.Expr | None:
    return device_allocations(host_fn, "cuda", outer)


def _with_template(func: tree_sitter.Node) -> tree_sitter.Node:
    parent = func.parent
    if parent is not None and parent.type == "template_declaration":
        return parent
    return func


def _display(index: FileIndex, node: tree_sitter.Node) -> str:
    """The kernel as written (macros unexpanded, comments removed)."""
    return index.display(node.start_point[0] + 1, node.end_point[0] + 1) or node_text(node)


def _display_fn(fn: FunctionInfo) -> str:
    return fn.display or node_text(_with_template(fn.node))
