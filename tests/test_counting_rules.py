"""Each rule of docs/counting.md on a tiny kernel, counted by hand in the comment beside it.

The kernels are written to a temporary file and go through the real pipeline
(discover -> count_features -> resolve -> roofline rule), in process.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import sympy
from roofcast.features.resolve import DEFAULT_TRIP_COUNT
from roofcast.features.vector import SPECIAL_FLOP_WEIGHTS
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.base import LaunchContext
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult


def analyze(
    tmp_path: Path,
    source: str,
    suffix: str = ".cu",
    defines: dict[str, str] | None = None,
    block: tuple[int, int, int] | None = None,
    grid: tuple[int, int, int] | None = None,
    traffic: str = "launch",
) -> dict[str, KernelResult]:
    path = tmp_path / f"kernel{suffix}"
    path.write_text(textwrap.dedent(source))
    report = analyze_paths([path], load_gpu("a100"), defines or {}, RooflinePredictor(),
                           LaunchContext(block=block, grid=grid), traffic=traffic)
    assert not [p for p in report.problems if p.fatal], report.problems
    return {k.ir.name: k for k in report.kernels}


def one(tmp_path: Path, source: str, **kwargs) -> KernelResult:
    kernels = analyze(tmp_path, source, **kwargs)
    assert len(kernels) == 1, list(kernels)
    return next(iter(kernels.values()))


def at(expr: sympy.Expr, **values: float) -> float:
    """The expression's value with every free symbol bound (KeyError if one is missing)."""
    expr = sympy.sympify(expr)
    return float(expr.subs({s: values[s.name] for s in expr.free_symbols}))


def line_of(source: str, needle: str) -> int:
    lines = textwrap.dedent(source).split("\n")
    return next(i + 1 for i, line in enumerate(lines) if needle in line)


def counts(k: KernelResult) -> dict[str, object]:
    fv = k.features
    return {"sp": fv.flops_sp, "dp": fv.flops_dp, "hp": fv.flops_hp, "int": fv.int_ops,
            "load": fv.load_bytes, "store": fv.store_bytes}


# --------------------------------------------------------------------------- floating point


def test_double_literal_promotes_a_float_multiply_to_double(tmp_path):
    k = analyze(tmp_path, """\
        __global__ void by_double(float* x) { int i = threadIdx.x; x[i] = x[i] * 2.0; }
        __global__ void by_float(float* x) { int i = threadIdx.x; x[i] = x[i] * 2.0f; }
        __global__ void by_int(float* x) { int i = threadIdx.x; x[i] = x[i] * 2; }
        """)
    # float * 2.0 is a double multiply; 2.0f keeps float; an int operand takes float
    assert (k["by_double"].features.flops_dp, k["by_double"].features.flops_sp) == (1, 0)
    assert (k["by_float"].features.flops_dp, k["by_float"].features.flops_sp) == (0, 1)
    assert (k["by_int"].features.flops_dp, k["by_int"].features.flops_sp) == (0, 1)
    for kernel in k.values():  # the element stays a float either way
        assert (kernel.features.load_bytes, kernel.features.store_bytes) == (4, 4)


def test_multiply_add_is_two_and_fma_is_two(tmp_path):
    k = analyze(tmp_path, """\
        __global__ void mad(const float* a, const float* b, float* c) {
          int i = threadIdx.x;
          c[i] = a[i] * b[i] + c[i];
        }
        __global__ void fused(const float* a, float* c, const double* d, double* e, __half* h) {
          int i = threadIdx.x;
          c[i] = fmaf(a[i], a[i], 1.0f) + __fmaf_rn(a[i], 2.0f, 3.0f);
          e[i] = fma(d[i], d[i], 1.0);
          h[i] = __hfma(h[i], h[i], h[i]);
        }
        """)
    assert counts(k["mad"]) == {"sp": 2, "dp": 0, "hp": 0, "int": 0, "load": 12, "store": 4}
    # fmaf 2 + __fmaf_rn 2 + the add 1 = 5 sp; fma(double) 2 dp; __hfma 2 hp
    fused = counts(k["fused"])
    assert (fused["sp"], fused["dp"], fused["hp"]) == (5, 2, 2)
    assert fused["load"] == 4 + 8 + 2 and fused["store"] == 4 + 8 + 2


def test_compound_assignments_and_increments(tmp_path):
    k = one(tmp_path, """\
        __global__ void compound(float* a, float v, int* m) {
          int i = threadIdx.x;
          a[i] += v;
          float t = v;
          t *= v;
          t++;
          int s = i;
          s <<= 1;
          m[i] = s + (int)t;
        }
        """)
    # += 1, *= 1, ++ 1 sp; <<= 1 and + 1 int; a[i] is loaded and stored, m[i] stored
    assert counts(k) == {"sp": 3, "dp": 0, "hp": 0, "int": 2, "load": 4, "store": 8}


def test_not_flops(tmp_path):
    k = one(tmp_path, """\
        __global__ void free_ops(const float* x, float* y) {
          int i = threadIdx.x;
          float v = x[i];
          float w = -v;
          y[i] = (v < w) ? fabsf(w) : fminf(floorf(v), fmaxf(ceilf(w), (float)i));
        }
        """)
    # unary minus, a float comparison, fabs, fmin/fmax, floor/ceil and a cast are free
    assert counts(k) == {"sp": 0, "dp": 0, "hp": 0, "int": 0, "load": 4, "store": 4}
    assert k.features.special == {}


def test_division_and_special_functions_by_kind_and_precision(tmp_path):
    k = analyze(tmp_path, """\
        __global__ void sp_specials(const float* x, float* y, float d) {
          int i = threadIdx.x;
          float v = x[i];
          y[i] = sqrtf(v) + sqrt(v) + __expf(v) + v / d + tanhf(v);
        }
        __global__ void dp_specials(const double* x, double* y, float f) {
          int i = threadIdx.x;
          double v = x[i];
          y[i] = sqrt(v) + exp(v) + log1p(v) + sin(v) + erf(v) + pow(v, 3.0) + 1.0 / v
                 + __expf(f);
        }
        __global__ void div_assign(double* x, double d) { x[threadIdx.x] /= d; }
        """)
    sp = k["sp_specials"].features
    # sqrt of a float is the float sqrt; __expf is sp; float / float is an sp division
    assert sp.special == {("sqrt", "sp"): 2, ("exp", "sp"): 1, ("div", "sp"): 1,
                          ("tanh", "sp"): 1}
    assert (sp.flops_sp, sp.flops_dp) == (4, 0)  # the four +
    dp = k["dp_specials"].features
    assert dp.special == {("sqrt", "dp"): 1, ("exp", "dp"): 1, ("log", "dp"): 1,
                          ("trig", "dp"): 1, ("erf", "dp"): 1, ("pow", "dp"): 1,
                          ("div", "dp"): 1, ("exp", "sp"): 1}
    assert dp.flops_dp == 7  # the seven +, each with a double operand
    assert k["div_assign"].features.special == {("div", "dp"): 1}
    # folded into the totals with the documented weights
    w = SPECIAL_FLOP_WEIGHTS
    resolved = k["sp_specials"].resolved.flops
    assert resolved["sp"] == 4 + 2 * w["sqrt"]["sp"] + w["exp"]["sp"] + w["div"]["sp"] + \
        w["tanh"]["sp"]
    resolved = k["dp_specials"].resolved.flops
    assert resolved["dp"] == 7 + sum(w[kind]["dp"] for kind in
                                     ("sqrt", "exp", "log", "trig", "erf", "pow", "div"))
    assert resolved["sp"] == w["exp"]["sp"]


def test_integer_operations(tmp_path):
    k = one(tmp_path, """\
        __global__ void ints(int* a, const int* b, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n && i > 0) {
            int j = (i << 2) ^ (n % 3);
            a[i] = j + *(b + 1);
          }
        }
        """)
    # * + (index) = 2; < and > = 2 (&& free); << ^ % = 3; + = 1; pointer b + 1 = 1  -> 9
    assert counts(k) == {"sp": 0, "dp": 0, "hp": 0, "int": 9, "load": 4, "store": 4}
    assert k.features.branches == 1


# --------------------------------------------------------------------------- memory


def test_first_read_is_a_load_and_a_read_after_write_is_free(tmp_path):
    k = analyze(tmp_path, """\
        __global__ void rw(float* y, const float* x) {
          int i = threadIdx.x;
          y[i] = x[i];
          y[i] = y[i] * 3.0f;
        }
        __global__ void saxpy(float a, const float* x, float* y) {
          int i = threadIdx.x;
          y[i] = a * x[i] + y[i];
        }
        __global__ void stencil(const float* x, float* y) {
          int i = threadIdx.x + 1;
          y[i] = x[i - 1] + x[i] + x[i + 1] + x[i];
        }
        """)
    assert counts(k["rw"])["load"] == 4 and counts(k["rw"])["store"] == 4
    assert counts(k["saxpy"])["load"] == 8 and counts(k["saxpy"])["store"] == 4
    # three distinct index texts; the second x[i] is the same element
    assert counts(k["stencil"])["load"] == 12 and counts(k["stencil"])["sp"] == 3


def test_element_sizes_vectors_members_and_pointer_forms(tmp_path):
    k = analyze(tmp_path, """\
        struct Particle { int id; double mass; };
        struct Opaque;
        __global__ void vec(const float4* a, float4* b) { int i = threadIdx.x; b[i] = a[i]; }
        __global__ void member(const float4* a, float* b) { int i = threadIdx.x; b[i] = a[i].y; }
        __global__ void st(const Particle* p, double* m) { int i = threadIdx.x; m[i] = p[i].mass; }
        __global__ void halfs(const __half* a, __half* b) { int i = threadIdx.x; b[i] = a[i]; }
        __global__ void ldg(const double2* a, double2* b) { int i = threadIdx.x;
                                                            b[i] = __ldg(&a[i]); }
        __global__ void deref(const float* p, float* q) { *q = *p + *(p + 3); }
        __global__ void opaque(const Opaque* o, Opaque* r) { int i = threadIdx.x; r[i] = o[i]; }
        """)
    sizes = {name: (kr.features.load_bytes, kr.features.store_bytes) for name, kr in k.items()}
    assert sizes["vec"] == (16, 16)
    assert sizes["member"] == (4, 4)
    assert sizes["st"] == (8, 8)
    assert sizes["halfs"] == (2, 2)
    assert sizes["ldg"] == (16, 16)
    assert sizes["deref"] == (8, 4)
    assert sizes["opaque"] == (4, 4)  # unknown structs count 4 bytes


def test_an_anonymous_typedef_struct_has_its_own_layout(tmp_path):
    # `typedef struct {..} T;` indexes T's fields under T: a T element is 16 bytes, not the
    # 4 bytes of an unknown type, whether copied whole or member by member
    k = analyze(tmp_path, """\
        typedef struct { double re; double im; } Cplx;
        __global__ void whole(const Cplx* a, Cplx* b) { int i = threadIdx.x; b[i] = a[i]; }
        __global__ void zero(Cplx* a) { int i = threadIdx.x; a[i] = {0.0, 0.0}; }
        __global__ void parts(Cplx* a) { int i = threadIdx.x; a[i].re = 0.0; a[i].im = 1.0; }
        """)
    sizes = {name: (kr.features.load_bytes, kr.features.store_bytes) for name, kr in k.items()}
    assert sizes["whole"] == (16, 16)
    assert sizes["zero"] == (0, 16)
    assert sizes["parts"] == (0, 16)


def test_loop_invariant_access_counts_once(tmp_path):
    k = one(tmp_path, """\
        __global__ void hoist(const float* a, const float* b, float* c, int n, int m) {
          int i = threadIdx.x;
          for (int r = 0; r < n; r++) {
            for (int k = 0; k < m; k++) {
              c[i] += a[r] * b[k];
            }
          }
        }
        """)
    c = counts(k)
    # c[i] changes in neither loop: loaded and stored once; a[r] once per r; b[k] every time
    assert at(c["load"], n=7, m=5) == 4 + 4 * 7 + 4 * 7 * 5
    assert at(c["store"], n=7, m=5) == 4
    assert at(c["sp"], n=7, m=5) == 2 * 7 * 5
    # each loop's condition and increment per iteration
    assert at(c["int"], n=7, m=5) == 2 * 7 * 5 + 2 * 7
    assert k.features.loop_depth == 2


def test_shared_memory_counts_separately(tmp_path):
    k = one(tmp_path, """\
        __global__ void tile(const float* x, float* y) {
          __shared__ float buf[256];
          int t = threadIdx.x;
          buf[t] = x[t];
          __syncthreads();
          y[t] = buf[255 - t] + buf[t];
          __syncwarp();
        }
        """)
    fv = k.features
    assert (fv.load_bytes, fv.store_bytes) == (4, 4)
    # buf[t] read after this thread wrote it is free; buf[255 - t] is a shared load
    assert (fv.shared_load_bytes, fv.shared_store_bytes) == (4, 4)
    assert fv.barriers == 2 and fv.shared_arrays == 1
    assert fv.int_ops == 1


def test_atomics_are_not_bytes(tmp_path):
    k = one(tmp_path, """\
        __global__ void hist(const int* x, int* bins, float* total) {
          int i = threadIdx.x;
          atomicAdd(&bins[x[i] & 15], 1);
          atomicAdd(total, 1.0f);
        }
        """)
    fv = k.features
    assert fv.atomics == 2
    assert (fv.load_bytes, fv.store_bytes) == (4, 0)  # only x[i]
    assert fv.int_ops == 1


def test_branches_count_if_conditional_and_case_times_trips(tmp_path):
    k = one(tmp_path, """\
        __global__ void br(const float* x, float* y, int n) {
          float s = 0.0f;
          for (int k = 0; k < 4; k++) {
            if (x[k] > 0.0f) s += 1.0f; else s -= 1.0f;
          }
          switch (n) { case 0: s = 1.0f; break; case 1: s = 2.0f; break; }
          y[threadIdx.x] = s > 1.0f ? s : 0.0f;
        }
        """)
    fv = k.features
    # 4 ifs, 2 cases, 1 ?: ; both arms of the if counted: 4 * 2 sp
    assert fv.branches == 4 + 2 + 1
    assert fv.flops_sp == 8
    assert fv.load_bytes == 16


# --------------------------------------------------------------------------- loops


def test_affine_loops_have_exact_trip_counts(tmp_path):
    k = one(tmp_path, """\
        __global__ void trips(float* y, int n) {
          float s = 0.0f;
          for (int k = 10; k > 0; k--) s += 1.0f;
          for (int k = 0; k <= 9; k += 3) s += 1.0f;
          for (int k = 9; k >= 0; k -= 2) s += 1.0f;
          for (int k = 2; k < n; k += 4) s += 1.0f;
          y[0] = s;
        }
        """)
    # 10 + 4 (0,3,6,9) + 5 (9,7,5,3,1) + ceiling((n-2)/4)
    assert at(k.features.flops_sp, n=2) == 19
    assert at(k.features.flops_sp, n=11) == 19 + 3
    assert at(k.features.flops_sp, n=14) == 19 + 3


def test_geometric_loops_with_inclusive_bounds(tmp_path):
    k = analyze(tmp_path, """\
        __global__ void up(float* y) {
          float s = 0.0f;
          for (int k = 1; k <= 8; k *= 2) s += 1.0f;
          y[0] = s;
        }
        __global__ void down(float* y) {
          float s = 0.0f;
          for (int k = 8; k >= 1; k /= 2) s += 1.0f;
          y[0] = s;
        }
        __global__ void shifted(float* y, int n) {
          float s = 0.0f;
          for (int k = 1; k <= n; k <<= 1) s += 1.0f;
          y[0] = s;
        }
        """)
    assert k["up"].features.flops_sp == 4  # k = 1, 2, 4, 8
    assert k["down"].features.flops_sp == 4  # k = 8, 4, 2, 1
    assert at(k["shifted"].features.flops_sp, n=1024) == 11  # 2^0 .. 2^10


def test_geometric_loops_with_exclusive_bounds(tmp_path):
    k = analyze(tmp_path, """\
        __global__ void up(float* y) {
          float s = 0.0f;
          for (int k = 1; k < 8; k *= 2) s += 1.0f;
          y[0] = s;
        }
        __global__ void halve(float* y) {
          float s = 0.0f;
          for (int k = 8; k > 0; k >>= 1) s += 1.0f;
          y[0] = s;
        }
        """)
    assert k["up"].features.flops_sp == 3  # 1, 2, 4
    assert k["halve"].features.flops_sp == 4  # 8, 4, 2, 1


def test_grid_stride_loop_runs_the_average_trip_count(tmp_path):
    source = """\
        __global__ void gs(const float* x, float* y, int n) {
          for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            y[i] = 2.0f * x[i];
          }
        }
        """
    k = one(tmp_path, source)
    fv = k.features
    assert {s.name for s in fv.flops_sp.free_symbols} == {"n", "blockDim_x", "gridDim_x"}
    for n, bx, gx in ((4096, 128, 8), (1000, 256, 2), (5, 256, 1024)):
        trips = -(-n // (bx * gx))  # ceiling(n / (blockDim_x * gridDim_x))
        assert at(fv.flops_sp, n=n, blockDim_x=bx, gridDim_x=gx) == trips
        assert at(fv.load_bytes, n=n, blockDim_x=bx, gridDim_x=gx) == 4 * trips
        assert at(fv.store_bytes, n=n, blockDim_x=bx, gridDim_x=gx) == 4 * trips
    # the launch binds the dimensions; defaults otherwise (blockDim_x 256, gridDim_x 1024)
    bound = one(tmp_path, source, defines={"n": "4096"}, block=(128, 1, 1), grid=(8, 1, 1))
    assert bound.resolved.flops["sp"] == 4 and not bound.resolved.defaults
    assert k.resolved.defaults == {"n": 1024, "blockDim_x": 256, "gridDim_x": 1024}


def test_while_loop_has_an_unknown_trip_symbol_with_its_documented_default(tmp_path):
    source = """\
        __global__ void halving(const int* x, int* y) {
          int i = threadIdx.x;
          int v = x[i];
          while (v > 1) {
            v = v / 2;
          }
          y[i] = v;
        }
        """
    k = one(tmp_path, source)
    trip = f"trip_L{line_of(source, 'while (')}"
    assert trip == "trip_L4"
    assert k.features.unknown_trip_loops == 1
    assert trip in k.resolved.unbound
    assert k.resolved.defaults == {trip: DEFAULT_TRIP_COUNT} and DEFAULT_TRIP_COUNT == 4
    assert k.resolved.flops["int"] == 2 * 4  # v > 1 and v / 2 per iteration
    assert "default" in k.verdict.reason
    bound = one(tmp_path, source, defines={trip: "10"})
    assert bound.resolved.flops["int"] == 20 and not bound.resolved.defaults


def test_do_loop_and_data_dependent_bound_are_unknown(tmp_path):
    source = """\
        __global__ void spmv(const int* rowptr, const float* v, float* y, const int* len) {
          int r = threadIdx.x;
          float s = 0.0f;
          for (int k = rowptr[r]; k < rowptr[r + 1]; k++) s += v[k];
          int m = len[r];
          for (int k = 0; k < m; k++) s += 1.0f;
          do { s *= 0.5f; } while (s > 1.0f);
          y[r] = s;
        }
        """
    k = one(tmp_path, source)
    lines = textwrap.dedent(source).split("\n")
    expected = {f"trip_L{i + 1}" for i, line in enumerate(lines)
                if line.strip().startswith(("for", "do"))}
    assert len(expected) == 3
    assert set(k.resolved.defaults) == expected
    assert k.features.unknown_trip_loops == 3
    # 3 unknown loops, one sp op each per iteration, DEFAULT_TRIP_COUNT iterations by default
    assert k.resolved.flops["sp"] == 3 * DEFAULT_TRIP_COUNT


def test_bound_changed_in_the_body_is_unknown(tmp_path):
    source = """\
        __global__ void shrink(float* y, int n) {
          float s = 0.0f;
          for (int k = 0; k < n; k++) {
            s += 1.0f;
            n = n - 1;
          }
          y[0] = s;
        }
        """
    k = one(tmp_path, source)
    assert f"trip_L{line_of(source, 'for (')}" in k.resolved.defaults


# --------------------------------------------------------------------------- calls and templates


def test_device_functions_are_inlined_with_pointer_arguments(tmp_path):
    k = one(tmp_path, """\
        __device__ float sum3(const float* p) { return p[0] + p[1] + p[2]; }
        __device__ void put(float* dst, float v) { *dst = v * 0.5f; }
        __global__ void caller(const float* x, float* y) {
          int i = threadIdx.x;
          put(&y[i], sum3(x + i));
        }
        """)
    # sum3: 2 sp, three loads through x; put: 1 sp, one store through y; x + i: 1 int
    assert counts(k) == {"sp": 3, "dp": 0, "hp": 0, "int": 1, "load": 12, "store": 4}
    assert k.features.device_calls == 2
    assert set(k.ir.device_functions) == {"put", "sum3"}


def test_scalar_arguments_bind_device_function_trip_counts(tmp_path):
    k = one(tmp_path, """\
        __device__ float accumulate(const float* row, int len) {
          float s = 0.0f;
          for (int j = 0; j < len; j++) s += row[j];
          return s;
        }
        __global__ void caller(const float* a, float* out) {
          out[threadIdx.x] = accumulate(a, 8);
        }
        """)
    assert counts(k)["sp"] == 8 and counts(k)["load"] == 32 and counts(k)["store"] == 4


def test_recursive_device_function_terminates(tmp_path):
    k = one(tmp_path, """\
        __device__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
        __device__ int ping(int n);
        __device__ int pong(int n) { return n > 0 ? ping(n - 1) : 0; }
        __device__ int ping(int n) { return n > 0 ? pong(n - 1) + 1 : 0; }
        __global__ void rec(int* out) {
          int i = threadIdx.x;
          out[i] = fact(i) + ping(i);
        }
        """)
    fv = k.features
    assert fv.store_bytes == 4
    # fact once: <=, *, - = 3; ping+pong once each: >, -, + and >, - = 5; the final + = 1
    assert fv.int_ops == 9
    assert any("recursive" in note for note in fv.notes)


def test_template_type_bound_by_define(tmp_path):
    source = """\
        template <typename T>
        __global__ void sq(const T* x, T* y) {
          int i = threadIdx.x;
          y[i] = x[i] * x[i] + x[i];
        }
        """
    unbound = one(tmp_path, source)
    assert unbound.features.templated
    assert counts(unbound)["sp"] == 2 and counts(unbound)["load"] == 4
    as_double = one(tmp_path, source, defines={"T": "double"})
    assert counts(as_double)["dp"] == 2 and counts(as_double)["sp"] == 0
    assert (counts(as_double)["load"], counts(as_double)["store"]) == (8, 8)


def test_typedef_decides_precision_even_for_the_name_real(tmp_path):
    k = one(tmp_path, """\
        typedef double real;
        __global__ void k(const real* x, real* y) { int i = threadIdx.x; y[i] = x[i] * x[i]; }
        """)
    assert counts(k)["dp"] == 1 and counts(k)["load"] == 8


def test_typedef_decides_precision(tmp_path):
    k = one(tmp_path, """\
        typedef double scalar_t;
        __global__ void k(const scalar_t* x, scalar_t* y) {
          int i = threadIdx.x;
          y[i] = x[i] * x[i];
        }
        """)
    assert counts(k)["dp"] == 1 and counts(k)["sp"] == 0 and counts(k)["load"] == 8


# --------------------------------------------------------------------------- verdict


def test_verdict_compares_intensity_with_the_balance_point(tmp_path):
    gpu = load_gpu("a100")
    k = analyze(tmp_path, """\
        __global__ void poly(const float* x, float* y) {
          float v = x[threadIdx.x];
          float acc = 0.0f;
          for (int k = 0; k < 64; ++k) acc = acc * v + 1.0f;
          y[threadIdx.x] = acc;
        }
        __global__ void no_bytes(float v) {
          float s = v;
          for (int k = 0; k < 8; k++) s = s * v;
        }
        """, traffic="per-thread")
    poly = k["poly"]
    # 128 sp / 8 bytes = 16 >= a100's SP balance (about 9.6)
    assert poly.resolved.intensities["sp"] == pytest.approx(16)
    assert gpu.balance_points["sp"] < 16 and poly.verdict.bound == "compute"
    # no global bytes at all and some work: compute-bound
    assert k["no_bytes"].verdict.bound == "compute"


def test_a_kernel_that_only_moves_bytes_is_bandwidth_bound(tmp_path):
    k = analyze(tmp_path, """\
        __global__ void fill(float* a) { a[threadIdx.x] = 0.0f; }
        __global__ void copy(const double* a, double* b) { b[threadIdx.x] = a[threadIdx.x]; }
        __global__ void nothing(int n) { }
        """)
    assert k["copy"].resolved.bytes == 16
    assert k["fill"].verdict.bound == "bandwidth"
    assert k["copy"].verdict.bound == "bandwidth"
    assert "no memory traffic" not in k["copy"].verdict.reason
    # no bytes and no work: nothing to say
    assert k["nothing"].verdict.bound == "unknown"


# --------------------------------------------------------------------------- OpenMP


def test_openmp_collapse_counts_per_iteration(tmp_path):
    source = """\
        void mm(const float* a, float* b, int n, int m) {
          #pragma omp target teams distribute parallel for collapse(2) map(to: a[0:n*m]) \\
                  map(from: b[0:n*m])
          for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
              b[i * m + j] = 2.0f * a[i * m + j];
            }
          }
        }
        """
    k = one(tmp_path, source, suffix=".cpp")
    assert k.ir.language == "openmp" and k.ir.name == "mm"
    assert k.ir.line == line_of(source, "#pragma omp target")
    fv = k.features
    # one (i, j) iteration: one multiply, one load, one store; the loops are the thread grid
    assert (fv.flops_sp, fv.load_bytes, fv.store_bytes) == (1, 4, 4)
    assert at(fv.work_items, n=30, m=7) == 210
    assert k.resolved.threads == 1024 * 1024  # n and m default to 1024


def test_openmp_split_target_and_teams_distribute(tmp_path):
    source = """\
        void split(const double* x, double* y, int n) {
          #pragma omp target map(to: x[0:n]) map(from: y[0:n])
          {
            #pragma omp teams distribute parallel for
            for (int i = 0; i < n; i++) {
              double s = 0.0;
              for (int j = 0; j < 4; j++) s += x[i] * x[i];
              y[i] = s;
            }
          }
        }
        """
    k = one(tmp_path, source, suffix=".cpp")
    assert k.ir.line == line_of(source, "#pragma omp target map")
    fv = k.features
    # inner loop: 4 x (* and +=) dp, x[i] invariant in it: loaded once; 4 constant trips:
    # j< and j++ are unrolled away (I4)
    assert (fv.flops_dp, fv.load_bytes, fv.store_bytes, fv.int_ops) == (8, 8, 8, 0)
    assert at(fv.work_items, n=100) == 100


def test_openmp_atomic_and_barrier(tmp_path):
    k = one(tmp_path, """\
        void hist(const int* x, int* bins, int n) {
          #pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: bins[0:16])
          for (int i = 0; i < n; i++) {
            #pragma omp atomic update
            bins[x[i] % 16] += 1;
          }
        }
        """, suffix=".cpp")
    fv = k.features
    assert fv.atomics == 1
    assert (fv.load_bytes, fv.store_bytes) == (4, 0)
    assert fv.int_ops == 1


def test_openmp_several_workshared_loops_sum_their_counts(tmp_path):
    k = one(tmp_path, """\
        void two(float* a, float* b, int n) {
          #pragma omp target map(tofrom: a[0:n], b[0:n])
          {
            #pragma omp teams distribute parallel for
            for (int i = 0; i < n; i++) a[i] = a[i] + 1.0f;
            #pragma omp teams distribute parallel for
            for (int i = 0; i < n; i++) b[i] = b[i] * 2.0f;
          }
        }
        """, suffix=".cpp")
    fv = k.features
    assert (fv.flops_sp, fv.load_bytes, fv.store_bytes) == (2, 8, 8)


def test_openmp_workshared_loops_do_not_share_written_elements(tmp_path):
    k = one(tmp_path, """\
        void two(float* a, float* b, int n) {
          #pragma omp target map(tofrom: a[0:n], b[0:n])
          {
            #pragma omp teams distribute parallel for
            for (int i = 0; i < n; i++) a[i] = 1.0f;
            #pragma omp teams distribute parallel for
            for (int i = 0; i < n; i++) b[i] = a[i] * 2.0f;
          }
        }
        """, suffix=".cpp")
    # each loop is its own iteration space: the second loop loads a[i] from memory
    assert (k.features.load_bytes, k.features.store_bytes) == (4, 8)


REGION_H = """\
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(from: y[0:n])
for (int i = 0; i < n; i++) {
  y[i] = x[i] + 1.0f;
}
"""


def _check_pasted_region(tmp_path: Path, main_cpp: str) -> None:
    (tmp_path / "region.h").write_text(REGION_H)
    (tmp_path / "main.cpp").write_text(textwrap.dedent(main_cpp))
    for paths in ([tmp_path / "main.cpp"], [tmp_path]):
        report = analyze_paths(paths, load_gpu("a100"))
        assert [k.ir.name for k in report.kernels] == ["host_driver"], paths
        k = report.kernels[0]
        assert Path(k.ir.file).name == "region.h" and k.ir.line == 1
        fv = k.features
        # x and y are the enclosing function's pointers: mapped data
        assert (fv.flops_sp, fv.load_bytes, fv.store_bytes) == (1, 4, 4)
        assert at(fv.work_items, n=50) == 50


def test_openmp_region_in_a_header_included_in_a_function_body(tmp_path):
    _check_pasted_region(tmp_path, """\
        #include <stdio.h>

        void host_driver(const float* x, float* y, int n)
        {
          #pragma omp target data map(to: x[0:n]) map(from: y[0:n])
          {
        #include "region.h"
          }
        }
        """)


def test_openmp_region_pasted_into_a_file_without_markers(tmp_path):
    _check_pasted_region(tmp_path, """\
        #include <stdio.h>

        void host_driver(const float* x, float* y, int n)
        {
          int unused = 0;
        #include "region.h"
        }
        """)


@pytest.mark.rule("U7")
def test_a_header_pasted_into_a_loop_sees_the_includers_macros(tmp_path):
    """`step.h` has no macros of its own; pasted into the region's loop it is expanded with
    the accessors of `defs.h`, which the includer included: two loads and one store."""
    (tmp_path / "defs.h").write_text(
        "#define IN(q) in[(q) * n + i]\n#define OUT(q) out[(q) * n + i]\n"
    )
    (tmp_path / "step.h").write_text("OUT(1) = IN(1) * IN(2);\n")
    source = """\
        #include "defs.h"
        void run(const float* in, float* out, int n) {
          #pragma omp target teams distribute parallel for
          for (int i = 0; i < n; i++) {
        #include "step.h"
          }
        }
        """
    fv = one(tmp_path, source, suffix=".cpp").features
    assert (fv.load_bytes, fv.store_bytes, fv.flops_sp) == (8, 4, 1)


@pytest.mark.parametrize("kind, ops", [("add", ("<", "<=", "!=", ">", ">=")),
                                       ("mul", ("<", "<=", "!=")), ("div", (">", ">=", "!="))])
def test_integer_trip_counts_equal_the_closed_forms(kind, ops):
    """Numeric loops skip sympy's exact ceiling of logs; the numbers must not change."""
    from roofcast.features.lowering import closed_form_trip, integer_trip

    steps = (1, 2, 3, 7, -1, -2, -5) if kind == "add" else (2, 3, 4, 10)
    checked = 0
    for op in ops:
        for step in steps:
            for start in (0, 1, 2, 5, 8, 100, 1000, 1024):
                for end in (0, 1, 3, 8, 64, 100, 1000, 1025):
                    fast = integer_trip(op, start, end, kind, step)
                    if fast is None:
                        continue
                    exact = closed_form_trip(op, sympy.Integer(start), sympy.Integer(end), kind,
                                             sympy.Integer(step))
                    assert exact is not None, (op, start, end, kind, step)
                    assert fast == max(0, int(exact)), (op, start, end, kind, step)
                    checked += 1
    assert checked > 100


@pytest.mark.rule("D7")
def test_a_file_level_integer_is_bound_to_its_initialiser(tmp_path):
    source = """\
        int SIZE = 4096;
        float SCALE = 2.0f;
        __global__ void rows(const float* x, float* y) {
          float s = 0.0f;
          for (int k = 0; k < SIZE; ++k) s += x[k];
          y[threadIdx.x] = s;
        }
        """
    k = analyze(tmp_path, source)["rows"]
    assert k.resolved.flops["sp"] == 4096  # one add per trip, SIZE trips
    assert "SIZE" not in k.resolved.defaults and "SIZE" not in k.resolved.unbound
    bound = analyze(tmp_path, source, defines={"SIZE": "8"})["rows"]
    assert bound.resolved.flops["sp"] == 8  # -D wins over the initialiser


@pytest.mark.rule("D9")
def test_a_launch_binds_the_kernels_template_arguments(tmp_path):
    """`k<double, 4 * W><<<...>>>` with W = 2: a double-precision kernel of 8 trips, not the
    float default and the 1024 guess; a --define still wins."""
    source = """\
        template <typename T, int ITEMS>
        __global__ void k(const T* in, T* out) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          T s = 0;
          for (int j = 0; j < ITEMS; j++) s += in[i * ITEMS + j];
          out[i] = s;
        }
        void run(const float* a, float* b) {
          const int W = 2;
          k<double, 4 * W><<<1024, 256>>>(a, b);
        }
        """
    k = analyze(tmp_path, source)["k"]
    assert k.resolved.defaults == {}
    assert k.resolved.flops["dp"] == 8 and k.resolved.flops["sp"] == 0
    assert k.resolved.load_bytes == 8 * 8
    given = analyze(tmp_path, source, defines={"T": "float"})["k"]
    assert given.resolved.flops["sp"] == 8 and given.resolved.load_bytes == 4 * 8


@pytest.mark.rule("D8")
def test_host_code_and_kernels_value_c_expressions_alike(tmp_path):
    """One operator semantics on both sides of a launch: `-(-20) % 7 + max(3, 5) * (1 << 2)`
    is 26 as a kernel's loop bound and as the host argument that sizes another loop."""
    expression = "-(-20) % 7 + max(3, 5) * (1 << 2)"
    source = f"""\
        __global__ void device_side(float* a) {{
          for (int j = 0; j < {expression}; j++) a[j] += 1.0f;
        }}
        __global__ void host_side(float* a, int n) {{
          for (int j = 0; j < n; j++) a[j] += 1.0f;
        }}
        void run(float* a) {{
          device_side<<<1, 1>>>(a);
          host_side<<<1, 1>>>(a, {expression});
        }}
        """
    k = analyze(tmp_path, source)
    assert k["device_side"].resolved.flops["sp"] == 26
    assert k["host_side"].resolved.flops["sp"] == 26 and not k["host_side"].resolved.defaults


@pytest.mark.rule("D10")
def test_one_line_functions_masks_and_integer_division_value_sizes(tmp_path):
    """Host side: `n = alignDown(1000003, 256) & ~255` is 999,936 and `iDivUp(n, 256)` is
    3906 (C's truncating division, through two one-line functions); device side, the same
    helper sizes a loop. A helper of two statements stays unknown."""
    source = """\
        static int iDivUp(int a, int b) { return (a + b - 1) / b; }
        int alignDown(int a, int b) { return a - a % b; }
        int twoLines(int a) { int b = a; return b; }
        __global__ void host_sized(const float* x, float* y, int m) {
          float s = 0.0f;
          for (int j = 0; j < m; j++) s += x[j];
          y[threadIdx.x] = s;
        }
        __device__ int half(int v) { return v / 2; }
        __global__ void device_sized(const float* x, float* y) {
          float s = 0.0f;
          for (int j = 0; j < half(7 * 3); j++) s += x[j];
          y[threadIdx.x] = s;
        }
        __global__ void unknown(const float* x, float* y, int m) {
          float s = 0.0f;
          for (int j = 0; j < m; j++) s += x[j];
          y[threadIdx.x] = s;
        }
        int main() {
          float *x, *y;
          int n = alignDown(1000003, 256) & ~255;
          host_sized<<<1, 256>>>(x, y, iDivUp(n, 256));
          device_sized<<<1, 256>>>(x, y);
          unknown<<<1, 256>>>(x, y, twoLines(n));
        }
        """
    k = analyze(tmp_path, source)
    # 1000003 - 1000003 % 256 = 999936, already a multiple of 256; (999936 + 255) / 256 = 3906
    assert k["host_sized"].resolved.flops["sp"] == 3906
    assert not k["host_sized"].resolved.defaults
    assert k["device_sized"].resolved.flops["sp"] == 10  # 21 / 2 truncates
    assert "m" in k["unknown"].resolved.defaults


@pytest.mark.rule("D10")
def test_a_symbolic_size_aligned_down_by_a_mask(tmp_path):
    """`n & ~255` and `n & 0xffffff00` of a symbol are `floor(n / 256) * 256` (a non-negative
    size rounded down); `n & 255` is not a rounding and stays unknown."""
    source = """\
        __global__ void k(const float* x, float* y, int n) {
          float s = 0.0f;
          for (int j = 0; j < (n & ~255); j++) s += x[j];
          for (int j = 0; j < (n & 0xffffff00); j++) s += x[j];
          for (int j = 0; j < (n & 255); j++) s += x[j];
          y[threadIdx.x] = s;
        }
        """
    k = one(tmp_path, source, defines={"n": "1000"})
    rounded = 1000 // 256 * 256
    assert k.resolved.flops["sp"] == 2 * rounded + DEFAULT_TRIP_COUNT


@pytest.mark.rule("D8")
def test_an_openmp_header_region_sizes_through_its_functions_locals(tmp_path):
    """`kernels.h` (parsed as a header) holds the region; its function sizes the loop with a
    local, `n = size / sizeof(unsigned long)`, and `main.cpp` passes 2^31 bytes: 2^28
    iterations. The local is valued over the parameter, whatever grammar parsed the header."""
    (tmp_path / "kernels.h").write_text(textwrap.dedent("""\
        void fill(char* ptr, unsigned long size) {
          unsigned long* buf = (unsigned long*)ptr;
          unsigned long n = size / sizeof(unsigned long);
          #pragma omp target teams distribute parallel for thread_limit(64)
          for (unsigned long i = 0; i < n; i++) buf[i] = i;
        }
        """))
    (tmp_path / "main.cpp").write_text(textwrap.dedent("""\
        #include "kernels.h"
        int main() {
          char* mem;
          unsigned long mem_size = 2 * 1024 * 1024 * 1024UL;
          fill(mem, mem_size);
        }
        """))
    report = analyze_paths([tmp_path], load_gpu("a100"), {}, RooflinePredictor())
    (k,) = report.kernels
    assert k.resolved.threads == 1 << 28 and not k.resolved.defaults


@pytest.mark.rule("U7")
def test_a_region_pasted_into_a_function_sees_that_functions_locals(tmp_path):
    """`step.h` (a header) is pasted into `run` of `main.cpp`; `run`'s local `m = 12 * 2 + 1`
    sizes the region's loop: 625 iterations, no default, whatever grammars parsed the two."""
    (tmp_path / "step.h").write_text(textwrap.dedent("""\
        #pragma omp target teams distribute parallel for
        for (int t = 0; t < m * m; t++) out[t] = 2.0f * in[t];
        """))
    (tmp_path / "main.cpp").write_text(textwrap.dedent("""\
        void run(const float* in, float* out) {
          int m = 12 * 2 + 1;
        #include "step.h"
        }
        """))
    report = analyze_paths([tmp_path], load_gpu("a100"), {}, RooflinePredictor())
    (k,) = report.kernels
    assert k.resolved.threads == 625 and not k.resolved.defaults


@pytest.mark.rule("D11")
def test_the_launch_configuration_in_host_code_sizes_the_launch(tmp_path):
    """`<<<iDivUp(n, threads), threads>>>` with n = 2^20 launches 2^20 threads, and `dim3
    grid(64, 32); dim3 block(16, 16);` 2^19; --block/--grid win over both."""
    source = """\
        static int iDivUp(int a, int b) { return (a + b - 1) / b; }
        __global__ void saxpy(int n, float a, const float* x, float* y) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) y[i] = a * x[i] + y[i];
        }
        __global__ void tile(float* m) {
          int x = blockIdx.x * blockDim.x + threadIdx.x;
          int y = blockIdx.y * blockDim.y + threadIdx.y;
          m[y * 1024 + x] *= 2.0f;
        }
        int main() {
          int n = 1 << 20;
          float *x, *y;
          const int threads = 256;
          saxpy<<<iDivUp(n, threads), threads>>>(n, 2.0f, x, y);
          dim3 grid(64, 32);
          dim3 block(16, 16);
          tile<<<grid, block>>>(x);
        }
        """
    k = analyze(tmp_path, source)
    assert k["saxpy"].resolved.threads == 1 << 20 and not k["saxpy"].resolved.defaults
    assert k["tile"].resolved.threads == 64 * 32 * 16 * 16 and not k["tile"].resolved.defaults
    # the launch's DRAM: x and y read, y written, 4 bytes each per thread (plus T7's 4 KiB)
    dram = k["saxpy"].resolved.dram
    assert (dram.load, dram.store) == (8 * (1 << 20) + 4096, 4 * (1 << 20))
    given = analyze(tmp_path, source, block=(128, 1, 1), grid=(10, 1, 1))
    assert given["saxpy"].resolved.threads == given["tile"].resolved.threads == 1280


@pytest.mark.rule("I4")
def test_full_unrolling_needs_a_real_constant_and_no_unroll_1(tmp_path):
    """A triangular inner loop (`j < i`, 19.5 trips on average) keeps its control, and so
    does an 8-trip loop under `#pragma unroll 1`; a plain 8-trip loop drops it."""
    source = """\
        __global__ void tri(int* o) {
          int s = 0;
          for (int i = 0; i < 40; i++)
            for (int j = 0; j < i; j++) s ^= 7;
          o[threadIdx.x] = s;
        }
        __global__ void kept(int* o) {
          int s = 0;
          #pragma unroll 1
          for (int j = 0; j < 8; j++) s ^= 7;
          o[threadIdx.x] = s;
        }
        __global__ void dropped(int* o) {
          int s = 0;
          #pragma unroll
          for (int j = 0; j < 8; j++) s ^= 7;
          o[threadIdx.x] = s;
        }
        """
    k = analyze(tmp_path, source)
    # outer: 40 x 2 control; inner: 40 x 20 trips (19.5 rounded up) x (2 control + 1 xor)
    assert k["tri"].resolved.flops["int"] == 40 * 2 + 40 * 20 * 3
    assert k["kept"].resolved.flops["int"] == 8 * 3
    assert k["dropped"].resolved.flops["int"] == 8


@pytest.mark.rule("D9")
def test_a_templated_launcher_leaves_its_own_parameters_unbound(tmp_path):
    """`k<T><<<...>>>` inside `template <typename T> void run(...)` binds nothing (T is the
    launcher's own parameter): the kernel is still counted, as the float default."""
    source = """\
        template <typename T>
        __global__ void k(T* a) { a[threadIdx.x] *= (T)2; }
        template <typename T>
        void run(T* a) { k<T><<<1, 32>>>(a); }
        void go(double* a) { run<double>(a); }
        """
    k = analyze(tmp_path, source)["k"]
    assert k.resolved.flops["sp"] == 1 and k.resolved.load_bytes == 4
