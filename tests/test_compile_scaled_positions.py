"""Compile mode: a scaled thread position compared with a loop counter (docs/counting.md
S52), and S16's share never below none."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from compile_tools import clang_counts, clang_project, needs_clang
from roofcast.features.symbolic import position_symbol, symbol
from roofcast.features.threadshare import arm_share

TX = position_symbol("threadIdx_x")
BDX, N = symbol("blockDim_x"), symbol("n")


@pytest.mark.rule("S52")
def test_a_scaled_position_keeps_the_values_below_the_bound() -> None:
    # 16 tx - 1 < 1024: tx < 64.06, the 65 positions 0..64 of 128
    assert arm_share([(">", sympy.Integer(1024), 16 * TX - 1)]).subs(BDX, 128) == sympy.Rational(
        65, 128
    )
    # <= keeps those up to the floor: 16 tx <= 64 for tx 0..4
    assert arm_share([("<=", 16 * TX, sympy.Integer(64))]).subs(BDX, 128) == sympy.Rational(5, 128)
    # a clamp at 0 below the bound never decides: max(0, 16 tx - 1) < 1024 as above
    clamped = sympy.Max(0, 16 * TX - 1)
    assert arm_share([("<", clamped, sympy.Integer(1024))]).subs(BDX, 128) == sympy.Rational(
        65, 128
    )
    # a clamp that could decide (max(2000, x) < 1024 never holds) is left alone: no share
    assert arm_share([("<", sympy.Max(2000, 16 * TX), sympy.Integer(1024))]) == 1
    # a factor that is no integer, or a square, is no scaled position
    assert arm_share([("<", TX * TX * 16, N)]) == 1


@pytest.mark.rule("S16")
def test_a_share_is_never_below_none() -> None:
    # tx < n - 300 with n = 100 and 256 threads: none of them, not a negative share
    share = arm_share([("<", TX, N - 300)])
    assert share.subs({N: 100, BDX: 256}) == 0
    assert share.subs({N: 400, BDX: 256}) == sympy.Rational(100, 256)


# Written for this test: the binomial-tree pattern, each thread's guarded update runs
# while the step counter is above its own first element.
KERNEL = """\
__global__ void tree(const float* a, float* out) {
  __shared__ float x[129];
  int tid = threadIdx.x;
  float v[16];
  for (int j = 0; j < 16; j++) v[j] = a[tid * 16 + j];
  int last = max(0, tid * 16 - 1);
  for (int i = 2048; i > 0; --i) {
    x[tid] = v[0];
    __syncthreads();
    v[15] = x[tid + 1];
    __syncthreads();
    if (i > last) {
#pragma unroll
      for (int j = 0; j < 15; j++) v[j] = 0.5f * v[j + 1] + 0.25f * v[j];
    }
  }
  out[tid] = v[0];
}
"""


@pytest.mark.rule("S52")
@needs_clang
def test_the_guarded_update_runs_for_its_share_of_the_steps(tmp_path: Path) -> None:
    fv = clang_counts(clang_project(tmp_path, KERNEL), tmp_path / "cache")["tree"]
    assert fv.counted_from == "sass", fv.counted_why
    sp = float(sympy.Integer(0) + fv.flops_sp.subs({BDX: 128}))
    # 15 updates of 3 FLOPs each per step, for 65 of the 128 threads at the mean step
    # (1024): about half of 2048 x 45, not all of it
    every_step = 2048 * 15 * 3
    assert sp == pytest.approx(every_step * 65 / 128, rel=0.02)
