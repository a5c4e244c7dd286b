"""One file's analysis does work linear in its size: the work that grew with the square of the
number of kernels (the index's byte-range queries, the callers' byte searches) is counted here,
not timed, on generated files of 200 and 800 kernels."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import tree_sitter
from roofcast.analyzer import callsites, skeleton
from roofcast.analyzer.callsites import CallSites
from roofcast.analyzer.index import build_index, index_query
from roofcast.analyzer.parsing import parse

SMALL, LARGE = 200, 800


def _source(kernels: int) -> str:
    """Per kernel: a file-level constant, a helper, a kernel whose body is cut out of the index
    query (a loop, loads, stores, a call) and a host function that launches it."""
    parts = ["#include <cuda_runtime.h>"]
    for i in range(kernels):
        parts.append(f"""
const int SCALE_{i} = {i % 7 + 1};
__device__ float helper_{i}(float x, float y) {{ return x * y + SCALE_{i}; }}
__global__ void kernel_{i}(const float* __restrict__ a, float* out, int n)
{{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    float acc = a[idx];
    for (int k = 0; k < {4 + i % 5}; ++k) {{
        acc = helper_{i}(acc, a[(idx + k) % n]) + a[(idx + 2 * k) % n] * 0.5f;
    }}
    if (acc > 0.0f) {{
        out[idx] = acc - a[(idx + 1) % n];
    }}
}}
void launch_{i}(const float* a, float* out, int n) {{ kernel_{i}<<<n / 256, 256>>>(a, out, n); }}
""")
    return "\n".join(parts)


class _RecordingCursor:
    """A QueryCursor that records each query run: (query, node, byte range, start depth).
    (Its progress callback would count the nodes visited, but py-tree-sitter 0.26 keeps a
    pointer to options that have gone out of scope: the callback is not called, or crashes.)"""

    runs: list[tuple[tree_sitter.Query, tree_sitter.Node, tuple[int, int] | None, int | None]]
    runs = []

    def __init__(self, query: tree_sitter.Query) -> None:
        self.query = query
        self.cursor = _REAL_CURSOR(query)
        self.byte_range: tuple[int, int] | None = None
        self.depth: int | None = None

    def set_byte_range(self, start: int, end: int) -> None:
        self.byte_range = (start, end)
        self.cursor.set_byte_range(start, end)

    def set_max_start_depth(self, depth: int) -> None:
        self.depth = depth
        self.cursor.set_max_start_depth(depth)

    def captures(self, node: tree_sitter.Node) -> dict[str, list[tree_sitter.Node]]:
        _RecordingCursor.runs.append((self.query, node, self.byte_range, self.depth))
        return self.cursor.captures(node)


_REAL_CURSOR = tree_sitter.QueryCursor


def _index_runs(kernels: int, monkeypatch: pytest.MonkeyPatch) -> list:
    """The queries run for the index of a generated file, its captures checked complete."""
    tree = parse(_source(kernels), "cuda")
    _RecordingCursor.runs = []
    with monkeypatch.context() as patched:
        patched.setattr(tree_sitter, "QueryCursor", _RecordingCursor)
        found = skeleton.index_captures(index_query("cuda"), tree, "cuda")
    assert len(found["global"]) == kernels  # every file-level constant
    assert len(found["function"]) == 3 * kernels
    assert len(found["launch"]) == kernels
    return _RecordingCursor.runs


def test_index_queries_do_work_linear_in_the_kernels_of_a_file(monkeypatch):
    small, large = _index_runs(SMALL, monkeypatch), _index_runs(LARGE, monkeypatch)
    assert len(small) > SMALL  # one query per cut body: byte ranges are exercised
    assert len(large) <= LARGE / SMALL * len(small)  # calls per kernel do not grow
    ranged = [(q, node, r) for q, node, r, _ in large if r is not None]
    assert ranged
    root = ranged[0][1]
    # A query over a byte range visits the nodes in its range, plus those that a match
    # started at an enclosing node could continue in: all of the root's children, for a
    # pattern rooted at the root. No pattern of the ranged queries may start there.
    for query, node, _ in ranged:
        assert node.id == root.id
        at_root = _REAL_CURSOR(query)
        at_root.set_max_start_depth(0)
        assert not at_root.captures(root), "a pattern of a ranged query starts at the root"
    ranges = sorted(r for _, _, r in ranged)  # each byte of the file in one range at most
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))
    # what is queried at the root without a range starts near it: visits the top levels once
    whole = [depth for _, node, r, depth in large if r is None and node.id == root.id]
    assert len(whole) == 2 and all(d is not None and d <= skeleton.CUT_DEPTH for d in whole)


def test_callers_of_every_kernel_search_a_file_a_bounded_number_of_times(monkeypatch):
    index = build_index(Path("many.cu"), "cuda", parse(_source(LARGE), "cuda"))
    names = [fn.name for fn in index.functions if fn.is_kernel]
    assert len(names) == LARGE
    mapped = CallSites([index])
    found = {name: mapped.get(name) for name in names}
    assert mapped.searches == [callsites.SEARCHES_BEFORE_MAP]  # then the map, searched no more
    monkeypatch.setattr(callsites, "SEARCHES_BEFORE_MAP", LARGE + 1)
    searched = CallSites([index])
    for name in names:  # the map finds what the byte searches find
        assert [call.id for call, _ in found[name]] == [call.id for call, _ in searched.get(name)]
    assert searched.searches == [LARGE]
    assert all(len(calls) == 1 for calls in found.values())  # each kernel's launch
