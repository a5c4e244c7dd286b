"""Matching manifest rows to analyzed kernels, on real fixture files and the real analyzer."""
from __future__ import annotations

from pathlib import Path

import pytest

from roofcast.evaluation.manifest import load_manifest
from roofcast.evaluation.matching import SourceIndex, TargetKernels
from roofcast.evaluation.signatures import (
    bare_function_name,
    normalise_type,
    omp_entry_parts,
    parse_signature,
)

DATA = Path(__file__).parent / "data" / "eval"


@pytest.mark.parametrize(("text", "name"), [
    ("calculateForce(double (*) [400][400], double (*) [400][400], double)", "calculateForce"),
    ("main", "main"),
    ("void RunTest<float>(std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >, OptionParser&)", "RunTest"),
    ("MandelParallel::Evaluate()", "Evaluate"),
    ("miniFE::TypeTraits<miniFE::Vector<double, int, int>::ScalarType>::magnitude_type "
     "miniFE::dot<miniFE::Vector<double, int, int> >(miniFE::Vector<double, int, int> const&)",
     "dot"),
    ("miniFE::matvec_std<miniFE::CSRMatrix<double, int, int> >::operator()(int&)", "operator()"),
    ("double morphology<(MorphOpType)0>(unsigned char*, int)", "morphology"),
    ("symm_tridiag_matrix<double> gpu_lanczos<double>(csr_matrix<double> const&, int)",
     "gpu_lanczos"),
    ("(anonymous namespace)::helper(int)", "helper"),
    ("_ZL14timedReductionPKfPfPl", "timedReduction"),
    ("_ZN6miniFE6daxpbyINS_6VectorIdiiEEEEvdRKT_dRS3_", "daxpby"),
])
def test_bare_function_name(text, name):
    assert bare_function_name(text) == name


def test_signature_parts():
    sig = parse_signature("void gen_copy<int, unsigned long, int>(T1 *, T2 *, const T3 *, int)")
    assert sig.name == "gen_copy"
    assert sig.template_args == ("int", "unsigned long", "int")
    assert sig.param_types == ("T1 *", "T2 *", "const T3 *", "int")
    assert parse_signature("perfKernel2()").param_types == ()


def test_type_normalisation_agrees_across_spellings():
    assert normalise_type("double (*) [400][400]") == normalise_type("double ***")
    assert normalise_type("const float * __restrict__") == normalise_type("float const*")
    assert normalise_type("size_t") == normalise_type("unsigned long")
    assert normalise_type("int *") != normalise_type("int")


def test_omp_entry_parts():
    assert omp_entry_parts("__omp_offloading_10309_2fc47bb_main_l1") == (0x2FC47BB, "main", 1)
    assert omp_entry_parts("saxpy(int)") is None


@pytest.fixture(scope="module")
def matches():
    rows = load_manifest(DATA / "manifest.csv")
    return {m.row.index: m for m in SourceIndex(DATA / "sources").match_all(rows)}


def test_cuda_rows_match_by_name_and_template_instance(matches):
    assert matches[0].kernel.name == "saxpy" and matches[0].kernel.line == 4
    assert matches[1].kernel.name == "scale" and matches[1].defines == {"T": "float"}
    assert matches[2].kernel is matches[1].kernel and matches[2].defines == {"T": "double"}


def test_signature_disambiguates_same_name_in_two_files(matches):
    chosen = matches[4].kernel
    assert Path(chosen.file).name == "second.cu" and len(chosen.params) == 3
    assert "2 candidates" in matches[4].note


def test_signature_name_wins_over_ncu_prefix_name(matches):
    # the row's `kernel` says 'reduce' (ncu -k prefix); its signature names reduceFinal
    assert matches[5].kernel.name == "reduceFinal"


def test_omp_rows_match_function_and_line(matches):
    assert (matches[8].kernel.name, matches[8].kernel.line) == ("saxpy", 7)
    assert matches[8].note == ""
    assert matches[10].kernel.line == 29  # Grid::relax -> relax
    assert matches[11].kernel.line == 15  # void scale<float>(...) -> scale


def test_omp_line_fallback_is_recorded(matches):
    assert matches[9].kernel.line == 43 and matches[9].note == "line -1"


def test_unmatched_rows_say_why(matches):
    assert "missing_kernel" in matches[6].reason and matches[6].kernel is None
    assert "no source folder" in matches[7].reason
    assert "regions at lines 43" in matches[12].reason
    assert matches[13].kernel is None


def test_each_target_is_discovered_once():
    calls: list[str] = []

    def counting(folder: Path, defines) -> TargetKernels:
        calls.append(folder.name)
        from roofcast.evaluation.matching import discover_target

        return discover_target(folder, defines)

    rows = load_manifest(DATA / "manifest.csv")
    SourceIndex(DATA / "sources", discover=counting).match_all(rows)
    assert sorted(calls) == sorted({r.target for r in rows})


def test_same_line_regions_in_several_files_pair_by_file_id(tmp_path):
    """Pragmas at line 1 of two headers included into main(): rows pair in file order."""
    folder = tmp_path / "src" / "pair-omp"
    folder.mkdir(parents=True)
    body = ("#pragma omp target teams distribute parallel for\n"
            "for (int i = 0; i < n; i++) {op}\n")
    (folder / "a_kernel.h").write_text(body.format(op="x[i] = 1.0f;"))
    (folder / "b_kernel.h").write_text(body.format(op="x[i] = x[i] * 2.0f;"))
    (folder / "main.cpp").write_text(
        "void main_like(float *x, int n) {\n"
        "#pragma omp target data map(tofrom: x[0:n])\n"
        "{\n#include \"a_kernel.h\"\n#include \"b_kernel.h\"\n}\n}\n"
        "int main() { float x[8]; main_like(x, 8); return 0; }\n"
    )
    header = ("target,family,language,kernel,kernel_signature,omp_function,omp_line,block,grid,"
              "exe_args,label\n")
    lines = [
        'pair-omp,pair,OMP,e,__omp_offloading_1_20_main_like_l1,main_like,1,"(1,1,1)","(1,1,1)",,'
        'Bandwidth\n',
        'pair-omp,pair,OMP,e,__omp_offloading_1_1f_main_like_l1,main_like,1,"(1,1,1)","(1,1,1)",,'
        'Bandwidth\n',
    ]
    manifest = tmp_path / "m.csv"
    manifest.write_text(header + "".join(lines))
    rows = load_manifest(manifest)
    found = SourceIndex(tmp_path / "src").match_all(rows)
    assert all(m.matched for m in found), [m.reason for m in found]
    # file id 0x1f < 0x20: the second row is the first file (a_kernel.h)
    assert Path(found[1].kernel.file).name == "a_kernel.h"
    assert Path(found[0].kernel.file).name == "b_kernel.h"


def test_identical_kernels_prefer_the_file_the_build_names(tmp_path):
    """Two copies of a kernel with the same signature: the Makefile's source wins."""
    folder = tmp_path / "src" / "twin-cuda"
    folder.mkdir(parents=True)
    kernel = ("__global__ void step(float *x, int n)\n"
              "{ int i = threadIdx.x; if (i < n) x[i] += 1.0f; }\n")
    (folder / "a_old.cu").write_text(kernel)
    (folder / "b_new.cu").write_text(kernel)
    (folder / "Makefile").write_text("source = b_new.cu\nobj = $(source:.cu=.o)\n")
    header = ("target,family,language,kernel,kernel_signature,omp_function,omp_line,block,grid,"
              "exe_args,label\n")
    row = 'twin-cuda,twin,CUDA,step,"step(float *, int)",,,"(32,1,1)","(1,1,1)",,Bandwidth\n'
    manifest = tmp_path / "m.csv"
    manifest.write_text(header + row)
    [match] = SourceIndex(tmp_path / "src").match_all(load_manifest(manifest))
    assert Path(match.kernel.file).name == "b_new.cu"
    (folder / "Makefile").write_text("source = a_old.cu\n")
    [match] = SourceIndex(tmp_path / "src").match_all(load_manifest(manifest))
    assert Path(match.kernel.file).name == "a_old.cu"
