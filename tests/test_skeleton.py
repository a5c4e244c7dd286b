"""The index's captures with large function bodies cut out of the query and searched by their
tokens instead: the same as the whole query's, less functions nested in a function body."""

from __future__ import annotations

from pathlib import Path

from roofcast.analyzer import skeleton
from roofcast.analyzer.index import build_index, index_query
from roofcast.analyzer.parsing import captures, parse

#: everything the index keeps from a function body, padded so that the body is cut out
_BODY_ITEMS = """
#define LOCAL_SIZE 4
#pragma unroll
#include "local.h"
  typedef float real_t;
  using index_t = int;
  struct Local { __device__ float get() { return 1.0f; } int nested_member() { return 2; } };
  class Counter { public: int count() { return 3; } };
  enum class Kind { A, B };
  struct Local unused_without_body;
  const char* text = "#define NOT_A_MACRO 1 <<< typedef struct";
  int nested_in_body(int a) { return a; }
  kernel<<<1, 1>>>(x);
  for (int i = 0; i < 64; ++i) {
    if (x[i] > 0) {
#pragma omp simd
      for (int j = 0; j < 8; ++j) { x[i] += x[j] * 2.0f - x[j + 1] / 3.0f; }
    }
  }
"""

SOURCE = f"""
const int FILE_LEVEL = 4;
__global__ void kernel(float* x) {{ x[0] = 1.0f; }}
void big(float* x) {{{_BODY_ITEMS}}}
void small(float* x) {{ int nested_in_small(int a) {{ return a; }} x[0] = 0; }}
namespace outer {{
template <typename T> struct Holder {{ T value() {{ return T(); }} }};
void in_namespace(float* x) {{{_BODY_ITEMS}}}
}}
"""


def _ids(found: dict, name: str) -> list[int]:
    return [node.id for node in found.get(name, [])]


def test_the_same_captures_as_the_whole_query_less_nested_functions():
    tree = parse(SOURCE, "cuda")
    assert skeleton._bodies_to_cut(tree.root_node, "cuda"), "no body is cut: nothing tested"
    whole = captures(index_query("cuda"), tree.root_node)
    assert "global" not in whole  # SOURCE has file-level declarations only: matched apart
    whole.update(captures(skeleton.file_level_query("cuda"), tree.root_node))
    found = skeleton.index_captures(index_query("cuda"), tree, "cuda")
    nested = {n.id for n in whole["function"] if n.parent.type == "compound_statement"}
    assert len(nested) == 3  # nested_in_body twice, nested_in_small
    for name in whole:
        expected = [i for i in _ids(whole, name) if i not in nested]
        assert _ids(found, name) == expected, name
    assert set(found) == set(whole)


def test_functions_in_a_body_are_indexed_only_as_members_of_a_class_defined_there():
    index = build_index(Path("k.cu"), "cuda", parse(SOURCE, "cuda"))
    names = [fn.name for fn in index.functions]
    assert "nested_in_body" not in names and "nested_in_small" not in names
    assert names.count("get") == 2 and names.count("count") == 2  # one per big body
    assert {"kernel", "big", "small", "in_namespace", "value", "nested_member"} <= set(names)
    assert index.macros["LOCAL_SIZE"] == "4"
    assert index.constants == {"FILE_LEVEL": "4"}  # not the body's `text`
    assert index.includes == ["local.h", "local.h"]
    assert index.typedefs["real_t"] == "float" and index.typedefs["index_t"] == "int"
    assert {"Local", "Counter", "Holder"} <= set(index.structs)
    assert len(index.launches) == 2
    assert [p.text.decode().split()[-1] for p in index.pragmas] == ["unroll", "simd"] * 2
