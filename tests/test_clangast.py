"""Rule M10: with a compile command and libclang, declarations take clang's types.

Small kernels of our own, analysed without and with a compile database. The libclang tests
skip, saying why, where the `clang` extra, clang's resource headers or a CUDA 12 tree (the
`compile` extra) is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from roofcast.analyzer import clangast, clangcache
from roofcast.analyzer.compdb import CompileUnit, load_database
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths


def _needs_clang_cuda() -> None:
    pytest.importorskip("clang.cindex", reason="libclang (the `clang` extra) not installed")
    reason = clangast.disabled_reason()
    if reason is not None:
        pytest.skip(reason)
    if clangast.resource_dir() is None:
        pytest.skip("no clang resource headers (no clang installed)")
    if clangast._cuda_path() is None:
        pytest.skip("no CUDA 12 tree (the `compile` extra)")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test parses afresh, into a cache of its own."""
    monkeypatch.setattr(clangcache, "_folder", lambda: tmp_path / "clangcache")
    monkeypatch.delenv("ROOFCAST_LIBCLANG", raising=False)


def _analyse(tmp_path: Path, source: str, with_database: bool, name: str = "k.cu") -> dict:
    """Each kernel's features, by name, with or without a database for the file."""
    path = tmp_path / name
    path.write_text(source)
    database = None
    if with_database:
        entry = {
            "directory": str(tmp_path),
            "arguments": ["clang++", "-x", "cuda", "-std=c++17", "--cuda-gpu-arch=sm_86",
                          "-c", name],
            "file": name,
        }  # fmt: skip
        (tmp_path / "compile_commands.json").write_text(json.dumps([entry]))
        database = load_database(tmp_path / "compile_commands.json")
    report = analyze_paths([path], load_gpu("a100"), database=database)
    return {k.ir.name: k.features for k in report.kernels}


AUTO_FLOAT4 = """
template <typename V>
__device__ const V* as(const float* p) { return reinterpret_cast<const V*>(p); }
__global__ void autovec(const float* in, float4* out) {
  int i = threadIdx.x;
  auto p = as<float4>(in);
  out[i] = p[i];
}
"""


@pytest.mark.rule("M10")
def test_an_auto_pointer_to_float4_loads_16_bytes(tmp_path: Path) -> None:
    _needs_clang_cuda()
    guessed = _analyse(tmp_path, AUTO_FLOAT4, with_database=False)["autovec"]
    exact = _analyse(tmp_path, AUTO_FLOAT4, with_database=True)["autovec"]
    assert guessed.load_bytes != 16  # the text cannot see through the template's return
    assert exact.load_bytes == 16 and exact.store_bytes == 16
    assert any(n.startswith("types from clang [M10]: 1 declaration") for n in exact.notes)


TYPEDEF_CHAIN = """
template <typename T> struct Acc { using type = decltype(T() * 1.0); };
template <typename T> struct Pick { typedef typename Acc<T>::type type; };
template <typename T>
__global__ void accumulate(const T* in, T* out) {
  typedef typename Pick<T>::type acc_t;
  acc_t sum = 0;
  for (int j = 0; j < 4; j++) sum += in[j];
  out[threadIdx.x] = sum;
}
void run(const float* in, float* out) { accumulate<float><<<1, 32>>>(in, out); }
"""


@pytest.mark.rule("M10")
def test_a_typedef_chain_through_a_dependent_type_is_the_instance_type(tmp_path: Path) -> None:
    _needs_clang_cuda()
    exact = _analyse(tmp_path, TYPEDEF_CHAIN, with_database=True)["accumulate"]
    # float * 1.0 is double: the four additions into `sum` are double, the loads float
    assert exact.flops_dp == 4 and exact.flops_sp == 0
    assert exact.load_bytes == 16 and exact.store_bytes == 4


PADDED = """
struct Pair { double a; int b; };
__global__ void copy(const Pair* in, Pair* out) {
  int i = threadIdx.x;
  out[i] = in[i];
}
"""


@pytest.mark.rule("M10")
def test_a_struct_counts_its_real_sizeof_with_padding(tmp_path: Path) -> None:
    _needs_clang_cuda()
    guessed = _analyse(tmp_path, PADDED, with_database=False)["copy"]
    exact = _analyse(tmp_path, PADDED, with_database=True)["copy"]
    assert guessed.load_bytes == 12  # the fields' sizes summed (rule M4)
    assert exact.load_bytes == 16 and exact.store_bytes == 16


INSTANCE = """
template <typename T>
__global__ void scale(const T* in, T* out, T s) { out[threadIdx.x] = in[threadIdx.x] * s; }
template <typename T> void launch(const T* in, T* out) { scale<T><<<1, 32>>>(in, out, T(2)); }
void host(const double* in, double* out) { launch(in, out); }
"""


@pytest.mark.rule("M10")
def test_a_template_kernel_launched_from_a_template_takes_the_units_instance(
    tmp_path: Path,
) -> None:
    _needs_clang_cuda()
    guessed = _analyse(tmp_path, INSTANCE, with_database=False)["scale"]
    exact = _analyse(tmp_path, INSTANCE, with_database=True)["scale"]
    assert (guessed.flops_sp, guessed.flops_dp) == (1, 0)  # rule D9: float
    assert (exact.flops_sp, exact.flops_dp) == (0, 1)
    assert exact.load_bytes == 8
    assert "types from clang [M10]: T=double (instance)" in exact.notes


BROKEN = """
#include "no_such_header.h"
struct Pair { double a; int b; };
__global__ void copy(const Pair* in, Pair* out) { out[threadIdx.x] = in[threadIdx.x]; }
"""


@pytest.mark.rule("M10")
def test_a_unit_that_does_not_parse_keeps_the_guesses_with_a_note(tmp_path: Path) -> None:
    _needs_clang_cuda()
    guessed = _analyse(tmp_path, BROKEN, with_database=False)["copy"]
    fallback = _analyse(tmp_path, BROKEN, with_database=True)["copy"]
    assert fallback.load_bytes == guessed.load_bytes == 12
    assert any(
        n.startswith("types guessed from the text [M10]: libclang could not parse k.cu")
        and "no_such_header.h" in n
        for n in fallback.notes
    ), fallback.notes


def test_turned_off_by_the_environment_counts_as_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs_clang_cuda()
    monkeypatch.setenv("ROOFCAST_LIBCLANG", "off")
    off = _analyse(tmp_path, PADDED, with_database=True)["copy"]
    assert off.load_bytes == 12 and off.notes == []


def test_the_cache_answers_again_until_an_included_file_changes(tmp_path: Path) -> None:
    _needs_clang_cuda()
    (tmp_path / "pair.h").write_text("struct Pair { double a; int b; };\n")
    source = tmp_path / "c.cu"
    source.write_text('#include "pair.h"\n__global__ void copy(const Pair* in) {}\n')
    unit = CompileUnit(file=source, entry=0, written_file="c.cu", std="c++17", cuda=True)
    first = clangast.unit_types(unit)
    key = (str(source.resolve()), 2, "in")
    assert first.parsed and first.declarations[key][0][1].size == 16
    assert clangast.unit_types(unit).declarations == first.declarations  # from the cache
    (tmp_path / "pair.h").write_text("struct Pair { double a; double b; int c; };\n")
    assert clangast.unit_types(unit).declarations[key][0][1].size == 24  # parsed anew


def test_clang_arguments_are_the_units_flags_as_a_list() -> None:
    unit = CompileUnit(
        file=Path("/src/a/main.cu"),
        entry=3,
        written_file="main.cu",
        defines=(("N", "64"), ("USE_X", "1")),
        undefines=frozenset({"DEBUG"}),
        include_dirs=(Path("/src/common"),),
        std="c++17",
        cuda=True,
        gpu_archs=("sm_86",),
    )
    args = clangast.clang_arguments(unit, "/res", "/cuda")
    assert args[:4] == ["-x", "cuda", "--cuda-host-only", "--cuda-gpu-arch=sm_86"]
    for flag in ("-DN=64", "-DUSE_X=1", "-UDEBUG", "-I/src/common", "-I/src/a",
                 "-std=c++17", "--cuda-path=/cuda", "-nocudalib"):  # fmt: skip
        assert flag in args
    assert args[args.index("-resource-dir") + 1] == "/res"
    host = CompileUnit(file=Path("/src/b/main.cpp"), entry=4, written_file="main.cpp")
    assert clangast.clang_arguments(host, None, None)[:3] == ["-x", "c++", "-fopenmp"]


def test_a_failed_parse_is_redone_once_the_missing_header_exists(tmp_path: Path) -> None:
    _needs_clang_cuda()
    source = tmp_path / "m.cu"
    source.write_text('#include "late.h"\n__global__ void copy(const Pair* in) {}\n')
    unit = CompileUnit(file=source, entry=0, written_file="m.cu", std="c++17", cuda=True)
    failed = clangast.unit_types(unit)
    assert not failed.parsed and "late.h" in failed.note
    assert not clangast.unit_types(unit).parsed  # the failure, from the cache
    (tmp_path / "late.h").write_text("struct Pair { double a; int b; };\n")
    again = clangast.unit_types(unit)
    assert again.parsed and again.declarations[(str(source.resolve()), 2, "in")][0][1].size == 16
