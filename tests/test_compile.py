"""Compile mode (--compile): SASS read and classed per source line, times the loops' trips
(docs/counting.md S0-S9), with real nvcc/nvdisasm runs where the toolkit is here."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
import sympy
from roofcast.analyzer.compile import (
    Compiler,
    Tools,
    demangled_base,
    find_tools,
    nvcc_command,
    sm_arch,
    unit_key,
)
from roofcast.analyzer.discover import discover_files
from roofcast.analyzer.sass import classify_kernel, parse_disassembly
from roofcast.features import count_features
from roofcast.features.sasscount import class_counts, recount
from roofcast.gpu_specs import load_gpu

REPO = Path(__file__).resolve().parent.parent
TOOLS = find_tools()
needs_tools = pytest.mark.skipif(
    bool(TOOLS.missing()), reason=f"compile mode tools missing: {TOOLS.missing()}"
)

# Written here for these tests: three small kernels whose SASS (nvcc 13, sm_86) was read by hand.
SMALL = """\
__global__ void axpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}

__global__ void sumsq(int n, const double* __restrict__ x, double* out) {
  int i = threadIdx.x;
  double s = 0.0;
  for (int k = 0; k < n; k++) {
    s += x[k * 64 + i] * x[k * 64 + i];
  }
  out[i] = s;
}

__global__ void fixed4(const float4* __restrict__ in, float* out) {
  int i = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < 4; k++) {
    float4 v = in[i * 4 + k];
    acc += v.x * v.y + v.z * v.w;
  }
  out[i] = acc;
}
"""

# A hand-written nvdisasm -gi excerpt: a loop unrolled 2x with a 1x remainder, an inlined
# callee line, a slow path reached by CALL, and the trap padding after EXIT.
LISTING = """\
//--------------------- .text._Z1kiPf --------------------------
        .section        .text._Z1kiPf,"ax",@progbits
_Z1kiPf:
        //## File "/s/k.cu", line 3
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;
        /*0010*/                   MOV R2, RZ ;
.L_x_1:
        //## File "/s/h.cuh", line 7 inlined at "/s/k.cu", line 5

        //## File "/s/k.cu", line 5
        /*0020*/                   FFMA R2, R3, R3, R2 ;
        /*0030*/                   FFMA R2, R4, R4, R2 ;
        /*0040*/                   LDG.E.64 R4, [R6.64] ;
        /*0048*/                   LDG.E.64 R10, [R6.64+0x8] ;
        //## File "/s/k.cu", line 4
        /*0050*/                   IADD3 R0, R0, 0x2, RZ ;
        /*0060*/                   ISETP.NE.AND P0, PT, R0, R9, PT ;
        /*0070*/               @P0 BRA `(.L_x_1) ;
.L_x_2:
        //## File "/s/h.cuh", line 7 inlined at "/s/k.cu", line 5
        /*0080*/                   FFMA R2, R3, R3, R2 ;
        /*0088*/                   LDG.E.64 R4, [R6.64] ;
        //## File "/s/k.cu", line 4
        /*0090*/               @P1 BRA `(.L_x_2) ;
        //## File "/s/k.cu", line 6
        /*00a0*/                   CALL.REL.NOINC `($__internal_0_$__slow) ;
        /*00b0*/                   STG.E.U16 [R4.64], R2 ;
        /*00c0*/                   EXIT ;
$__internal_0_$__slow:
        /*00d0*/                   DFMA R2, R2, R2, R2 ;
        /*00e0*/                   RET.REL.NODEC R4 `(_Z1kiPf) ;
.L_x_3:
        /*00f0*/                   BRA `(.L_x_3);
"""


def _groups(kernel) -> dict[tuple, Counter]:
    return {(g.where, g.depth, g.unroll): g.counts for g in kernel.groups}


@pytest.mark.rule("S2", "S4", "S6")
def test_listing_lines_loops_unroll_and_slow_paths() -> None:
    functions = parse_disassembly(LISTING)
    assert list(functions) == ["_Z1kiPf"]
    kernel = classify_kernel(functions["_Z1kiPf"])
    inlined = (("/s/h.cuh", 7), ("/s/k.cu", 5))
    # S2: the inlined chain survives the outermost-only line nvdisasm -gi repeats after it
    groups = _groups(kernel)
    assert groups[(inlined, 1, 2)] == Counter({"ffma": 2, "load_8": 2})
    assert groups[((("/s/k.cu", 4),), 1, 2)] == Counter({"integer": 2})
    assert groups[((("/s/k.cu", 3),), 0, 1)] == Counter({"integer": 1})  # MOV is no int op
    assert groups[((("/s/k.cu", 6),), 0, 1)] == Counter({"store_2": 1})
    # S4: main loop unrolled 2x (4 work instructions over the remainder's 2); S6: the
    # remainder loop, the slow path's DFMA and RET, and nothing of the trap loop, are dropped
    main = [loop for loop in kernel.loops if not loop.remainder]
    assert [(loop.start, loop.end, loop.unroll) for loop in main] == [(0x20, 0x70, 2)]
    assert kernel.totals()["dfma"] == 0
    assert kernel.dropped == 5  # 0x80-0x90 (remainder loop), 0xd0, 0xe0 (slow path)


@pytest.mark.rule("S3", "S5")
def test_executions_multiply_line_trips_over_unroll() -> None:
    kernel = classify_kernel(parse_disassembly(LISTING)["_Z1kiPf"])
    n, m = sympy.symbols("n m", positive=True)
    # k.cu line 5 lies in the kernel's loop of n trips; h.cuh line 7 in a callee loop of m
    line_loops = {("/s/k.cu", 4): (n,), ("/s/k.cu", 5): (n,), ("/s/h.cuh", 7): (m,)}
    counts = class_counts(kernel, line_loops)
    # S5: 2 FFMA per kept iteration, n/2 iterations: the 1 kept loop takes the outer trip only
    assert sympy.simplify(counts["ffma"] - n) == 0
    assert sympy.simplify(counts["integer"] - (n + 1)) == 0


UNROLLED = """\
        .section        .text._Z1uPf,"ax",@progbits
        //## File "/s/u.cu", line 4
        /*0000*/                   MOV R0, RZ ;
.L_x_1:
        //## File "/s/u.cu", line 5
        /*0010*/                   LDG.E R2, [R4.64] ;
        /*0020*/                   LDG.E R3, [R4.64+0x4] ;
        /*0030*/                   FADD R6, R6, R2 ;
        /*0040*/                   FADD R6, R6, R3 ;
        //## File "/s/u.cu", line 4
        /*0050*/                   IADD3 R0, R0, 0x2, RZ ;
        /*0060*/                   ISETP.NE.AND P0, PT, R0, 0x40, PT ;
        /*0070*/               @P0 BRA `(.L_x_1) ;
        /*0080*/                   EXIT ;
"""


@pytest.mark.rule("S8")
def test_unrolled_without_remainder_needs_a_constant_trip_it_divides() -> None:
    kernel = classify_kernel(parse_disassembly(UNROLLED)["_Z1uPf"])
    assert [(loop.unroll, loop.copies) for loop in kernel.loops] == [(1, 2)]
    n = sympy.Symbol("n", positive=True)
    for trip, runs in ((sympy.Integer(64), 32), (sympy.Integer(63), 63), (n, n)):
        loops = {("/s/u.cu", 4): (trip,), ("/s/u.cu", 5): (trip,)}
        assert class_counts(kernel, loops)["fadd"] == 2 * runs  # S8: 2 copies when 2 | trip


# A kept loop of 8 trips (line 4) whose body is an inner source loop of 4 trips (line 6)
# unrolled fully: 4 copies of each work instruction, none of them the kept loop's unrolling.
INNER_UNROLLED = """\
        .section        .text._Z1fPf,"ax",@progbits
        //## File "/s/f.cu", line 3
        /*0000*/                   MOV R0, RZ ;
.L_x_1:
        //## File "/s/f.cu", line 6
        /*0010*/                   LDG.E R2, [R4.64] ;
        /*0020*/                   LDG.E R3, [R4.64+0x4] ;
        /*0030*/                   LDG.E R6, [R4.64+0x8] ;
        /*0040*/                   LDG.E R7, [R4.64+0xc] ;
        /*0050*/                   FADD R8, R8, R2 ;
        /*0060*/                   FADD R8, R8, R3 ;
        /*0070*/                   FADD R8, R8, R6 ;
        /*0080*/                   FADD R8, R8, R7 ;
        //## File "/s/f.cu", line 4
        /*0090*/                   IADD3 R0, R0, 0x1, RZ ;
        /*00a0*/                   ISETP.NE.AND P0, PT, R0, 0x8, PT ;
        /*00b0*/               @P0 BRA `(.L_x_1) ;
        /*00c0*/                   EXIT ;
"""


@pytest.mark.rule("S5", "S8")
def test_copies_of_a_fully_unrolled_inner_loop_are_no_unrolling() -> None:
    kernel = classify_kernel(parse_disassembly(INNER_UNROLLED)["_Z1fPf"])
    assert [loop.copies for loop in kernel.loops] == [4]  # what the reader sees repeated
    eight, four = sympy.Integer(8), sympy.Integer(4)
    counts = class_counts(kernel, {("/s/f.cu", 4): (eight,), ("/s/f.cu", 6): (eight, four)})
    # S5: line 6 lies in 2 source loops but 1 kept one: each copy runs once per outer trip;
    # S8 does not divide by the 4 copies (they are the inner loop's), though 4 divides 8
    assert (counts["fadd"], counts["load_4"], counts["integer"]) == (32, 32, 16)
    # the same body as the kept loop's own line (a loop unrolled 4x by the compiler) is S8
    own = class_counts(kernel, {("/s/f.cu", 4): (eight,), ("/s/f.cu", 6): (eight,)})
    assert (own["fadd"], own["integer"]) == (8, 4)
    # an inner loop of 2 trips: 4 copies are 2 of the inner loop's 2, so the kept loop is
    # unrolled 2x (#pragma unroll 2): 8 / 2 kept trips run 4 FADDs, 8 x 2 in all
    two = sympy.Integer(2)
    pair = class_counts(kernel, {("/s/f.cu", 4): (eight,), ("/s/f.cu", 6): (eight, two)})
    assert (pair["fadd"], pair["integer"]) == (16, 8)


def test_names_arch_and_command_are_data() -> None:
    assert demangled_base("_Z6kernelPf") == "kernel"
    assert demangled_base("_ZN2ns6kernelEv") == "kernel"
    assert demangled_base("_Z6kernelIfEvPT_i") == "kernel"
    assert demangled_base("plain_c_kernel") == "plain_c_kernel"
    assert sm_arch(load_gpu("rtx3080").compute_capability) == "sm_86"
    assert sm_arch(load_gpu("h100_sxm").compute_capability) == "sm_90"
    assert sm_arch(load_gpu("mi300x").compute_capability) is None
    hostile = "1; rm -rf / $(id)"
    args = nvcc_command(
        "nvcc", "sm_80", Path("/p/a b.cu"), Path("/t/o.cubin"), None, {"X": hostile}
    )
    assert args[:6] == ["nvcc", "-cubin", "-arch=sm_80", "-O3", "-lineinfo", "-std=c++17"]
    assert "--expt-relaxed-constexpr" in args and "--extended-lambda" in args
    assert f"-DX={hostile}" in args  # one argument, never split or interpreted
    assert args[-1] == "/p/a b.cu" and "-I/p" in args


def _at(expr: sympy.Expr, n: int) -> sympy.Expr:
    return expr.subs({s: n for s in expr.free_symbols if s.name == "n"})


def _every(expr: sympy.Expr) -> sympy.Expr:
    """n bound to the launch's thread count: every thread passes `if (i < n)` (S16)."""
    threads = sympy.Mul(*(s for s in expr.free_symbols if s.name in ("blockDim_x", "gridDim_x")))
    return sympy.simplify(expr.subs({s: threads for s in expr.free_symbols if s.name == "n"}))


def _analyse(source: Path, compiler: Compiler) -> dict[str, object]:
    found = discover_files([source], [source.parent], {}, frozenset(), None)
    out = {}
    for ir in found.kernels:
        fv = count_features(ir, {}, line_loops=True)
        recount(ir, fv, compiler)
        out[ir.name] = fv
    return out


@pytest.mark.rule("S0", "S1", "S5", "S7")
@needs_tools
def test_small_kernels_match_hand_read_sass(tmp_path: Path) -> None:
    source = tmp_path / "small.cu"
    source.write_text(SMALL)
    compiler = Compiler("sm_86", cache_root=tmp_path / "cache")
    found = _analyse(source, compiler)
    assert {f.counted_from for f in found.values()} == {"sass"}
    axpy, sumsq, fixed4 = found["axpy"], found["sumsq"], found["fixed4"]
    # axpy: one FFMA; IMAD (index), ISETP (guard), 2 IMAD.WIDE (addresses); MOVs are not ints
    assert (_every(axpy.flops_sp), _every(axpy.int_ops)) == (2, 4)
    # sumsq: main loop unrolled 4x (4 LDG.64 + 4 DFMA over the remainder's 1 + 1), so its
    # 4 DFMA and 6 integer instructions run n/4 times; 17 integer instructions run once
    assert {s.name for s in sumsq.flops_dp.free_symbols} == {"n"}
    assert _at(sumsq.flops_dp, 1000) == 2000
    assert _at(sumsq.int_ops, 1000) == 1500 + 17
    assert sumsq.flops_sp == 0
    # fixed4: the 4-trip loop unrolled fully: each copy's FMUL, FFMA, FADD counted once
    assert (fixed4.flops_sp, fixed4.int_ops) == (16, 3)
    unit = compiler.unit(source)
    fixed = next(k for name, k in unit.kernels.items() if "fixed4" in name)
    assert fixed.totals()["load_16"] == 4


@pytest.mark.rule("S0")
@needs_tools
def test_cache_hit_on_rerun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "small.cu"
    source.write_text(SMALL)
    first = Compiler("sm_86", cache_root=tmp_path / "cache").unit(source)
    assert not first.error and not first.cached
    calls: list[list[str]] = []
    real_run = subprocess.run

    def counting_run(args, *rest, **kw):
        calls.append(list(args))
        return real_run(args, *rest, **kw)

    monkeypatch.setattr(subprocess, "run", counting_run)
    again = Compiler("sm_86", cache_root=tmp_path / "cache").unit(source)
    assert again.cached and not any("-cubin" in c for c in calls)  # no nvcc run
    assert {k: v.totals() for k, v in again.kernels.items()} == {
        k: v.totals() for k, v in first.kernels.items()
    }
    import roofcast.analyzer.compile as compile_module

    monkeypatch.setattr(compile_module, "_reader_digest", lambda: "another reader")
    reread = Compiler("sm_86", cache_root=tmp_path / "cache").unit(source)
    assert not reread.cached and not any("-cubin" in c for c in calls)  # SASS re-read only
    assert {k: v.totals() for k, v in reread.kernels.items()} == {
        k: v.totals() for k, v in first.kernels.items()
    }
    source.write_text(SMALL.replace("a * x[i]", "a * a * x[i]"))  # a changed file recompiles
    assert not Compiler("sm_86", cache_root=tmp_path / "cache").unit(source).cached


@pytest.mark.rule("S0")
@needs_tools
def test_failing_unit_falls_back_with_compiler_error(tmp_path: Path) -> None:
    source = tmp_path / "broken.cu"
    source.write_text('#include "missing_header.h"\n__global__ void k(float* x) { x[0] += 1.f; }\n')
    found = _analyse(source, Compiler("sm_86", cache_root=tmp_path / "cache"))
    fv = found["k"]
    assert fv.counted_from == "source"
    assert "nvcc failed" in fv.counted_why and "missing_header.h" in fv.counted_why
    assert fv.flops_sp == 1  # the source count stays


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "roofcast.cli", *args], capture_output=True, text=True, env=env
    )


def test_missing_tools_fall_back_to_source_counts(tmp_path: Path) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env["PATH"] = str(tmp_path)  # no nvcc, no nvdisasm on it
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    kernel = REPO / "kernels" / "cuda" / "streaming.cu"
    done = _cli("analyze", str(kernel), "-g", "rtx3080", "--compile", "-f", "json", env=env)
    assert done.returncode == 0, done.stderr
    warnings = [ln for ln in done.stderr.splitlines() if "--compile" in ln]
    assert len(warnings) == 1 and "nvcc not found" in warnings[0]
    kernels = json.loads(done.stdout)["kernels"]
    assert kernels and all(k["counted_from"] == "source" for k in kernels)
    assert all("nvcc not found" in k["counted_why"] for k in kernels)
    plain = _cli("analyze", str(kernel), "-g", "rtx3080", "-f", "json", env=env)
    before = {k["name"]: k["flops_per_thread"] for k in json.loads(plain.stdout)["kernels"]}
    assert {k["name"]: k["flops_per_thread"] for k in kernels} == before
    assert all("counted_from" not in k for k in json.loads(plain.stdout)["kernels"])


def test_missing_nvdisasm_is_named(tmp_path: Path) -> None:
    compiler = Compiler("sm_86", tools=Tools("/usr/bin/true", None), cache_root=tmp_path)
    sass, why = compiler.kernel(tmp_path / "x.cu", "k")
    assert sass is None and "nvdisasm not found" in why
    amd = Compiler(None, tools=Tools("/usr/bin/true", "/usr/bin/true"), cache_root=tmp_path)
    assert "no NVIDIA compute capability" in amd.kernel(tmp_path / "x.cu", "k")[1]


@needs_tools
def test_corpus_kernels_compile_for_real(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = _cli(
        "analyze", str(REPO / "kernels" / "cuda"), "-g", "a100", "--compile", "-f", "json",
        "-j", "2", env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    kernels = json.loads(done.stdout)["kernels"]
    by_source = [k for k in kernels if k["counted_from"] != "sass"]
    assert len(kernels) > 40
    # every corpus kernel is plain CUDA: each compiles, or its reason is the toolkit's own
    assert not by_source, [(k["name"], k["counted_why"]) for k in by_source]
    streaming = {k["name"]: k for k in kernels if k["file"].endswith("streaming.cu")}
    assert all(k["features"]["int_ops"] is not None for k in streaming.values())


@needs_tools
def test_kernel_in_header_compiles_in_its_includer(tmp_path: Path) -> None:
    (tmp_path / "kern.cuh").write_text(
        "__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n"
    )
    (tmp_path / "all.h").write_text('#include "kern.cuh"\n')
    (tmp_path / "main.cu").write_text('#include "all.h"\nint main() { return 0; }\n')
    compiler = Compiler("sm_86", cache_root=tmp_path / "cache")
    sass, why = compiler.kernel(tmp_path / "kern.cuh", "scale")
    assert sass is not None, why
    assert sass.totals()["fmul"] == 1
    assert (tmp_path / "main.cu").resolve() in compiler.candidates(
        (tmp_path / "kern.cuh").resolve()
    )
    (tmp_path / "src").mkdir()  # a header in a sub-folder, included from the folder above
    (tmp_path / "src" / "deep.cuh").write_text(
        "__global__ void twice(double* x) { x[threadIdx.x] *= 3.0; }\n"
    )
    (tmp_path / "app.cu").write_text('#include "src/deep.cuh"\nint main() { return 0; }\n')
    deep, why = compiler.kernel(tmp_path / "src" / "deep.cuh", "twice")
    assert deep is not None and deep.totals()["dmul"] == 1, why


@needs_tools
def test_template_instance_follows_the_bound_arguments(tmp_path: Path) -> None:
    source = tmp_path / "tmpl.cu"
    source.write_text(
        "template <typename T>\n"
        "__global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }\n"
        "template __global__ void scale<float>(float*, float);\n"
        "template __global__ void scale<double>(double*, double);\n"
    )
    found = discover_files([source], [tmp_path], {}, frozenset(), None)
    ir = next(k for k in found.kernels if k.name == "scale")
    compiler = Compiler("sm_86", cache_root=tmp_path / "cache")
    for bound, flops in (({"T": "double"}, ("dmul", "fmul")), ({"T": "float"}, ("fmul", "dmul"))):
        fv = count_features(ir, bound, line_loops=True)
        recount(ir, fv, compiler, bound)
        sass, _ = compiler.kernel(source, "scale", [bound["T"]])
        assert sass is not None
        assert sass.totals()[flops[0]] == 1 and sass.totals()[flops[1]] == 0
    fv = count_features(ir, {"T": "double"}, line_loops=True)
    recount(ir, fv, compiler, {"T": "double"})
    assert (fv.flops_dp, fv.flops_sp) == (1, 0)


BRANCHED = """\
        .section        .text._Z1rPf,"ax",@progbits
        //## File "/s/r.cu", line 3
        /*0000*/                   FSETP.GE.AND P0, PT, |R3|, 105615, PT ;
        /*0010*/                   FFMA R5, R0, -1.5707962512969970703, R3 ;
        /*0020*/              @!P0 BRA `(.L_x_5) ;
        /*0030*/                   SHF.R.U32.HI R0, RZ, 0x17, R3 ;
.L_x_7:
        /*0040*/                   IADD3 R10, R10, 0x1, RZ ;
        /*0050*/                   ISETP.NE.AND P6, PT, R10, 0x6, PT ;
        /*0060*/               @P6 BRA `(.L_x_7) ;
        /*0070*/                   LOP3.LUT R4, R4, 0x3, RZ, 0xc0, !PT ;
.L_x_5:
        /*0080*/                   FMUL R5, R5, R5 ;
        /*0090*/                   EXIT ;
"""


@pytest.mark.rule("S9")
def test_branched_over_region_is_slow_only_without_a_source_loop() -> None:
    kernel = classify_kernel(parse_disassembly(BRANCHED)["_Z1rPf"])
    assert list(kernel.regions.values()) == [[(("/s/r.cu", 3),)]]
    # S9: the loop on line 3 is no source loop -> the region (4 integer ops) is a slow path
    plain = class_counts(kernel, {("/s/r.cu", 3): ()})
    assert (plain.get("integer", 0), plain["ffma"], plain["fmul"]) == (0, 1, 1)
    # the same SASS under a source loop of 6 trips is a guarded loop: counted
    n = sympy.Integer(6)
    looped = class_counts(kernel, {("/s/r.cu", 3): (n,)})
    assert looped["integer"] == 2 + 2 * 6  # SHF and LOP3 once, the loop's two 6 times
    # a line of a file the counter walked but did not note (a callee it did not follow):
    # whether it lies in a source loop is unknown, so the region is counted
    unseen = class_counts(kernel, {("/s/r.cu", 9): ()})
    assert unseen["integer"] == 4


@needs_tools
def test_evaluate_compile_reports_compiled_share(tmp_path: Path) -> None:
    import os

    data = REPO / "tests" / "data" / "eval"
    # without clang, OpenMP rows are counted from source (tests/test_ompcompile.py compiles
    # them): the share is of all matched rows with counts, the fallbacks tallied by reason
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "ROOFCAST_CLANG": "none"}
    args = ["evaluate", "-m", str(data / "manifest.csv"), "-s", str(data / "sources")]
    args += ["-g", "rtx3080", "-q", "-p", "roofline", "-f", "json"]
    done = _cli(*args, "--compile", "-j", "2", env=env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert 0 < summary["compiled_share"] < 1
    assert any("no clang++ for OpenMP offload" in why for why in summary["compile_fallbacks"])
    plain = json.loads(_cli(*args, env=env).stdout)
    assert "compiled_share" not in plain
    assert plain["n"] == summary["n"]


EXCLUSIVE = """\
        .section        .text._Z1ePf,"ax",@progbits
        //## File "/s/e.cu", line 2
        /*0000*/                   ISETP.NE.AND P0, PT, R0, RZ, PT ;
        /*0010*/              @!P0 BRA `(.L_x_1) ;
        //## File "/s/e.cu", line 4
        /*0020*/                   FADD R2, R3, R4 ;
        /*0030*/                   FMUL R2, R2, R4 ;
        /*0040*/                   FFMA R2, R3, R3, R2 ;
        /*0050*/                   BRA `(.L_x_2) ;
.L_x_1:
        //## File "/s/e.cu", line 3
        /*0060*/                   FADD R2, R3, 1 ;
.L_x_2:
        //## File "/s/e.cu", line 5
        /*0070*/                   ISETP.NE.AND P1, PT, R5, RZ, PT ;
        /*0080*/               @P1 FADD R6, R2, R2 ;
        /*0090*/               @P1 FADD R6, R6, R2 ;
        /*00a0*/              @!P1 FMUL R6, R2, R2 ;
        /*00b0*/               @P0 IADD3 R7, R7, 0x1, RZ ;
        /*00c0*/                   ISETP.NE.AND P1, PT, R7, RZ, PT ;
        /*00d0*/              @!P1 FADD R6, R6, R6 ;
        /*00e0*/                   STG.E [R8.64], R6 ;
        /*00f0*/                   EXIT ;
"""


@pytest.mark.rule("S10")
def test_a_thread_runs_one_of_two_exclusive_paths() -> None:
    kernel = classify_kernel(parse_disassembly(EXCLUSIVE)["_Z1ePf"])
    # if/else: line 4's side (3 classed) is kept, line 3's FADD dropped; @P1 (2 FADD) beats
    # @!P1 (1 FMUL); the @P0 IADD3 has no complement, and P1 is written again before the
    # last @!P1 FADD: both run
    assert kernel.totals() == Counter({"fadd": 4, "fmul": 1, "ffma": 1, "integer": 4, "store_4": 1})
    assert kernel.dropped == 2
    assert (("/s/e.cu", 3),) not in {g.where for g in kernel.groups}


# Written for these tests: clang's if/else with its `then` arm predicated before the branch
# that skips the `else` (line 3: one FADD under @!P0, then @!P0 BRA over line 5's FFMA and
# FADD); then the same shape with P0 written again between the arm and the branch.
PREDICATED_THEN = """\
        .section        .text._Z1pPf,"ax",@progbits
        //## File "/s/p.cu", line 2
        /*0000*/                   ISETP.NE.AND P0, PT, R11, RZ, PT ;
        //## File "/s/p.cu", line 3
        /*0010*/              @!P0 FADD R9, R6, -R9 ;
        /*0020*/              @!P0 BRA `(.L_x_1) ;
        //## File "/s/p.cu", line 5
        /*0030*/                   FFMA R5, R5, -2, R4 ;
        /*0040*/                   FADD R9, R0, R5 ;
.L_x_1:
        //## File "/s/p.cu", line 6
        /*0050*/                   STG.E [R2.64], R9 ;
        /*0060*/              @!P1 FMUL R9, R6, R9 ;
        /*0070*/                   ISETP.NE.AND P1, PT, R9, RZ, PT ;
        /*0080*/              @!P1 BRA `(.L_x_2) ;
        /*0090*/                   FFMA R5, R5, -2, R4 ;
.L_x_2:
        /*00a0*/                   EXIT ;
"""


@pytest.mark.rule("S26")
def test_a_then_arm_predicated_before_its_branch_excludes_the_else() -> None:
    kernel = classify_kernel(parse_disassembly(PREDICATED_THEN)["_Z1pPf"])
    # line 3's @!P0 FADD runs only for threads that skip line 5: the cheaper side is dropped;
    # line 6's @!P1 FMUL reads the P1 before it is written again: no pair, both counted
    assert kernel.totals() == Counter({"ffma": 2, "fadd": 1, "fmul": 1, "integer": 2, "store_4": 1})
    assert (("/s/p.cu", 3),) not in {g.where for g in kernel.groups}


# Written here for this test: an if / else if / else whose arms nvcc 13 ends with EXITs.
EDGES = """\
__global__ void edges(const float* __restrict__ in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  if (i == 0) {
    out[i] = v + 1.0f;
  } else if (i == n - 1) {
    out[i] = v - 2.0f;
  } else {
    out[i] = (in[i - 1] + in[i + 1]) * v + v * v;
  }
}
"""


@pytest.mark.rule("S10")
@needs_tools
def test_if_else_chain_counts_one_arm(tmp_path: Path) -> None:
    source = tmp_path / "edges.cu"
    source.write_text(EDGES)
    found = _analyse(source, Compiler("sm_86", cache_root=tmp_path / "cache"))
    edges = found["edges"]
    # the last arm's FADD, FMUL and FFMA (an FMA is 2 FLOPs), not the other arms' FADDs;
    # integer: IMAD, IMAD.WIDE, 2 ISETP, SHF, LEA, LEA.HI.X (hand-read, nvcc 13 sm_86)
    assert (edges.flops_sp, edges.int_ops) == (4, 7)


# Written here for this test: a grid-stride loop whose `for` header spans two lines.
STRIDE = """\
__global__ void stride(const float* __restrict__ a, float* out, int n) {
  float s = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x;
       i < n; i += blockDim.x * gridDim.x)
    s += a[i] * a[i];
  out[threadIdx.x] = s;
}
"""


@pytest.mark.rule("S5", "S9")
@needs_tools
def test_loop_whose_header_spans_lines_is_counted_per_trip(tmp_path: Path) -> None:
    source = tmp_path / "stride.cu"
    source.write_text(STRIDE)
    fv = _analyse(source, Compiler("sm_86", cache_root=tmp_path / "cache"))["stride"]
    # n = 4096 over 8 x 8 threads: 64 trips
    values = {s: 4096 if s.name == "n" else 8 for s in fv.int_ops.free_symbols}
    runs = 64
    # S9: the branch over the loop (i < n at entry) is no slow path although the back edge
    # sits on line 4, which the counter does not see inside the loop; S5: line 4's IMAD and
    # ISETP run once per trip with line 5's IMAD.WIDE and FFMA (hand-read, nvcc 13 sm_86)
    assert int(fv.flops_sp.subs(values)) == 2 * runs
    assert int(fv.int_ops.subs(values)) == 3 * runs + 3


@pytest.mark.rule("S7", "S10")
@needs_tools
def test_explain_compile_shows_each_lines_sass_counts(tmp_path: Path) -> None:
    import os

    source = tmp_path / "edges.cu"
    source.write_text(EDGES)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    common = [f"{source}:edges", "-g", "rtx3080", "--block", "256", "--grid", "64"]
    done = _cli("explain", *common, "--compile", "-f", "json", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["counted_from"], data["counted_why"]) == ("sass", "nvcc -arch=sm_86")
    sass = {row["line"]: row["sass_per_thread"] for row in data["lines"]}
    # the else arm's FADD, FMUL, FFMA (line 9); the other arms' FADDs (lines 5, 7) are S10's
    # cheaper sides: no FLOPs there. Per launch is per thread x 256 x 64 threads.
    assert sass[9] == {"sp": 4}
    assert "sp" not in sass[5] and "sp" not in sass[7]
    assert sum(row.get("int", 0) for row in sass.values()) == 7
    launch = {row["line"]: row["sass_per_launch"] for row in data["lines"]}
    assert launch[9] == {"sp": 4 * 256 * 64}
    text = _cli("explain", *common, "--compile", env=env)
    assert "counted from SASS" in text.stdout and "SASS: sp 4" in text.stdout
    plain = json.loads(_cli("explain", *common, "-f", "json", env=env).stdout)
    assert "counted_from" not in plain
    assert all("sass_per_thread" not in row for row in plain["lines"])


def test_cache_key_names_the_cuda_tree_by_version_not_by_path(tmp_path: Path) -> None:
    """Two installs of the same wheels assemble the tree at different paths: a new venv
    must find the units the old one compiled; a changed flag, header or version must not."""
    source, header = tmp_path / "k.cu", tmp_path / "k.h"
    source.write_text('#include "k.h"\n__global__ void k(float* x) { x[0] = N; }\n')
    header.write_text("#define N 1.f\n")
    base = ["clang++", "-x", "cuda", "-O3", "-o", f"{tempfile.gettempdir()}/a/unit.cubin"]

    def key(*extra: str, versions: tuple[str, ...] = ("12.6", "ptxas 12.6")) -> str:
        return unit_key(source, [], [*base, *extra, str(source)], versions)

    first = key("--cuda-path=/home/a/.cache/roofcast/cuda-12.6-aaaa")
    assert key("--cuda-path=/home/b/.cache/roofcast/cuda-12.6-bbbb") == first
    assert key("--cuda-path=/x", versions=("12.8", "ptxas 12.8")) != first
    assert key("--cuda-path=/x", "-DFAST") != first
    header.write_text("#define N 2.f\n")
    assert key("--cuda-path=/x") != first
