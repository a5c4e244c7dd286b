"""Finding kernels: every way our fixtures write a `__global__` function, headers of the same
tree, CRLF files, and the `__device__` call graph a kernel reaches."""
from __future__ import annotations

from pathlib import Path

import pytest
from roofcast.analyzer import discover
from roofcast.features import count_features

FIXTURES = Path(__file__).resolve().parent / "data" / "analyzer" / "discovery"
MULTI = FIXTURES / "multi.cu"
HEADER = FIXTURES / "include" / "common.cuh"
CHAIN = FIXTURES / "chain.cu"

#: (name, line of the definition's first line) in multi.cu, checked by hand
MULTI_KERNELS = [
    ("plain", 5),
    ("templated", 8),  # the `__global__` line after `template <...>`
    ("c_linkage", 13),
    ("c_block", 16),
    ("in_namespace", 21),
    ("behind_macro", 25),
    ("bounded", 27),
    ("split_signature", 29),
]


def kernels_of(paths: list[Path]) -> dict[tuple[str, str], object]:
    found = discover(paths)
    assert not found.problems, found.problems
    return {(Path(k.file).name, k.name): k for k in found.kernels}


def test_every_kernel_form_in_a_file_is_found_at_its_line():
    found = discover([MULTI])
    own = [(k.name, k.line) for k in found.kernels if Path(k.file).name == "multi.cu"]
    assert own == MULTI_KERNELS
    names = {k.name for k in found.kernels}
    # a declaration, a __device__ function and host code are not kernels
    assert not names & {"declared_only", "not_a_kernel", "host_launch", "scale2"}
    assert all(k.language == "cuda" for k in found.kernels)


def test_template_parameters_signature_and_launch_sites():
    k = kernels_of([MULTI])
    templated = k[("multi.cu", "templated")]
    assert templated.template_params == ["T", "B"]
    assert [(p.name, p.is_pointer) for p in templated.params] == [("a", True)]
    split = k[("multi.cu", "split_signature")]
    assert [(p.name, p.is_pointer) for p in split.params] == [("a", True), ("n", False)]
    assert split.end_line == 34  # the closing brace
    plain = k[("multi.cu", "plain")]
    assert [(s.line, s.grid, s.block) for s in plain.launches] == [(42, "1", "32")]
    assert "host_launch" in plain.host_context


def test_kernels_behind_a_header_macro_see_the_headers_device_functions():
    k = kernels_of([MULTI])
    behind = k[("multi.cu", "behind_macro")]
    assert behind.device_functions == ["scale2"]
    fv = count_features(behind)
    assert (fv.flops_sp, fv.load_bytes, fv.store_bytes) == (1, 4, 4)
    # extern "C" kernel calling a header function that calls another
    c_linkage = k[("multi.cu", "c_linkage")]
    assert c_linkage.device_functions == ["twice_plus_one", "scale2"]
    fv = count_features(c_linkage)
    assert (fv.flops_sp, fv.load_bytes, fv.store_bytes) == (2, 4, 4)


def test_kernels_in_an_included_header_are_reported_once():
    alone = kernels_of([MULTI])
    assert ("common.cuh", "header_kernel") in alone
    folder = discover([FIXTURES])
    names = [k.name for k in folder.kernels]
    assert names.count("header_kernel") == 1
    assert len(names) == len(set(zip(names, (k.line for k in folder.kernels), strict=True)))
    assert {n for n, _ in MULTI_KERNELS} | {"header_kernel", "root", "child"} == set(names)


def test_header_found_in_another_folder_of_the_tree(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "inc" / "helpers.cuh").write_text(
        "#pragma once\n__device__ float halve(float v) { return v * 0.5f; }\n")
    (tmp_path / "src" / "k.cu").write_text(
        '#include "helpers.cuh"\n'
        "__global__ void uses_helper(float* a) { a[threadIdx.x] = halve(a[threadIdx.x]); }\n")
    found = discover([tmp_path])
    assert [k.name for k in found.kernels] == ["uses_helper"]
    assert found.kernels[0].device_functions == ["halve"]
    assert count_features(found.kernels[0]).flops_sp == 1


def test_crlf_files_give_the_same_kernels_lines_and_counts(tmp_path):
    (tmp_path / "include").mkdir()
    for source in (MULTI, HEADER):
        target = tmp_path / source.relative_to(FIXTURES)
        target.write_bytes(source.read_bytes().replace(b"\n", b"\r\n"))
    assert b"\r\n" in (tmp_path / "multi.cu").read_bytes()
    lf = discover([MULTI])
    crlf = discover([tmp_path / "multi.cu"])
    assert not crlf.problems
    assert [(k.name, k.line, k.end_line) for k in crlf.kernels] == [
        (k.name, k.line, k.end_line) for k in lf.kernels]
    for a, b in zip(lf.kernels, crlf.kernels, strict=True):
        fa, fb = count_features(a), count_features(b)
        assert (fa.flops_sp, fa.int_ops, fa.load_bytes, fa.store_bytes) == (
            fb.flops_sp, fb.int_ops, fb.load_bytes, fb.store_bytes), a.name
        assert "\r" not in b.source


def test_call_graph_closure_lists_device_functions_in_order():
    k = kernels_of([CHAIN])
    root = k[("chain.cu", "root")]
    # breadth first from the kernel: its callees in call order, then theirs
    assert root.device_functions == ["left", "right", "leaf"]
    assert len(root.device_sources) == 3
    for name, text in zip(root.device_functions, root.device_sources, strict=True):
        assert f"float {name}(" in text
    assert "unused" not in root.device_functions and "child" not in root.device_functions
    fv = count_features(root)
    # leaf inlined twice (1 each), left + and right - (1 each), l * r: 5 sp; x[i] loaded once
    assert (fv.flops_sp, fv.load_bytes, fv.store_bytes) == (5, 4, 4)
    assert fv.device_calls == 4


@pytest.mark.parametrize("suffix", [".cu", ".cuh"])
def test_several_kernels_per_file_sorted_by_line(tmp_path, suffix):
    body = "".join(f"__global__ void k{i}(float* a) {{ a[{i}] = {i}.0f; }}\n\n" for i in range(5))
    path = tmp_path / f"many{suffix}"
    path.write_text(body)
    found = discover([path])
    assert [(k.name, k.line) for k in found.kernels] == [(f"k{i}", 2 * i + 1) for i in range(5)]


def test_openmp_regions_are_named_by_function_and_pragma_line(tmp_path):
    path = tmp_path / "omp.cpp"
    path.write_text(
        "void first(float* a, int n) {\n"
        "  #pragma omp target teams distribute parallel for\n"
        "  for (int i = 0; i < n; i++) a[i] = 0.0f;\n"
        "  #pragma omp target update from(a[0:n])\n"
        "  #pragma omp target teams loop\n"
        "  for (int i = 0; i < n; i++) a[i] += 1.0f;\n"
        "}\n"
        "struct S { void method(float* a, int n) {\n"
        "  #pragma omp target parallel for\n"
        "  for (int i = 0; i < n; i++) a[i] = 2.0f;\n"
        "} };\n"
    )
    found = discover([path])
    assert [(k.name, k.line, k.language) for k in found.kernels] == [
        ("first", 2, "openmp"), ("first", 5, "openmp"), ("method", 9, "openmp")]


def test_cpp_files_are_skipped_only_when_no_kernel_marker_reaches_them(tmp_path):
    """Files without `__global__`, `__device__` or `#pragma omp target` (in any spacing) are not
    parsed unless a header they include holds one: a region pasted into a function counts."""
    (tmp_path / "spaced.cpp").write_text(
        "void scale(float* x, int n) {\n"
        "#  pragma   omp\ttarget teams distribute parallel for\n"
        "  for (int i = 0; i < n; i++) x[i] *= 2.0f;\n"
        "}\n"
    )
    (tmp_path / "region.inc.h").write_text(
        "#pragma omp target teams distribute parallel for\n"
        "for (int i = 0; i < n; i++) y[i] += 1.0f;\n"
    )
    (tmp_path / "host.cpp").write_text(
        'void shift(float* y, int n) {\n#include "region.inc.h"\n}\n'
    )
    (tmp_path / "plain.cpp").write_text("int target = 3; // omp target, by name only\n")
    found = discover([tmp_path])
    assert [(Path(k.file).name, k.name, k.line) for k in found.kernels] == [
        ("region.inc.h", "shift", 1),
        ("spaced.cpp", "scale", 2),
    ]


def test_query_captures_come_back_in_source_order():
    """py-tree-sitter returns captures in no promised order (it varied between runs and so did
    device-call order and overload choice); the analyzer sorts them into source order."""
    import tree_sitter
    from roofcast.analyzer.parsing import captures, in_document_order, language, parse

    source = "\n".join(f"__device__ int f{i}(int x) {{ return g{i}(x) + h{i}(x); }}"
                       for i in range(40))
    tree = parse(source, "cuda")
    pattern = "(function_definition) @f (call_expression function: (identifier) @c)"
    query = tree_sitter.Query(language("cuda"), pattern)
    called = [n.text.decode() for n in captures(query, tree.root_node)["c"]]
    assert called == [name for i in range(40) for name in (f"g{i}", f"h{i}")]
    starts = [n.start_byte for n in captures(query, tree.root_node)["f"]]
    assert starts == sorted(starts) and len(starts) == 40
    sums = tree_sitter.Query(language("cuda"), "(binary_expression) @b")
    found = captures(sums, parse("int x = a + b + c; int y = d * e;", "cuda").root_node)["b"]
    texts = [n.text.decode() for n in found]
    assert texts == ["a + b + c", "a + b", "d * e"]  # at a shared start, the outer one first
    assert [n.text.decode() for n in in_document_order(found[::-1])] == texts


def test_folder_listing_rules(tmp_path: Path):
    """Kernel-suffixed files under a folder, sorted part by part (`a/` before `a-b/`);
    hidden files and folders left out; a link to a file listed, a link to a folder not
    followed (a link cycle cannot loop)."""
    from roofcast.analyzer.sources import expand_paths

    for name in ("a-b/x.cu", "a/x.cu", "a/y.cpp", "a/notes.txt", ".git/z.cu", "a/.w.cu", "c/K.CUH"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("__global__ void k() {}\n")
    (tmp_path / "a" / "link.cu").symlink_to(tmp_path / "a" / "x.cu")
    (tmp_path / "c" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "c" / "dangling.cu").symlink_to(tmp_path / "missing.cu")
    listed = [p.relative_to(tmp_path).as_posix() for p in expand_paths([tmp_path])]
    assert listed == ["a/link.cu", "a/y.cpp", "a-b/x.cu", "c/K.CUH"]  # a/x.cu: link.cu again


def test_call_sites_are_whole_word_calls_of_the_name():
    """Host bindings look a function's callers up by name: only calls of that very name count
    (not `scale2`, `my_scale`, `$scale`, nor the member call `o.scale`)."""
    from roofcast.analyzer.callsites import CallSites
    from roofcast.analyzer.index import build_index
    from roofcast.analyzer.parsing import parse

    source = (
        "void scale(float* x, int n) {}\n"
        "void scale2(float* x, int n) {}\n"
        "void host(float* x) {\n"
        "  scale2(x, 1); my_scale(x, 2); $scale(x, 3); scale_(x, 4);\n"
        "  scale(x, 5); o.scale(x, 8);\n"
        "  int scale_n = 6; scale(x, scale_n);\n"
        "}\n"
        "void tail(float* x) { scale(x, 7); }"
    )
    index = build_index(Path("k.cu"), "cuda", parse(source, "cuda"))
    calls = CallSites([index]).get("scale")
    assert [call.child_by_field_name("arguments").text.decode() for call, _ in calls] == [
        "(x, 5)",
        "(x, scale_n)",
        "(x, 7)",
    ]


def test_callees_are_the_bodys_calls_in_source_order():
    """The device call graph follows calls in the body only (a default argument's call is
    not made by the function), qualified names by their last part."""
    from roofcast.analyzer.cuda import callees
    from roofcast.analyzer.index import build_index
    from roofcast.analyzer.parsing import parse

    source = (
        "__device__ int g(int x) { return x; }\n"
        "__device__ int h(int x) { return x; }\n"
        "__device__ int f(int a = g(1)) { return h(a) + g(a) + ns::k(a) + t<int>(a); }\n"
    )
    index = build_index(Path("k.cu"), "cuda", parse(source, "cuda"))
    f = next(fn for fn in index.functions if fn.name == "f")
    assert callees(f.node, "cuda") == ["h", "g", "k", "t"]


def test_host_definitions_pair_each_name_with_its_own_value():
    """Host values are searched backwards through a function's assignments: with chained
    and nested assignments each name keeps its own value, in source order."""
    from roofcast.analyzer.hostvalues import _definitions
    from roofcast.analyzer.parsing import parse

    source = (
        "int main(int argc, char** argv) {\n"
        "  int n = m = 4;\n"
        "  k = (j = 2) + n;\n"
        "  n = atoi(argv[1]);\n"
        "}\n"
    )
    body = parse(source, "cuda").root_node.children[0].child_by_field_name("body")
    found = {
        name: [value.text.decode() for _, value in values]
        for name, values in _definitions(body, "cuda").items()
    }
    assert found == {"n": ["m = 4", "atoi(argv[1])"], "m": ["4"], "k": ["(j = 2) + n"], "j": ["2"]}


@pytest.mark.rule("U7")
def test_a_listed_file_another_includes_is_counted_in_its_includers_context(tmp_path: Path):
    """`main.cu` includes `utils.hpp` (a type alias and a size macro), then `kernels.cu`: the
    kernel there is counted once, with `real_t` a float and DIM 7, not a guess."""
    (tmp_path / "utils.hpp").write_text(
        "using real_t = float;\n#ifndef DIM\n#define DIM 7\n#endif\n"
    )
    (tmp_path / "kernels.cu").write_text(
        "__global__ void mul(const real_t* a, real_t* b) {\n"
        "  real_t s = 0;\n"
        "  for (int j = 0; j < DIM; j++) s += a[threadIdx.x * DIM + j] * 2.0f;\n"
        "  b[threadIdx.x] = s;\n"
        "}\n"
    )
    (tmp_path / "main.cu").write_text(
        '#include "utils.hpp"\n#include "kernels.cu"\n'
        "int main() { real_t *a, *b; mul<<<1, 32>>>(a, b); }\n"
    )
    from roofcast.gpu_specs import load_gpu

    from roofcast.pipeline import analyze_paths

    report = analyze_paths([tmp_path], load_gpu("a100"))
    (kernel,) = report.kernels
    assert Path(kernel.ir.file).name == "kernels.cu"
    assert kernel.resolved.defaults == {}
    assert kernel.resolved.flops["sp"] == 2 * 7  # a multiply and an add per trip, 7 trips
    assert kernel.resolved.load_bytes == 4 * 7  # floats


def test_a_files_raw_bytes_are_scanned_once_per_analysis(tmp_path, monkeypatch):
    """Splitting the listing into groups and choosing which files to parse both ask a file's
    include names and kernel markers: its bytes are scanned once for both (and for the
    headers a host-only file includes)."""
    from collections import Counter

    from roofcast.analyzer import rawscan
    from roofcast.gpu_specs import load_gpu

    from roofcast.pipeline import analyze_paths

    (tmp_path / "common.h").write_text("#define N 256\n")
    (tmp_path / "k.cu").write_text(
        '#include "common.h"\n__global__ void k(float* a) { a[threadIdx.x] = N; }\n'
    )
    (tmp_path / "host.cpp").write_text('#include "common.h"\nint main() { return N; }\n')
    scans: Counter[str] = Counter()
    scan = rawscan._FACTS.compute

    def counted(path: str) -> rawscan.RawFacts:
        scans[Path(path).name] += 1
        return scan(path)

    monkeypatch.setattr(rawscan._FACTS, "compute", counted)
    report = analyze_paths([tmp_path], load_gpu("rtx3080"), jobs=1)
    assert [k.ir.name for k in report.kernels] == ["k"]
    assert scans["host.cpp"] == 1 and scans["k.cu"] == 1 and scans["common.h"] == 1
