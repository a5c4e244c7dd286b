"""OpenMP offload regions: every `#pragma omp target ...` that launches a kernel, with its loop
nest, named by the enclosing function and identified by the pragma's line (as compilers name
offload entries: `__omp_offloading_<dev>_<file>_<function>_l<line>`)."""

from __future__ import annotations

import re

import sympy
import tree_sitter
from roofcast.analyzer.allocations import region_allocations
from roofcast.analyzer.callsites import CallSites
from roofcast.analyzer.context import Context
from roofcast.analyzer.cuda import signature
from roofcast.analyzer.hostvalues import caller_bindings, mapped_bytes
from roofcast.analyzer.index import FileIndex, function_name, parameters, template_params
from roofcast.analyzer.model import KernelIR
from roofcast.analyzer.parsing import node_text

_NOT_KERNELS = {"data", "update", "enter", "exit"}
_WORKSHARE = {"distribute", "for", "loop"}
_COLLAPSE = re.compile(r"collapse\s*\(\s*(\d+)\s*\)")
MAX_HOST_CONTEXT_CHARS = 6000


def pragma_words(node: tree_sitter.Node) -> list[str]:
    """`#pragma omp target teams distribute parallel for \\` ... -> ['omp', 'target', ...]."""
    text = node_text(node).replace("\\\r\n", " ").replace("\\\n", " ")
    text = text.lstrip().removeprefix("#").lstrip().removeprefix("pragma")
    return re.findall(r"[A-Za-z_]\w*|\(|\)", text.split("//")[0])


def is_target_kernel(words: list[str]) -> bool:
    return (
        len(words) >= 2
        and words[0] == "omp"
        and words[1] == "target"
        and (len(words) == 2 or words[2] not in _NOT_KERNELS)
    )


def directive(words: list[str]) -> set[str]:
    """The directive names before the first clause."""
    names = set()
    for word in words[1:]:
        if word == "(":
            break
        names.add(word)
    return names


def collapse_of(words: list[str], text: str) -> int:
    match = _COLLAPSE.search(text)
    return int(match.group(1)) if match else 1


def following_statement(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The statement a pragma applies to; `#ifdef X #pragma ... #endif for (...)` included."""
    sibling = node.next_named_sibling
    parent = node.parent
    while sibling is None and parent is not None and parent.type.startswith("preproc_if"):
        sibling = parent.next_named_sibling
        parent = parent.parent
    while sibling is not None and (sibling.type == "comment" or sibling.type == "preproc_call"):
        if sibling.type == "preproc_call" and "omp" not in node_text(sibling):
            sibling = sibling.next_named_sibling
            continue
        if sibling.type == "comment":
            sibling = sibling.next_named_sibling
            continue
        break
    return sibling


def _enclosing_function(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    while node is not None and node.type not in ("function_definition", "lambda_expression"):
        node = node.parent
    while node is not None and node.type == "lambda_expression":
        node = node.parent
        while node is not None and node.type != "function_definition":
            node = node.parent
    return node


Owner = tuple[tree_sitter.Node, int]


def _footprint(
    index: FileIndex,
    func: tree_sitter.Node,
    pragma: tree_sitter.Node,
    limit: int | None,
    grammar: str,
) -> sympy.Expr | None:
    """Bytes in the map clauses of this region and of the target data regions around it."""
    texts = _map_texts(index, func, pragma, limit)
    return mapped_bytes(texts, func, grammar, pragma.start_byte if limit is None else limit)


def _map_texts(
    index: FileIndex, func: tree_sitter.Node, pragma: tree_sitter.Node, limit: int | None
) -> list[str]:
    """The region's pragma, then the target (data) pragmas before it in its function."""
    texts = [node_text(pragma)]
    if limit is None:
        texts += [
            node_text(p)
            for p in index.pragmas
            if func.start_byte <= p.start_byte < pragma.start_byte and "target" in node_text(p)
        ]
    return texts


def regions_in(
    index: FileIndex,
    context: Context,
    owner: Owner | None = None,
    calls: CallSites | None = None,
    owner_grammar: str = "",
) -> list[KernelIR]:
    """Target regions of a file; `owner` is the function that #includes this file, if any,
    parsed with `owner_grammar` (its own file's)."""
    regions = []
    for pragma in index.pragmas:
        words = pragma_words(pragma)
        if not is_target_kernel(words):
            continue
        statement = following_statement(pragma)
        func = _enclosing_function(pragma)
        limit = None
        host_grammar = index.grammar
        if func is None and owner is not None:
            func, limit = owner
            host_grammar = owner_grammar or index.grammar
        if statement is None or func is None:
            continue
        name = function_name(func) or "<unknown>"
        params = parameters(func)
        text = node_text(pragma).strip()
        collapse = collapse_of(words, text) if directive(words) & _WORKSHARE else 0
        regions.append(
            KernelIR(
                name=name.split("::")[-1] if "operator" not in name else name,
                file=str(index.path),
                line=pragma.start_point[0] + 1,
                end_line=statement.end_point[0] + 1,
                language="openmp",
                signature=signature(name, params),
                params=params,
                source=index.display(pragma.start_point[0] + 1, statement.end_point[0] + 1)
                or text + "\n" + node_text(statement),
                pragma=text,
                collapse=collapse,
                template_params=template_params(func),
                host_bindings=caller_bindings(func, calls),
                footprint=_footprint(index, func, pragma, limit, host_grammar),
                allocations=region_allocations(  # rule D28
                    _map_texts(index, func, pragma, limit),
                    node_text(statement),
                    func,
                    host_grammar,
                    pragma.start_byte if limit is None else limit,
                    calls,
                ),
                host_context=(
                    index.display(func.start_point[0] + 1, func.end_point[0] + 1)
                    if limit is None
                    else node_text(func)
                )[:MAX_HOST_CONTEXT_CHARS],
                # the folder's call sites: the host scope's files and headers (rule D21)
                ast=(pragma, statement, func, limit, calls),
                context=context,
                grammar=index.grammar,
                host_grammar=host_grammar,
            )
        )
    return regions
