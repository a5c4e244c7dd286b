"""Compile mode, the threads that run code the source counter does not note on its own line
(docs/counting.md S44, S46, S47): a quotient of a thread position compared with a bound
(S44), inlined library code (S46), and a kept loop inside an outer loop the compiler
unrolled fully (S47); S35's continuation lines are tested beside it."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from compile_tools import clang_counts, clang_project, needs_clang
from roofcast.analyzer.sass import parse_disassembly
from roofcast.analyzer.sassbeside import beside_lines
from roofcast.features.outerunroll import picked_frames
from roofcast.features.symbolic import position_symbol, symbol
from roofcast.features.threadshare import arm_share

TX, BX = position_symbol("threadIdx_x"), position_symbol("blockIdx_x")
BDX, GDX = symbol("blockDim_x"), symbol("gridDim_x")
N = symbol("n")

# Written for these tests: 36 threads per item, a guarded statement over three lines,
# guarded calls of the toolkit's expf and logf, and a loop of 32 trips inside one of 4.
KERNELS = """\
__global__ void per_site(const float* a, float* c, int n) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  int i = id / 36;
  if (i < n) {
    c[id] = a[i] * a[id % 36] + 1.0f;
  }
}

__global__ void spanned(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = (x[i] * 3.0f + 1.0f) *
           (x[i] * x[i] + 2.0f) *
           (x[i] - 5.0f);
  }
}

__global__ void library(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = expf(x[i]) + logf(x[i]);
  }
}

__global__ void outer4(const float* a, const float* w, float* c) {
  __shared__ float s[4096];
  int t = threadIdx.x;
  int hop[32] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
  float sum = 0.0f;
  for (int k = 0; k < 4; k++) {
    s[t] = a[k * 1024 + t];
    s[t + 1024] = a[k * 1024 + t + 4096];
    __syncthreads();
    float part = 0.0f;
    for (int j = 0; j < 32; j++)
      part += s[t * 2 + hop[j] * 64] * w[k * 32 + j];
    sum += part;
    __syncthreads();
  }
  c[blockIdx.x * blockDim.x + t] = sum;
}
"""


@pytest.mark.rule("S44")
def test_a_position_over_a_constant_below_a_bound_keeps_that_many_threads() -> None:
    launch = BX * BDX + TX
    below = arm_share([("<", launch / 36, N)])
    assert below == sympy.Min(36 * N, BDX * GDX) / (BDX * GDX)
    # integer division: q <= n holds for the 36 (n + 1) first positions
    assert arm_share([("<=", launch / 36, N)]) == sympy.Min(36 * N + 36, BDX * GDX) / (BDX * GDX)
    assert arm_share([(">", N, TX / 4)]) == sympy.Min(4 * N, BDX) / BDX
    # a position that repeats another way is still no share
    assert arm_share([("<", TX * TX / 4, N)]) == 1


# Hand-written nvdisasm excerpt (clang's shape): a builtin header's thread index first, a
# kernel line, an inlined header's code, the kernel line again, more header code, the
# kernel's `EXIT` at its closing line.
LISTING = """\
        .section        .text._Z1kPf,"ax",@progbits
_Z1kPf:
        //## File "/usr/include/vars.h", line 53
        /*0000*/                   S2R R0, SR_TID.X ;
        //## File "/s/k.cu", line 4
        /*0010*/                   LDG.E R4, [R2.64] ;
        //## File "/usr/include/math.h", line 90
        /*0020*/                   FMUL R5, R4, 1.5 ;
        /*0030*/                   FFMA R5, R5, R4, R4 ;
        //## File "/s/k.cu", line 5
        /*0040*/                   STG.E [R2.64], R5 ;
        //## File "/usr/include/math.h", line 91
        /*0050*/                   FADD R6, R5, 1 ;
        /*0060*/                   FADD R6, R6, 1 ;
        //## File "/s/k.cu", line 7
        /*0070*/                   EXIT ;
"""


@pytest.mark.rule("S46")
def test_inlined_library_code_lies_between_its_callers_lines() -> None:
    function = parse_disassembly(LISTING)["_Z1kPf"]
    beside = beside_lines(function)
    assert beside[0x20] == beside[0x30] == (("/s/k.cu", 4), ("/s/k.cu", 5))
    assert beside[0x50] == beside[0x60] == (("/s/k.cu", 5), ("/s/k.cu", 7))
    # no kernel line before it; the kernel's own lines need none
    assert 0x00 not in beside and 0x10 not in beside and 0x40 not in beside
    # inline chains (nvcc's) name the call site themselves
    chained = LISTING.replace("line 90\n", 'line 90 inlined at "/s/k.cu", line 4\n')
    assert beside_lines(parse_disassembly(chained)["_Z1kPf"]) == {}


@pytest.mark.rule("S47")
def test_kept_loops_on_an_inner_loops_line_run_its_trips() -> None:
    four, thirty_two = sympy.Integer(4), sympy.Integer(32)
    frames = (four, thirty_two)
    loops = {("/k.cu", 10): (four,), ("/k.cu", 12): frames}
    # four kept copies of the inner loop, one per trip of the outer one
    assert picked_frames(frames, [("/k.cu", 12)], loops, {("/k.cu", 12): 4}) == (
        (thirty_two,),
        (),
    )
    # a kept outer loop, the inner one unrolled fully: S5's outer trips stand
    assert picked_frames(frames, [("/k.cu", 10)], loops, {("/k.cu", 10): 1}) is None
    # as many copies as the outer loop's trips, or no S47
    assert picked_frames(frames, [("/k.cu", 12)], loops, {("/k.cu", 12): 1}) is None
    assert picked_frames(frames, [("/k.cu", 12)], loops, {("/k.cu", 12): 2}) is None


def _clang_counts(tmp_path: Path) -> dict[str, dict[str, sympy.Expr]]:
    counted = clang_counts(clang_project(tmp_path, KERNELS), tmp_path / "cache", {"n": "4096"})
    out = {}
    for name, fv in counted.items():
        assert fv.counted_from == "sass" and "clang" in fv.counted_why, fv.counted_why
        out[name] = {"sp": fv.flops_sp, "int": fv.int_ops}
    return out


def _at(expr: sympy.Expr, **values: float) -> float:
    return float(expr.subs({s: values[s.name] for s in expr.free_symbols}))


@pytest.mark.rule("S44", "S35", "S46", "S47")
@needs_clang
def test_clang_counts_follow_the_threads_that_run_the_code(tmp_path: Path) -> None:
    counts = _clang_counts(tmp_path)
    threads = 256 * 1024
    launch = {"blockDim_x": 256, "gridDim_x": 1024}
    # every FLOP of these kernels runs for the guarded threads alone: a quarter of the
    # launch counts a quarter of what the whole launch does
    for name, items in (("per_site", threads // 36), ("spanned", threads), ("library", threads)):
        whole = _at(counts[name]["sp"], n=items, **launch)
        assert whole > 0
        assert _at(counts[name]["sp"], n=items // 4, **launch) == pytest.approx(whole / 4, rel=0.01)
    # 36 threads per item: one FMA each
    assert _at(counts["per_site"]["sp"], n=threads // 72, **launch) == pytest.approx(1.0, rel=0.01)
    # four passes of 32 FMAs and an add: the inner loop's trips, not the outer one's
    assert _at(counts["outer4"]["sp"], **launch) == 4 * (32 * 2 + 1)
