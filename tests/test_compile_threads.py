"""Compile mode, lines only some threads run (docs/counting.md S16, S17): an arm selected by
a thread position (`threadIdx.x == 0`, `threadIdx.x < 32`) counts for its share of the
threads, and a loop striding over the positions by their number runs n / threads times
per thread on average, not the ceiling of it."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from roofcast.analyzer.compile import Compiler
from roofcast.analyzer.discover import discover_files
from roofcast.features import count_features
from roofcast.features.sasscount import known_shares, recount
from roofcast.features.symbolic import position_symbol, symbol
from roofcast.features.threadshare import arm_share, halving_mean, spread_trip

TX, BX = position_symbol("threadIdx_x"), position_symbol("blockIdx_x")
TY = position_symbol("threadIdx_y")
BDX, GDX, BDY = symbol("blockDim_x"), symbol("gridDim_x"), symbol("blockDim_y")
N = symbol("n")

# Written for these tests: a reduction one thread per block runs, one the first warp runs,
# one the threads below n run (the others return first), a tree reduction, and a
# grid-stride axpy.
KERNELS = """\
__global__ void head(const float* x, float* out, int n) {
  float s = 0.0f;
  if (threadIdx.x == 0) {
    for (int k = 0; k < n; k++)
      s += x[k] * x[k];
    out[blockIdx.x] = s;
  }
}

__global__ void warp0(const float* x, float* out, int n) {
  float s = 0.0f;
  if (threadIdx.x < 32) {
    for (int k = 0; k < n; k++)
      s += x[k] * x[threadIdx.x];
    out[threadIdx.x] = s;
  }
}

__global__ void early(int n, int m, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
  for (int k = 0; k < m; k++)
    s += x[k] * x[i];
  y[i] = s;
}

__global__ void tree(float* x) {
  __shared__ float part[1024];
  int tid = threadIdx.x;
  part[tid] = x[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      part[tid] += part[tid + s];
    __syncthreads();
  }
  x[blockIdx.x * blockDim.x + tid] = part[tid];
}

__global__ void strided(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}
"""


@pytest.mark.rule("S16")
def test_equality_on_a_position_keeps_one_thread_per_value_of_the_others() -> None:
    assert arm_share([("==", TX, sympy.Integer(0))]) == 1 / BDX
    assert arm_share([("==", BX * BDX + TX, sympy.Integer(0))]) == 1 / (BDX * GDX)
    assert arm_share([("==", BDX - 1, TX), ("==", TY, sympy.Integer(0))]) == 1 / (BDX * BDY)
    # a remainder: one lane of each 32 (of each blockDim.x, when that is fewer)
    assert arm_share([("==", sympy.Mod(TX, 32), sympy.Integer(0))]) == 1 / sympy.Min(32, BDX)
    # not one thread: a value of the position that repeats, or one compared with another's
    assert arm_share([("==", sympy.floor(TX / 2), sympy.Integer(0))]) == 1
    assert arm_share([("==", TX, TY)]) == 1
    assert arm_share([("==", N, sympy.Integer(3))]) == 1


@pytest.mark.rule("S16")
def test_a_bound_no_position_moves_keeps_that_many_positions() -> None:
    assert arm_share([("<", TX, sympy.Integer(32))]) == sympy.Min(32, BDX) / BDX
    assert arm_share([(">", sympy.Integer(32), TX)]) == sympy.Min(32, BDX) / BDX
    assert arm_share([("<=", TX + 1, BDX / 2)]) == sympy.Min(BDX / 2, BDX) / BDX
    # a problem size: Min(n, threads) of the threads (fewer where the grid is rounded up)
    assert arm_share([("<", BX * BDX + TX, N)]) == sympy.Min(N, BDX * GDX) / (BDX * GDX)
    # a bound some thread position moves is no share
    assert arm_share([("<", TX, TY + 4)]) == 1
    # two positions with coefficients are not an enumeration of the threads
    assert arm_share([("<", 2 * TX + TY, sympy.Integer(8))]) == 1


@pytest.mark.rule("S17")
def test_a_loop_striding_by_the_positions_extent_runs_the_span_over_the_stride() -> None:
    assert spread_trip("<", BX * BDX + TX, N, BDX * GDX) == N / (BDX * GDX)
    assert spread_trip("<=", TX, N, BDX) == (N + 1) / BDX
    # a stride that is not the positions' number, or a start no position moves
    assert spread_trip("<", TX, N, BDX * GDX) is None
    assert spread_trip("<", TX, N, sympy.Integer(256)) is None
    assert spread_trip("<", sympy.Integer(0), N, BDX) is None
    assert spread_trip(">", TX, N, BDX) is None


@pytest.mark.rule("S18")
def test_a_halving_counter_averages_its_values_over_its_trips() -> None:
    trip = sympy.Integer(8)
    # 128, 64, ..., 1 sum to 255
    assert halving_mean(">", sympy.Integer(128), sympy.Integer(0), "div", 2, trip) == 255 / trip
    # 1, 2, ..., 128 below 256 sum to 255
    assert halving_mean("<", sympy.Integer(1), sympy.Integer(256), "mul", 2, trip) == 255 / trip
    # a counter from a thread position, or by another ratio: no mean
    assert halving_mean(">", TX, sympy.Integer(0), "div", 2, trip) is None
    assert halving_mean(">", sympy.Integer(81), sympy.Integer(0), "div", 3, trip) is None


@pytest.mark.rule("S16")
def test_a_share_over_a_name_nothing_binds_counts_every_thread() -> None:
    where = ("/k.cu", 3)
    bounded = {where: sympy.Min(N, BDX * GDX) / (BDX * GDX)}
    assert known_shares(bounded, {"n"}) == bounded
    # n would take a default (1024), not its value: the arm counts for every thread
    assert known_shares(bounded, set()) == {where: 1}
    # launch extents are always known
    assert known_shares({where: 1 / BDX}, set()) == {where: 1 / BDX}


def _counted(tmp_path: Path) -> dict[str, dict[str, sympy.Expr]]:
    source = tmp_path / "kernels.cu"
    source.write_text(KERNELS)
    compiler = Compiler("sm_86", cache_root=tmp_path / "cache")
    if compiler.unavailable():
        pytest.skip(f"no compiler: {compiler.unavailable()}")
    found = discover_files([source], [tmp_path], {}, frozenset(), None)
    out = {}
    bound = {"n": "4096", "m": "64"}  # as `-D`: a guard's bound is known (S16)
    for ir in found.kernels:
        fv = count_features(ir, bound, line_loops=True)
        recount(ir, fv, compiler, bound)
        assert fv.counted_from == "sass", fv.counted_why
        out[ir.name] = {"sp": fv.flops_sp, "int": fv.int_ops}
    return out


def _at(expr: sympy.Expr, **values: int) -> float:
    return float(expr.subs({s: values[s.name] for s in expr.free_symbols}))


@pytest.mark.rule("S16", "S17", "S18")
def test_compiled_counts_follow_the_threads_that_run_each_line(tmp_path: Path) -> None:
    counts = _counted(tmp_path)
    launch = {"n": 4096, "m": 64, "blockDim_x": 256, "gridDim_x": 64}
    # one FMA per k, by one thread of each block: 2 n / blockDim per thread on average
    assert _at(counts["head"]["sp"], **launch) == pytest.approx(2 * 4096 / 256, rel=0.1)
    # the first warp of each block
    assert _at(counts["warp0"]["sp"], **launch) == pytest.approx(2 * 4096 * 32 / 256, rel=0.1)
    # m FMAs by the n of the launch's 16384 threads that do not return
    threads = 256 * 64
    assert _at(counts["early"]["sp"], **launch) == pytest.approx(2 * 64 * 4096 / threads, rel=0.1)
    # s threads add at each trip: 128 + 64 + ... + 1 = 255 FADDs per block of 256 threads
    assert _at(counts["tree"]["sp"], **launch) == pytest.approx(255 / 256, rel=0.1)
    # the loop body runs n times over the launch's threads: most run it not at all
    assert _at(counts["strided"]["sp"], **launch) == pytest.approx(2 * 4096 / threads, rel=0.1)
    # int ops per thread: a few for every thread, the loop's for a quarter of them
    assert _at(counts["strided"]["int"], **launch) < 8
