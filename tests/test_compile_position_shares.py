"""Compile mode, the share of the threads that run a guarded line where the guard divides,
tiles or takes the remainder of a thread position (docs/counting.md S48-S50), and of a callee
line inlined at sites of two shares (S51)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from compile_tools import clang_counts, clang_project, needs_clang
from roofcast.features.cycleshare import inverse_mean, remainder_share
from roofcast.features.positionshare import quotient_share, tiled
from roofcast.features.siteshare import noted
from roofcast.features.symbolic import position_symbol, symbol
from roofcast.features.threadshare import arm_share
from roofcast.features.vector import CallSite

TX, TY, BZ = (position_symbol(n) for n in ("threadIdx_x", "threadIdx_y", "blockIdx_z"))
BDX, BDY, GDZ = (symbol(n) for n in ("blockDim_x", "blockDim_y", "gridDim_z"))
G, N = symbol("g"), symbol("n")

# Written for these tests: a warp's quotient, a tile's positions against a partial last
# tile, and a remainder by a doubling counter.
KERNELS = """\
__global__ void every(const float* x, float* y) {
  int tid = threadIdx.y * 32 + threadIdx.x;
  y[tid] = x[tid] * 3.0f + 1.0f;
}

__global__ void first_warp(const float* x, float* y) {
  int tid = threadIdx.y * 32 + threadIdx.x;
  int wid = tid / 32;
  if (wid == 0) {
    y[tid] = x[tid] * 3.0f + 1.0f;
  }
}

__global__ void tiles(const float* x, float* y, int hout, int wout, int g) {
  int h = blockIdx.z / g * 16 + threadIdx.y;
  int w = blockIdx.z % g * 16 + threadIdx.x;
  if (h < hout && w < wout) {
    y[h * wout + w] = x[h * wout + w] * 3.0f + 1.0f;
  }
}

__device__ float twice(float v) {
  for (int k = 0; k < 16; k++) {
    v = v * 3.0f + 1.0f;
  }
  return v;
}

__global__ void reused(const float* x, float* y) {
  int t = threadIdx.x;
  float v = twice(x[t]);
  if (t / 32 == 0) {
    v = twice(v);
  }
  y[t] = v;
}

__global__ void pairwise(float* v) {
  int t = threadIdx.x;
  for (int step = 1; step < 32; step *= 2) {
    int stride = step;
    if (t % stride == 0) {
      v[t] = v[t] * 0.5f + v[t + stride / 2];
    }
    __syncthreads();
  }
}
"""


@pytest.mark.rule("S48")
def test_a_quotient_of_positions_equal_to_a_value_keeps_a_divisor_of_threads() -> None:
    assert quotient_share((TY * 32 + TX) / 32) == sympy.Min(32, BDX * BDY) / (BDX * BDY)
    assert arm_share([("==", TX / 32, sympy.Integer(0))]) == sympy.Min(32, BDX) / BDX
    # a plain position is still one thread of each value; no integer coefficient of 1
    assert arm_share([("==", TX, sympy.Integer(0))]) == 1 / BDX
    assert quotient_share(TX * TX / 4) is None
    assert quotient_share(TX) is None


@pytest.mark.rule("S49")
def test_a_tiles_position_below_a_bound_keeps_the_tiles_part() -> None:
    down = BZ / G * 16 + TY
    across = sympy.Mod(BZ, G) * 16 + TX
    assert tiled(down) == (0, 16 * GDZ / sympy.floor(G, evaluate=False))
    assert tiled(across + 3) == (3, 16 * sympy.floor(G, evaluate=False))
    share = arm_share([("<", down, N), ("<", across, N)])
    at = {G: 2, GDZ: 4, N: 28}
    assert float(share.subs(at)) == pytest.approx((28 / 32) ** 2)
    # a bound the host computed without truncating still takes C's whole number of tiles
    assert float(share.subs({**at, G: 2.6875})) == pytest.approx((28 / 32) ** 2)
    # a block position without a tile size, or two thread positions: not a tile
    assert tiled(BZ / G + TY) is None
    assert tiled(BZ / G * 16 + TY + TX) is None


def _clang_counts(tmp_path: Path, args: dict[str, str]) -> dict[str, sympy.Expr]:
    counted = clang_counts(clang_project(tmp_path, KERNELS), tmp_path / "cache", args)
    out = {}
    for name, fv in counted.items():
        assert fv.counted_from == "sass" and "clang" in fv.counted_why, fv.counted_why
        out[name] = fv.flops_sp
    return out


def _at(expr: sympy.Expr, **values: float) -> float:
    return float(expr.subs({s: values[s.name] for s in expr.free_symbols}))


@pytest.mark.rule("S48", "S49")
@needs_clang
def test_clang_counts_of_divided_and_tiled_guards(tmp_path: Path) -> None:
    # the host binds the bounds (their values here stand in; the counts keep the names)
    counts = _clang_counts(tmp_path, {"hout": "28", "wout": "28", "g": "2"})
    every = float(counts["every"])
    assert every > 0
    # the statement for the first warp of 8: an eighth of the block
    warp = _at(counts["first_warp"], blockDim_x=32, blockDim_y=8)
    assert warp == pytest.approx(every / 8)
    # for the 28 x 28 of 32 x 32 positions of 2 x 2 tiles of 16 x 16
    launch = {"blockDim_x": 16, "blockDim_y": 16, "gridDim_z": 4, "g": 2}
    whole = _at(counts["tiles"], hout=32, wout=32, **launch)
    assert whole == pytest.approx(every)
    part = _at(counts["tiles"], hout=28, wout=28, **launch)
    assert part == pytest.approx(every * (28 / 32) ** 2)


@pytest.mark.rule("S50")
def test_a_remainder_by_a_doubling_counter_keeps_one_in_the_counter() -> None:
    mean = inverse_mean("mul", sympy.Integer(2), sympy.Integer(1), sympy.Integer(5))
    assert mean == sympy.Rational(31, 16) / 5  # 1 + 1/2 + ... + 1/16 over five trips
    assert inverse_mean("div", sympy.Integer(2), sympy.Integer(16), sympy.Integer(5)) == mean
    assert inverse_mean("add", sympy.Integer(2), sympy.Integer(1), sympy.Integer(5)) is None
    mark = sympy.Symbol("S50_i")
    pairs = [("==", sympy.Mod(TX, mark), sympy.Integer(0))]
    assert remainder_share(pairs, {mark: mean}) == sympy.Max(mean, 1 / BDX)
    # another divisor, or a remainder of no thread position: no share
    assert remainder_share([("==", sympy.Mod(TX, N), sympy.Integer(0))], {mark: mean}) == 1
    assert remainder_share([("==", sympy.Mod(N, mark), sympy.Integer(0))], {mark: mean}) == 1


@pytest.mark.rule("S50")
@needs_clang
def test_clang_counts_of_a_remainder_guard(tmp_path: Path) -> None:
    counts = _clang_counts(tmp_path, {})
    # five trips, one thread in 1, 2, 4, 8, 16 each: 31/16 runs of the line per thread
    runs = _at(counts["pairwise"], blockDim_x=32)
    assert runs > 0
    per_run = float(counts["every"])  # the same multiply-add, one load apart
    assert runs == pytest.approx(per_run * 31 / 16)


@pytest.mark.rule("S51")
@needs_clang
def test_clang_counts_of_a_callee_inlined_at_sites_of_two_shares(tmp_path: Path) -> None:
    counts = _clang_counts(tmp_path, {})
    every = float(counts["every"])
    # the callee's 16 multiply-adds once for every thread, once more for the first warp
    reused = _at(counts["reused"], blockDim_x=256)
    assert reused == pytest.approx(16 * every * (1 + 32 / 256))


@pytest.mark.rule("S51")
def test_a_line_noted_twice_from_one_call_keeps_s16s_rule() -> None:
    warp = sympy.Rational(1, 8)
    site = CallSite(("/k.cu", 3), (), (), warp)
    assert noted(None, warp) == warp
    assert noted(site, warp) == warp
    # `if (c) { if (t < 32) ... }` on one line: the outer statement runs for every thread
    assert noted(site, sympy.Integer(1)) == 1
    assert noted(site._replace(share=sympy.Integer(1)), warp) == 1
