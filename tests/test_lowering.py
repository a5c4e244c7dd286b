"""Lowering (features/lowering.py): a kernel body becomes the counted kernel IR, each
operation with the rule that counted it, its line and its loop nest; no parse-tree handle
survives into the IR. Kernels written here, their records worked out by hand."""

from __future__ import annotations

import dataclasses
import pickle
import textwrap
from pathlib import Path

import pytest
import tree_sitter
from roofcast.analyzer.discover import discover
from roofcast.features.entry import lower
from roofcast.features.lowered import LoweredKernel

SOURCE = textwrap.dedent(
    """\
    __global__ void k(const float* x, float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      float s = 0.0f;
      for (int j = 0; j < n; ++j) {
        s += x[j] / y[i];
      }
      for (int k = 0; k < 8; ++k) s *= 2.0f;
      y[i] = s;
    }
    """
)


@pytest.fixture(scope="module")
def lowered(tmp_path_factory) -> LoweredKernel:
    path = tmp_path_factory.mktemp("lowering") / "k.cu"
    path.write_text(SOURCE)
    (ir,) = discover([path]).kernels
    return lower(ir).lowered


def records(lowered: LoweredKernel, line: int) -> dict[tuple[str, str, tuple[int, ...]], float]:
    """A line's operations: (count name, rule, nest) -> how many per pass."""
    return {(n, r, nest): c for (n, r, at, nest), c in lowered.ops.items() if at == line and c}


def test_loops_are_recorded_with_trip_line_and_counter(lowered):
    loops = sorted(lowered.loops.values(), key=lambda loop: loop.line)
    assert [(lp.line, lp.variable) for lp in loops] == [(4, "j"), (7, "k")]
    assert str(loops[0].trip) == "n"
    assert loops[1].trip == 8


def test_each_operation_names_its_rule_line_and_nest(lowered):
    j, k = sorted(lowered.loops, key=lambda loop_id: lowered.loops[loop_id].line)
    # line 2: blockIdx.x * blockDim.x + threadIdx.x, two integer ops (I1), outside any loop
    assert records(lowered, 2) == {("int_ops", "I1", ()): 2}
    # line 4: the loop's test and increment, once per trip (I3), in the loop's own nest
    assert records(lowered, 4) == {("int_ops", "I3", (j,)): 2}
    line5 = records(lowered, 5)
    assert line5[("flops_sp", "F2", (j,))] == 1  # s += ...
    assert line5[("special:div.sp", "F4", (j,))] == 1  # x[j] / y[i]
    assert line5[("load_bytes", "M2", (j,))] == 4  # x[j] changes with j
    # y[i] does not change in the loop: loaded once, outside it (M3, recorded in the outer nest)
    assert line5[("load_bytes", "M2", ())] == 4
    # line 7: 8 trips, a constant: unrolled fully, so no loop control at all (I4)
    assert records(lowered, 7) == {("flops_sp", "F2", (k,)): 1}
    assert records(lowered, 8)[("store_bytes", "M2", ())] == 4


def test_accesses_carry_their_nest_and_repeats(lowered):
    (j,) = [loop.id for loop in lowered.loops.values() if loop.variable == "j"]
    by_array: dict[str, list] = {}
    for access in lowered.accesses:
        by_array.setdefault(access.array, []).append(access)
    (x,) = by_array["x"]
    assert x.nest == (j,) and str(x.repeats) == "n"  # one x[j] per trip of the j loop
    # its place is the j loop's dim, 0 .. n-1, in 4-byte steps
    (dim,) = [d for d in lowered.dims if d.symbol == x.index]
    assert dim.role == "loop" and str(dim.extent) == "n"
    assert x.unit == 4 and not x.store and x.line == 5
    # y[i]: loaded once before the loop (hoisted, M3) and stored once at line 8
    assert sorted((a.store, a.line, a.nest, a.repeats) for a in by_array["y"]) == [
        (False, 5, (), 1),
        (True, 8, (), 1),
    ]


def _reachable(value: object, seen: set[int]) -> list[object]:
    """Every object reachable through the IR's dataclasses and containers (iteratively)."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        found.append(item)
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return found


def test_the_ir_holds_no_parse_tree(lowered):
    handles = [
        x for x in _reachable(lowered, set()) if isinstance(x, (tree_sitter.Node, tree_sitter.Tree))
    ]
    assert handles == []
    # plain data: it crosses a process boundary as it is (tree-sitter nodes cannot)
    again = pickle.loads(pickle.dumps(lowered))
    assert again.ops == lowered.ops and again.loops == lowered.loops


def test_nothing_is_lowered_twice(tmp_path: Path):
    """Lowering one kernel twice gives the same IR (no state kept between kernels)."""
    path = tmp_path / "k.cu"
    path.write_text(SOURCE)
    (ir,) = discover([path]).kernels
    first, second = lower(ir).lowered, lower(ir).lowered
    assert first.ops == second.ops and first.loops == second.loops


def test_accesses_are_placed_from_the_array_start_or_a_pointer_offset(tmp_path: Path):
    """An access at its array's start is placed at its index; through a pointer into the
    array, at the pointer's offset (in elements) plus the index (rule T2)."""
    path = tmp_path / "k.cu"
    path.write_text(
        textwrap.dedent(
            """\
            __global__ void k(const float* x, float* y, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x;
              const float* p = x + 2 * n;
              y[i] = p[i] + x[i + 1];
            }
            """
        )
    )
    (ir,) = discover([path]).kernels
    places = {(a.array, a.store, str(a.index)) for a in lower(ir).lowered.accesses}
    thread = "blockDim_x*blockIdx_x + threadIdx_x"
    assert places == {
        ("x", False, "blockDim_x*blockIdx_x + 2*n + threadIdx_x"),
        ("x", False, f"{thread} + 1"),
        ("y", True, thread),
    }
