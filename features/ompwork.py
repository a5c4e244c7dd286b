"""How many units of work an OpenMP target region without a work-shared loop runs.

Many offload ports keep the CUDA shape: `target teams num_teams(G) thread_limit(B)` around a
`#pragma omp parallel` body that reads `omp_get_team_num()` / `omp_get_thread_num()`. The
body is then what one thread does, and the region runs G x B of them. Counting such a region
as one unit of work undercounts its launch by the whole thread count, so the work comes from
the region's structure: the teams and threads clauses, else the launch geometry symbols
(gridDim / blockDim, bound from the profiled launch when known). Every choice is stated in a
note of the kernel's report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import sympy
import tree_sitter
from roofcast.analyzer.parsing import parse
from roofcast.features.symbolic import builtin, symbol
from roofcast.features.traffic import Dim

_TEAMS = ("gridDim_x", "gridDim_y", "gridDim_z")
_THREADS = ("blockDim_x", "blockDim_y", "blockDim_z")
#: longest clause text parsed as an expression; longer is not a size expression
_MAX_CLAUSE = 200


@dataclass(frozen=True)
class RegionShape:
    """The parallel structure of a target region with no work-shared loop."""

    teams: bool  # a `teams` construct (on the target pragma or inside it)
    parallel: bool  # a `parallel` construct inside (each thread runs its body)
    num_teams: str  # clause texts, '' when absent
    threads: str  # thread_limit(...) or the inner parallel's num_threads(...)
    threads_clause: str = "thread_limit"  # which of the two `threads` came from


def _joined(text: str) -> str:
    return text.replace("\\\r\n", " ").replace("\\\n", " ")


def clause_argument(text: str, clause: str) -> str:
    """The text inside `clause(...)` of a pragma, parentheses balanced; '' when absent.
    OpenMP 5.1's `num_teams(lower : upper)` gives the upper bound."""
    match = re.search(rf"\b{clause}\s*\(", text)
    if match is None:
        return ""
    depth, start = 1, match.end()
    for pos in range(start, min(len(text), start + _MAX_CLAUSE)):
        char = text[pos]
        depth += (char == "(") - (char == ")")
        if depth == 0:
            inner = text[start:pos].strip()
            lower_upper = ":" in inner and "?" not in inner and "::" not in inner
            return inner.rsplit(":", 1)[-1].strip() if lower_upper else inner
    return ""


def _words(text: str) -> list[str]:
    body = _joined(text).lstrip().removeprefix("#").lstrip().removeprefix("pragma")
    return re.findall(r"[A-Za-z_]\w*", re.sub(r"\([^()]*\)", " ", body.split("//")[0]))


def region_shape(target_pragma: str, inner_pragmas: Sequence[str]) -> RegionShape:
    """Teams / parallel constructs and their size clauses from the region's pragmas."""
    teams = "teams" in _words(target_pragma)
    parallel = "parallel" in _words(target_pragma)
    num_teams = clause_argument(_joined(target_pragma), "num_teams")
    threads = clause_argument(_joined(target_pragma), "thread_limit")
    threads_clause = "thread_limit"
    for text in inner_pragmas:
        words = _words(text)
        if len(words) < 2 or words[0] != "omp":
            continue
        joined = _joined(text)
        if "teams" in words:
            teams = True
            num_teams = num_teams or clause_argument(joined, "num_teams")
            threads = threads or clause_argument(joined, "thread_limit")
        if "parallel" in words:
            parallel = True
            if clause_argument(joined, "num_threads"):
                threads, threads_clause = clause_argument(joined, "num_threads"), "num_threads"
    return RegionShape(teams, parallel, num_teams, threads, threads_clause)


def _launch(names: Sequence[str]) -> sympy.Expr:
    return sympy.Mul(*(symbol(n) for n in names))


def clause_value(text: str, grammar: str, value) -> sympy.Expr | None:
    """A clause's expression as the counter values it (`value` = KernelLowering.value), or None
    when it is not a known positive integer expression."""
    if not text or len(text) > _MAX_CLAUSE:
        return None
    tree = parse(f"int roofcast_clause = {text};", grammar)
    node: tree_sitter.Node | None = tree.root_node
    for kind in ("declaration", "init_declarator"):
        node = next((c for c in node.named_children if c.type == kind), None) if node else None
    expr = node.child_by_field_name("value") if node is not None else None
    if expr is None or tree.root_node.has_error:
        return None
    result = value(expr)
    if result is None or (result.is_Number and not result > 0):
        return None
    return result


@dataclass(frozen=True)
class RegionSizes:
    """A region's size clauses as the counter values them; None: absent or not a size."""

    teams: sympy.Expr | None
    threads: sympy.Expr | None


def region_sizes(shape: RegionShape, grammar: str, value) -> RegionSizes:
    """The teams and threads clauses of the constructs the region has, each valued once."""
    return RegionSizes(
        clause_value(shape.num_teams, grammar, value) if shape.teams else None,
        clause_value(shape.threads, grammar, value) if shape.parallel else None,
    )


def region_work(shape: RegionShape, sizes: RegionSizes) -> tuple[sympy.Expr, str]:
    """(units of work, note): teams x threads per team when the body runs in a `parallel`
    construct, teams alone for a `teams` region without one, threads alone for `parallel`
    without teams, one for a serial region. Each size comes from its clause, else from the
    launch geometry."""
    parts: list[str] = []
    work = sympy.Integer(1)
    if shape.teams:
        work *= sizes.teams if sizes.teams is not None else _launch(_TEAMS)
        parts.append(
            f"num_teams({shape.num_teams}) teams" if sizes.teams is not None else "gridDim teams"
        )
    if shape.parallel:
        work *= sizes.threads if sizes.threads is not None else _launch(_THREADS)
        parts.append(
            f"{shape.threads_clause}({shape.threads}) threads"
            if sizes.threads is not None
            else "blockDim threads"
        )
    if not parts:
        return work, (
            "serial target region (no teams, parallel or work-shared loop): one unit of work [U3]"
        )
    if shape.teams and shape.parallel:
        unit = "per thread (team-level code outside the parallel construct counted per thread)"
    elif shape.teams:
        unit = "per team (no parallel construct: one thread of each team runs the body)"
    else:
        unit = "per thread"
    return work, f"no work-shared loop: counts {unit}; work = {' x '.join(parts)} [U3]"


def region_dims(shape: RegionShape, sizes: RegionSizes) -> tuple[list[Dim], dict[str, sympy.Expr]]:
    """The thread grid of a CUDA-style region for the traffic model (T2): its threads are the
    lanes (omp_get_thread_num() is threadIdx.x), its teams the blocks (omp_get_team_num()
    is blockIdx.x), sized as `region_work` sizes them; and the sizes its clauses give
    omp_get_num_threads() / omp_get_num_teams() (blockDim_x / gridDim_x), a launch's first."""
    dims = []
    given: dict[str, sympy.Expr] = {}
    for present, size, position, extent_name, role in (
        (shape.parallel, sizes.threads, "threadIdx", _THREADS[0], "lane"),
        (shape.teams, sizes.teams, "blockIdx", _TEAMS[0], "block"),
    ):
        if not present:
            continue
        if size is not None:
            given[extent_name] = size
        extent = size if size is not None else symbol(extent_name)
        dims.append(Dim(builtin(position, "x"), extent, role))
    return dims, given
