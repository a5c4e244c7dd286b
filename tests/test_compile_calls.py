"""Compile mode, calls of the program's own functions (docs/counting.md S15): a device
function the compiler did not inline runs once per executed CALL, so its instructions
count its own executions times its calls'; the toolkit's slow paths stay off (S6)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from compile_tools import clang_project, needs_clang, needs_nvcc
from roofcast.analyzer.compdb import load_database
from roofcast.analyzer.compile import Compiler
from roofcast.analyzer.discover import discover_files
from roofcast.analyzer.ompcompile import find_offload_tools
from roofcast.analyzer.sass import classify_kernel, parse_disassembly, program_function
from roofcast.features import count_features
from roofcast.features.sasscount import class_counts, recount
from roofcast.features.vector import FeatureVector
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import count_kernels
from roofcast.results import LaunchContext

# Written for these tests: a function kept out of line, called n times in a loop (line 10)
# and once after it (line 11); its body is 4 FFMA (its loop of 4 trips unrolled fully).
KERNELS = """\
__device__ __noinline__ float poly(const float* c, float x) {
  float r = x;
  for (int j = 0; j < 4; j++) r = r * x + c[j];
  return r;
}

__global__ void calls(const float* c, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int k = 0; k < n; k++) s += poly(c, x[i + k]);
  y[i] = s + poly(c, x[i]);
}
"""


def _project(tmp_path: Path) -> Path:
    """kernels.cu and a compile database building it with clang, as gpuFLOPBench's did."""
    return clang_project(tmp_path, KERNELS)


def _count(folder: Path, cache: Path) -> FeatureVector:
    compiler = Compiler("sm_86", load_database(folder), cache_root=cache)
    found = discover_files([folder / "kernels.cu"], [folder], {}, frozenset(), None)
    ir = next(k for k in found.kernels if k.name == "calls")
    fv = count_features(ir, {}, line_loops=True)
    recount(ir, fv, compiler)
    return fv


def _check_per_call(fv: FeatureVector) -> None:
    assert fv.counted_from == "sass", fv.counted_why
    flops = sympy.expand(fv.flops_sp)
    (n,) = flops.free_symbols
    # per call 4 FFMA (8 FLOPs) and the caller's FADD: n + 1 calls, n + 1 FADDs
    assert flops == 9 * n + 9
    # the function's FLOPs count at the lines its calls run from
    assert sympy.expand(fv.sass_by_line[10]["flops_sp"]) == 9 * n
    assert fv.sass_by_line[11]["flops_sp"] == 9
    assert all(fv.sass_by_line.get(line, {}).get("flops_sp", 0) == 0 for line in (2, 3))


@pytest.mark.rule("S15")
@needs_clang
def test_clang_function_not_inlined_counts_once_per_call(tmp_path: Path) -> None:
    fv = _count(_project(tmp_path), tmp_path / "cache")
    assert "clang" in fv.counted_why
    _check_per_call(fv)


@pytest.mark.rule("S15")
@needs_nvcc
def test_nvcc_function_not_inlined_counts_once_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROOFCAST_CLANG", "none")  # the same database compiled with nvcc
    fv = _count(_project(tmp_path), tmp_path / "cache")
    assert fv.counted_why.startswith("nvcc")
    _check_per_call(fv)


# Written for these tests: a kernel calling, in a loop of 8 trips (line 2), a function of
# its own section (2 FFMA) and, once, a toolkit slow path (off the main path, S6).
SEPARATE = """\
        .section        .text._Z1kPf,"ax",@progbits
_Z1kPf:
        //## File "/s/k.cu", line 1
        /*0000*/                   MOV R2, RZ ;
.L_x_0:
        //## File "/s/k.cu", line 2
        /*0010*/                   CALL.ABS.NOINC `(_Z1fff) ;
        /*0020*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0030*/                   ISETP.GE.AND P0, PT, R5, 0x8, PT ;
        /*0040*/              @!P0 BRA `(.L_x_0) ;
        //## File "/s/k.cu", line 3
        /*0050*/               @P1 CALL.REL.NOINC `($__internal_0_$__cuda_sm20_rcp_slowpath) ;
        /*0060*/                   EXIT ;
$__internal_0_$__cuda_sm20_rcp_slowpath:
        /*0070*/                   FFMA R2, R3, R3, R2 ;
        /*0080*/                   RET.REL.NODEC R20 `(_Z1kPf) ;
.L_x_1:
        /*0090*/                   BRA `(.L_x_1);
        .section        .text._Z1fff,"ax",@progbits
_Z1fff:
        //## File "/s/k.cu", line 7
        /*0000*/                   FFMA R4, R4, R5, R6 ;
        /*0010*/                   FFMA R4, R4, R5, R6 ;
        /*0020*/                   RET.ABS.NODEC R20 0x0 ;
.L_x_2:
        /*0030*/                   BRA `(.L_x_2);
"""


@pytest.mark.rule("S15", "S6")
def test_function_of_its_own_section_counts_per_call_and_slow_paths_do_not() -> None:
    functions = parse_disassembly(SEPARATE)
    sass = classify_kernel(functions["_Z1kPf"], functions)
    loops = {("/s/k.cu", 2): (sympy.Integer(8),), ("/s/k.cu", 7): ()}
    counts = class_counts(sass, loops)
    assert counts["ffma"] == 16  # 2 FFMA, 8 calls; the slow path's FFMA not counted
    alone = class_counts(classify_kernel(functions["_Z1kPf"]), loops)
    assert alone.get("ffma", 0) == 0  # without the unit's functions the callee is unseen


@pytest.mark.rule("S15")
def test_which_call_targets_are_the_programs_functions() -> None:
    assert program_function("$_Z5callsPKfS0_Pfi$_Z4polyPKff")
    assert program_function("_Z21Fresnel_Sine_Integrald")
    assert program_function("$_Z1kPf$__internal_accurate_pow")  # S23: pow's core
    assert not program_function("$__internal_0_$__cuda_sm20_div_rn_f64_full")
    assert not program_function(".L_x_17")
    assert not program_function("malloc")


# Written for these tests: a kernel calling, in a loop of 8 trips (line 2), pow's core
# routine as clang places it (`$<kernel>$__internal_accurate_pow`: 2 DFMA, 3 integer
# instructions), and once, under a predicate, the division's slow path (S6).
POW = """\
        .section        .text._Z1kPd,"ax",@progbits
_Z1kPd:
        //## File "/s/k.cu", line 1
        /*0000*/                   MOV R2, RZ ;
.L_x_0:
        //## File "/s/k.cu", line 2
        /*0010*/                   CALL.REL.NOINC `($_Z1kPd$__internal_accurate_pow) ;
        /*0020*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0030*/                   ISETP.GE.AND P0, PT, R5, 0x8, PT ;
        /*0040*/              @!P0 BRA `(.L_x_0) ;
        //## File "/s/k.cu", line 3
        /*0050*/               @P1 CALL.REL.NOINC `($__internal_0_$__cuda_sm20_div_rn_f64_full) ;
        /*0060*/                   EXIT ;
$__internal_0_$__cuda_sm20_div_rn_f64_full:
        /*0070*/                   DFMA R2, R4, R4, R2 ;
        /*0080*/                   IADD3 R9, R9, 0x1, RZ ;
        /*0090*/                   RET.REL.NODEC R20 `(_Z1kPd) ;
$_Z1kPd$__internal_accurate_pow:
        //## File "/usr/include/math.h", line 9
        /*00a0*/                   LOP3.LUT R7, R7, 0x7ff00000, RZ, 0xc0, !PT ;
        /*00b0*/                   DFMA R2, R4, R6, R2 ;
        /*00c0*/                   SHF.R.U32.HI R7, RZ, 0x14, R7 ;
        /*00d0*/                   DFMA R2, R2, R6, R4 ;
        /*00e0*/                   IADD3 R7, R7, -0x3ff, RZ ;
        /*00f0*/                   RET.REL.NODEC R20 `(_Z1kPd) ;
.L_x_1:
        /*0100*/                   BRA `(.L_x_1);
"""


@pytest.mark.rule("S23")
def test_pows_core_routine_counts_per_call_unlike_slow_paths() -> None:
    sass = classify_kernel(parse_disassembly(POW)["_Z1kPd"])
    counts = class_counts(sass, {("/s/k.cu", 2): (sympy.Integer(8),)})
    assert counts["dfma"] == 16  # 2 DFMA per call, 8 calls; the slow path's not counted
    assert counts["integer"] == 8 * (2 + 3)  # the loop's control and the routine's


# Written for these tests: clang's line table without inline chains, a function with a
# loop of m trips (line 4) inlined twice: both copies' back edges are on line 4, one loop
# after the other and alike in size; the second is no remainder of the first.
TWICE = """\
        .section        .text._Z1kPfi,"ax",@progbits
_Z1kPfi:
        //## File "/s/k.cu", line 9
        /*0000*/                   MOV R2, RZ ;
.L_x_0:
        //## File "/s/k.cu", line 4
        /*0010*/                   LDG.E R6, [R4.64] ;
        /*0020*/                   FFMA R2, R6, R6, R2 ;
        /*0030*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0040*/                   ISETP.GE.AND P0, PT, R5, c[0x0][0x168], PT ;
        /*0050*/              @!P0 BRA `(.L_x_0) ;
.L_x_1:
        //## File "/s/k.cu", line 4
        /*0060*/                   LDG.E R6, [R4.64] ;
        /*0070*/                   FFMA R3, R6, R6, R3 ;
        /*0080*/                   IADD3 R7, R7, 0x1, RZ ;
        /*0090*/                   ISETP.GE.AND P0, PT, R7, c[0x0][0x168], PT ;
        /*00a0*/              @!P0 BRA `(.L_x_1) ;
        //## File "/s/k.cu", line 10
        /*00b0*/                   EXIT ;
.L_x_2:
        /*00c0*/                   BRA `(.L_x_2);
"""


@pytest.mark.rule("S4")
def test_two_copies_of_a_loop_on_one_line_are_both_main_loops() -> None:
    sass = classify_kernel(parse_disassembly(TWICE)["_Z1kPfi"])
    assert [loop.remainder for loop in sass.loops] == [False, False]
    m = sympy.Symbol("m")
    counts = class_counts(sass, {("/s/k.cu", 4): (m,)})
    assert counts["ffma"] == 2 * m  # one FFMA per trip in each copy


# Written for these tests: a loop of n trips (line 5, its body on line 6) unrolled 4 times,
# then a 2-fold chunk of its body and a remainder loop (a ladder, as clang and nvcc emit).
LADDER = """\
        .section        .text._Z1kPfi,"ax",@progbits
_Z1kPfi:
        //## File "/s/k.cu", line 4
        /*0000*/                   MOV R2, RZ ;
.L_x_0:
        //## File "/s/k.cu", line 6
        /*0010*/                   FFMA R2, R6, R6, R2 ;
        /*0020*/                   FFMA R2, R7, R7, R2 ;
        /*0030*/                   FFMA R2, R8, R8, R2 ;
        /*0040*/                   FFMA R2, R9, R9, R2 ;
        //## File "/s/k.cu", line 5
        /*0050*/                   IADD3 R5, R5, 0x4, RZ ;
        /*0060*/                   ISETP.GE.AND P0, PT, R5, R10, PT ;
        /*0070*/              @!P0 BRA `(.L_x_0) ;
        /*0080*/              @!P1 BRA `(.L_x_1) ;
        //## File "/s/k.cu", line 6
        /*0090*/                   FFMA R2, R6, R6, R2 ;
        /*00a0*/                   FFMA R2, R7, R7, R2 ;
.L_x_1:
        //## File "/s/k.cu", line 6
        /*00b0*/                   FFMA R2, R6, R6, R2 ;
        //## File "/s/k.cu", line 5
        /*00c0*/                   IADD3 R5, R5, 0x1, RZ ;
        /*00d0*/                   ISETP.GE.AND P0, PT, R5, c[0x0][0x168], PT ;
        /*00e0*/              @!P0 BRA `(.L_x_1) ;
        //## File "/s/k.cu", line 8
        /*00f0*/                   FADD R2, R2, R2 ;
        /*0100*/                   EXIT ;
.L_x_2:
        /*0110*/                   BRA `(.L_x_2);
"""


@pytest.mark.rule("S4")
def test_a_chunk_between_main_and_remainder_loop_is_the_remainders() -> None:
    sass = classify_kernel(parse_disassembly(LADDER)["_Z1kPfi"])
    n = sympy.Symbol("n")
    counts = class_counts(sass, {("/s/k.cu", 5): (n,), ("/s/k.cu", 6): (n,)})
    assert counts["ffma"] == n  # the main loop's 4 FFMA n/4 times; not the chunk's 2
    assert counts["fadd"] == 1  # after the loop: kept


# Written for these tests: two versions of one loop (line 4) behind a branch; after the
# first an unconditional branch jumps over the second: a thread runs one of them.
VERSIONS = """\
        .section        .text._Z1kPfi,"ax",@progbits
_Z1kPfi:
        //## File "/s/k.cu", line 3
        /*0000*/              @P1 BRA `(.L_x_1) ;
.L_x_0:
        //## File "/s/k.cu", line 4
        /*0010*/                   LDG.E R6, [R4.64] ;
        /*0020*/                   FFMA R2, R6, R6, R2 ;
        /*0030*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0040*/                   ISETP.GE.AND P0, PT, R5, c[0x0][0x168], PT ;
        /*0050*/              @!P0 BRA `(.L_x_0) ;
        /*0060*/                   BRA `(.L_x_2) ;
.L_x_1:
        //## File "/s/k.cu", line 4
        /*0070*/                   LDG.E.64 R6, [R4.64] ;
        /*0080*/                   FFMA R3, R6, R6, R3 ;
        /*0090*/                   IADD3 R7, R7, 0x1, RZ ;
        /*00a0*/                   ISETP.GE.AND P0, PT, R7, c[0x0][0x168], PT ;
        /*00b0*/              @!P0 BRA `(.L_x_1) ;
.L_x_2:
        //## File "/s/k.cu", line 10
        /*00c0*/                   EXIT ;
.L_x_3:
        /*00d0*/                   BRA `(.L_x_3);
"""


@pytest.mark.rule("S4")
def test_a_copy_jumped_over_after_the_first_is_an_alternative_version() -> None:
    sass = classify_kernel(parse_disassembly(VERSIONS)["_Z1kPfi"])
    assert [loop.remainder for loop in sass.loops] == [False, True]
    m = sympy.Symbol("m")
    assert class_counts(sass, {("/s/k.cu", 4): (m,)})["ffma"] == m


# Written for these tests: an OpenMP region calling, once per element, a function kept out
# of line (2 FFMA in its body once its loop of 2 trips is unrolled).
OFFLOAD = """\
#pragma omp declare target
__attribute__((noinline)) float twice(const float *c, float x) {
  float r = x;
  for (int j = 0; j < 2; j++) r = r * x + c[j];
  return r;
}
#pragma omp end declare target

void apply(int n, const float *c, float *x) {
#pragma omp target teams distribute parallel for map(to: c[0:2]) map(tofrom: x[0:n])
  for (int i = 0; i < n; i++)
    x[i] = twice(c, x[i]);
}
"""


@pytest.mark.rule("S15", "S13")
@pytest.mark.skipif(
    bool(find_offload_tools().missing("sm_86")),
    reason=f"OpenMP offload tools missing: {find_offload_tools().missing('sm_86')}",
)
def test_openmp_function_not_inlined_counts_per_unit_of_work(tmp_path: Path) -> None:
    path = tmp_path / "apply.cpp"
    path.write_text(OFFLOAD)
    (ir,) = discover_files([path], [path.parent]).kernels
    context = LaunchContext((128, 1, 1), (8, 1, 1), extra={"n": 4096.0})
    compiler = Compiler("sm_86", cache_root=tmp_path / "cache")
    (result,) = count_kernels([ir], context=context, gpu=load_gpu("rtx3080"), compiler=compiler)
    assert result.features.counted_from == "sass", result.features.counted_why
    assert result.resolved.flops["sp"] == 4  # per element: one call, 2 FFMA


# Written for these tests: a loop of n trips (line 2) around an atomic's compare-and-swap
# retry loop on a header's line (50), a loop the source does not have.
RETRY = """\
        .section        .text._Z1kPdi,"ax",@progbits
_Z1kPdi:
.L_x_0:
        //## File "/s/k.cu", line 2
        /*0000*/                   IADD3 R5, R5, 0x1, RZ ;
.L_x_1:
        //## File "/s/h.h", line 50
        /*0010*/                   DADD R8, R6, 1 ;
        /*0020*/                   ATOMS.CAST.SPIN.64 P0, [R2], R6, R8 ;
        /*0030*/              @!P0 BRA `(.L_x_1) ;
        //## File "/s/k.cu", line 2
        /*0040*/                   ISETP.GE.AND P1, PT, R5, c[0x0][0x168], PT ;
        /*0050*/              @!P1 BRA `(.L_x_0) ;
        /*0060*/                   EXIT ;
.L_x_2:
        /*0070*/                   BRA `(.L_x_2);
"""


@pytest.mark.rule("S5")
def test_a_loop_the_source_lacks_runs_once_per_trip_of_the_loops_around_it() -> None:
    sass = classify_kernel(parse_disassembly(RETRY)["_Z1kPdi"])
    n = sympy.Symbol("n")
    counts = class_counts(sass, {("/s/k.cu", 2): (n,)})
    assert counts["dadd"] == n  # at least once per trip of the loop on line 2


@pytest.mark.rule("S23")
@needs_clang
def test_clangs_pow_counts_its_core_routine(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    (folder / "kernels.cu").write_text(
        "__global__ void calls(const double* x, double* y, double e) {\n"
        "  int i = threadIdx.x;\n"
        "  y[i] = pow(x[i], e);\n"
        "}\n"
    )
    compiler = Compiler("sm_86", load_database(folder), cache_root=tmp_path / "cache")
    sass, why = compiler.kernel(folder / "kernels.cu", "calls")
    assert sass is not None, why
    routine = [g for g in sass.groups if g.callee >= 0]
    assert routine, "clang calls pow's core routine out of line"
    core = sum(g.counts["integer"] for g in routine)
    fv = _count(folder, tmp_path / "cache")
    assert fv.int_ops >= core > 20  # the routine runs once, its bit twiddling included


# Written for these tests: ptxas's loop exit through a CALL to a local label (line 2's loop
# of 8 trips leaves by `@!P0 CALL .L_x_1`, its back edge the BRA after it), then code after
# the loop (line 4: one FFMA) and a toolkit slow path ending in RET (off the main path, S6).
EXIT_CALL = """\
        .section        .text._Z1kPf,"ax",@progbits
_Z1kPf:
        //## File "/s/k.cu", line 1
        /*0000*/                   MOV R2, RZ ;
.L_x_0:
        //## File "/s/k.cu", line 2
        /*0010*/                   FADD R2, R2, R3 ;
        /*0020*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0030*/                   ISETP.GE.AND P0, PT, R5, 0x8, PT ;
        /*0040*/              @!P0 CALL.REL.NOINC `(.L_x_1) ;
        /*0050*/                   BRA `(.L_x_0) ;
.L_x_1:
        //## File "/s/k.cu", line 4
        /*0060*/                   FFMA R2, R2, R2, R3 ;
        /*0070*/               @P1 CALL.REL.NOINC `($__internal_0_$__cuda_sm20_rcp_slowpath) ;
        /*0080*/                   EXIT ;
$__internal_0_$__cuda_sm20_rcp_slowpath:
        /*0090*/                   FFMA R2, R3, R3, R2 ;
        /*00a0*/                   RET.REL.NODEC R20 `(_Z1kPf) ;
.L_x_2:
        /*00b0*/                   BRA `(.L_x_2);
"""


@pytest.mark.rule("S24")
def test_a_call_to_a_local_label_is_a_loop_exit_not_a_slow_path() -> None:
    sass = classify_kernel(parse_disassembly(EXIT_CALL)["_Z1kPf"])
    counts = class_counts(sass, {("/s/k.cu", 2): (sympy.Integer(8),), ("/s/k.cu", 4): ()})
    assert counts["fadd"] == 8  # the loop's body, 8 trips
    assert counts["ffma"] == 1  # the code after the loop runs; the slow path's does not


# Written for these tests: an integer recurrence (line 5) unrolled 8 times by folding eight
# steps into one (no FP or memory work in the loop), then its remainder loop stepping by 1.
RECURRENCE = """\
        .section        .text._Z1rPj,"ax",@progbits
_Z1rPj:
        //## File "/s/r.cu", line 4
        /*0000*/                   LOP3.LUT R6, R5, 0x7ffffff8, RZ, 0xc0, !PT ;
.L_x_0:
        //## File "/s/r.cu", line 5
        /*0010*/                   IADD3 R6, R6, -0x8, RZ ;
        /*0020*/                   IMAD R5, R5, R0, 0x5e9248d8 ;
        /*0030*/                   ISETP.NE.AND P1, PT, R6, RZ, PT ;
        /*0040*/                @P1 BRA `(.L_x_0) ;
.L_x_1:
        /*0050*/                   IADD3 R4, R4, -0x1, RZ ;
        /*0060*/                   IMAD R5, R5, R7, 0x1 ;
        /*0070*/                   ISETP.NE.AND P0, PT, R4, RZ, PT ;
        /*0080*/                @P0 BRA `(.L_x_1) ;
        //## File "/s/r.cu", line 6
        /*0090*/                   STG.E [R2.64], R5 ;
        /*00a0*/                   EXIT ;
.L_x_2:
        /*00b0*/                   BRA `(.L_x_2);
"""


@pytest.mark.rule("S25")
def test_an_integer_loop_is_unrolled_by_its_counters_step() -> None:
    sass = classify_kernel(parse_disassembly(RECURRENCE)["_Z1rPj"])
    assert [(loop.unroll, loop.remainder) for loop in sass.loops] == [(8, False), (1, True)]
    n = sympy.Symbol("n", positive=True)
    counts = class_counts(sass, {("/s/r.cu", 4): (), ("/s/r.cu", 5): (n,)})
    assert sympy.simplify(counts["integer"] - (1 + 3 * n / 8)) == 0  # 3 per 8 trips
