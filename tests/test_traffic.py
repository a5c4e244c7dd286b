"""The launch traffic model (features/traffic.py, docs/counting.md T1-T11), on kernels written
here with their DRAM bytes counted by hand."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import sympy
from roofcast.features.traffic import (
    LAUNCH_OVERHEAD,
    Access,
    Dim,
    Machine,
    launch_traffic,
)
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import LaunchContext

MIB = 1 << 20


def launch(
    tmp_path: Path,
    source: str,
    defines: dict[str, str],
    block: tuple[int, int, int],
    grid: tuple[int, int, int],
    gpu: str = "a100",
) -> dict:
    """Each kernel's `dram_bytes` JSON (the launch model's output) by name."""
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(source))
    report = analyze_paths(
        [path], load_gpu(gpu), defines, RooflinePredictor(), LaunchContext(block=block, grid=grid)
    )
    return {k.ir.name: k.to_json() for k in report.kernels}


def arrays(kernel: dict) -> dict[str, dict]:
    return {a["array"]: a for a in kernel["dram_bytes"]["arrays"]}


N = 1 << 24  # 16 Mi elements: 64 MiB of floats, beyond any L2 here
STREAM = (256, 1, 1), (N // 256, 1, 1)


@pytest.mark.rule("T1")
def test_sectors_coalesced_strided_and_broadcast(tmp_path):
    k = launch(
        tmp_path,
        """\
        __global__ void coalesced(const float* a, float* b) {
          int i = blockIdx.x * blockDim.x + threadIdx.x; b[i] = a[i]; }
        __global__ void strided(const float* a, float* b) {
          int i = blockIdx.x * blockDim.x + threadIdx.x; b[i] = a[8 * i]; }
        __global__ void broadcast(const float* a, float* b) {
          int i = blockIdx.x * blockDim.x + threadIdx.x; b[i] = a[blockIdx.x]; }
        """,
        {},
        *STREAM,
    )
    threads = N
    assert arrays(k["coalesced"])["a"]["requested_bytes"] == 4 * threads
    # lanes 32 bytes apart: a sector each, 8x the bytes used
    assert arrays(k["strided"])["a"]["requested_bytes"] == 32 * threads
    # one element per block: one sector per warp
    assert arrays(k["broadcast"])["a"]["requested_bytes"] == 32 * threads / 32


@pytest.mark.rule("T2")
def test_footprint_is_the_union_of_a_stencils_reads(tmp_path):
    k = launch(
        tmp_path,
        """\
        #define IDX(i, j) ((i) + (j) * W)
        __global__ void star(const float* in, float* out) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          int j = blockIdx.y * blockDim.y + threadIdx.y;
          if (i > 0 && j > 0 && i < W - 1 && j < W - 1)
            out[IDX(i, j)] = in[IDX(i - 1, j)] + in[IDX(i + 1, j)]
                           + in[IDX(i, j - 1)] + in[IDX(i, j + 1)] + in[IDX(i, j)];
        }
        __global__ void rows(const float* a, float* out) {
          int r = blockIdx.x * blockDim.x + threadIdx.x;
          const float* row = a + r * W;
          float s = 0.0f;
          for (int c = 0; c < W; ++c) s += row[c];
          out[r] = s;
        }
        """,
        {"W": "4096"},
        (16, 16, 1),
        (256, 256, 1),
    )
    star = arrays(k["star"])
    # five reads of one 4096 x 4096 grid (plus one row of halo each side): 64 MiB once
    assert star["in"]["footprint_bytes"]["load"] == pytest.approx(64 * MIB, rel=0.01)
    assert star["in"]["requested_bytes"] == 5 * 4 * 4096 * 4096
    assert star["out"]["footprint_bytes"]["store"] == pytest.approx(64 * MIB, rel=1e-6)
    # `row = a + r * W`: the offset carries the row; 4096 rows (x only) read all of `a`
    assert arrays(k["rows"])["a"]["footprint_bytes"]["load"] == pytest.approx(
        4 * 4096 * 4096, rel=1e-6
    )


GEMM = """\
    __global__ void gemm(const float* A, const float* B, float* C) {
      int row = blockIdx.y * blockDim.y + threadIdx.y;
      int col = blockIdx.x * blockDim.x + threadIdx.x;
      float acc = 0.0f;
      for (int k = 0; k < N; ++k) acc += A[row * N + k] * B[k * N + col];
      C[row * N + col] = acc;
    }
    """


@pytest.mark.rule("T3")
def test_a_gemm_that_fits_l2_reads_each_matrix_once(tmp_path):
    n = 1024  # 3 x 4 MiB on an A100's 40 MiB L2
    k = launch(tmp_path, GEMM, {"N": str(n)}, (16, 16, 1), (n // 16, n // 16, 1))["gemm"]
    dram = k["dram_bytes"]
    assert dram["l2_decision"] == "fits L2"
    assert dram["load"] == 2 * 4 * n * n + LAUNCH_OVERHEAD
    assert dram["store"] == 4 * n * n
    # a warp's lanes share A's element (one sector per warp: 1 byte a thread) and read
    # consecutive elements of B: n^3 and 4 n^3 bytes asked for, of 4 n^2 each in DRAM
    assert arrays(k)["A"]["requested_bytes"] == n**3
    assert arrays(k)["B"]["requested_bytes"] == 4 * n**3
    assert k["bound"] == "compute"


@pytest.mark.rule("T4")
@pytest.mark.rule("T5")
def test_gemm_waves_in_and_out_of_l2(tmp_path):
    # n = 2048: 48 MiB of matrices, beyond the A100's 40 MiB L2; one wave of 108 x 8 resident
    # blocks covers 7 of the 128 block rows (112 rows of A and C) and all of B: 18 MiB, so
    # what the waves share (B) stays in L2: each matrix is read once
    n = 2048
    k = launch(tmp_path, GEMM, {"N": str(n)}, (16, 16, 1), (n // 16, n // 16, 1))["gemm"]
    dram = k["dram_bytes"]
    assert dram["waves"] == -(-((n // 16) ** 2) // (108 * 8)) == 19
    assert dram["l2_decision"] == "wave fits L2"
    assert dram["load"] == 2 * 4 * n * n + LAUNCH_OVERHEAD
    # n = 4096: one wave touches all 64 MiB of B (spills, T5). The first wave (864 blocks, 4
    # block rows begun) shares in step. After it, blocks sharing a row of A are neighbours:
    # between them one block's strips pass (512 KiB), so A is read once more; blocks sharing a
    # column of B are a row of 256 blocks apart: between them all 64 MiB of B pass, more than
    # L2, so each block row reads B again
    n = 4096
    k = launch(tmp_path, GEMM, {"N": str(n)}, (16, 16, 1), (n // 16, n // 16, 1))["gemm"]
    dram = k["dram_bytes"]
    assert dram["waves"] == 76 and dram["l2_decision"] == "spills L2"
    a = arrays(k)
    later = ((n // 16) ** 2 - 864) / (n // 16) ** 2
    assert a["B"]["dram_bytes"]["load"] == pytest.approx(64 * MIB * (1 + later * (n // 16)))
    assert a["A"]["dram_bytes"]["load"] == pytest.approx(4 * 16 * 4 * n + later * 4 * n * n)
    assert a["C"]["dram_bytes"]["store"] == 64 * MIB
    assert k["bound"] == "compute"


@pytest.mark.rule("T5")
def test_blocks_whose_own_data_spills_l2_share_nothing():
    """Direct: one array every block reads whole (64 MiB, over a per-thread loop), on an L2 of
    1 MiB. The first wave (4 blocks) reads it in step, once; after it, between two blocks'
    use of one element the next block walks all 64 MiB: each later block reads it again."""
    t, b, lam = (sympy.Symbol(n, integer=True, nonnegative=True) for n in ("t", "b", "l"))
    dims = [
        Dim(t, sympy.Integer(256), "lane"),
        Dim(b, sympy.Integer(1024), "block"),
        Dim(lam, sympy.Integer(1 << 24), "loop"),
    ]
    shared = Access("w", lam, 4, 4, False, sympy.Integer(1 << 24), 1)
    machine = Machine(l2_bytes=MIB, sms=4, threads_per_sm=256, blocks_per_sm=1)
    out = launch_traffic([shared], dims, {}, 256 * 1024, machine, block_threads=256)
    assert out is not None and out.decision == "spills L2"
    assert out.waves == 1024 // 4
    assert out.arrays[0].dram_load == (1 + 1020) * 64 * MIB


@pytest.mark.rule("T11")
def test_a_stencil_over_a_remainder_is_placed(tmp_path):
    """A 5-point stencil over `i = idx % n`, `j = idx / n`: `idx % n` is in 0 .. n-1, so the
    offsets are placed (once T10's unplaced neighbours) and each array moves its grid once,
    not once per point."""
    n = 4096
    k = launch(
        tmp_path,
        """\
        __global__ void heat(const unsigned n, const double* u, double* v) {
          int idx = blockDim.x * blockIdx.x + threadIdx.x;
          int i = idx % n;
          int j = idx / n;
          v[i + j * n] = u[i + j * n] + u[i + 1 + j * n] + u[i - 1 + j * n]
                       + u[i + (j + 1) * n] + u[i + (j - 1) * n];
        }
        """,
        {"n": str(n)},
        (256, 1, 1),
        (n * n // 256, 1, 1),
    )["heat"]
    a = arrays(k)
    assert a["u"]["from_index"]
    # one grid, not five; the union of the points' ranges reaches one row beyond each edge
    assert a["u"]["footprint_bytes"]["load"] == pytest.approx(8 * n * n, rel=1e-3)
    assert a["v"]["footprint_bytes"]["store"] == 8 * n * n


@pytest.mark.rule("T10")
def test_unplaced_sites_share_only_within_their_nest_and_gathers_stay_apart():
    """Direct: two unplaced reads of `a` in one nest share; a third in another loop nest and
    two gathers of `x` do not."""
    t = sympy.Symbol("t", integer=True, nonnegative=True)
    dims = [Dim(t, sympy.Integer(1024), "lane")]
    one = sympy.Integer(1)
    accesses = [
        Access("a", None, 4, 4, False, one, 1, indirect=False),
        Access("a", None, 4, 4, False, one, 2, indirect=False),
        Access("a", None, 4, 4, False, sympy.Integer(3), 3, indirect=False, nest=(7,)),
        Access("x", None, 4, 4, False, one, 4, indirect=True),
        Access("x", None, 4, 4, False, one, 5, indirect=True),
    ]
    machine = Machine(l2_bytes=64 * MIB, sms=4, threads_per_sm=1024, blocks_per_sm=1)
    out = launch_traffic(accesses, dims, {}, 1024, machine)
    assert out is not None
    got = {a.array: a.load_footprint for a in out.arrays}
    assert got["a"] == 1024 * 4 + 3 * 1024 * 4  # the nest's pair once, the loop's apart
    assert got["x"] == 2 * 1024 * 4  # a gather's place is its own


@pytest.mark.rule("T6")
def test_gathers_are_one_place_per_thread_loop_moved_places_new_each_time(tmp_path):
    k = launch(
        tmp_path,
        """\
        __global__ void spmv(const int* rowptr, const int* col, const float* val,
                             const float* x, float* y) {
          int r = blockIdx.x * blockDim.x + threadIdx.x;
          float s = 0.0f;
          for (int j = rowptr[r]; j < rowptr[r + 1]; ++j) s += val[j] * x[col[j]];
          y[r] = s;
        }
        """,
        {"trip_L5": "8"},
        (256, 1, 1),
        (4096, 1, 1),
    )["spmv"]
    rows = 256 * 4096
    a = arrays(k)
    assert not a["x"]["from_index"] and not a["val"]["from_index"]
    assert a["x"]["footprint_bytes"]["load"] == 4 * rows  # the gather: one per thread
    assert a["val"]["footprint_bytes"]["load"] == 4 * 8 * rows  # every nonzero once


@pytest.mark.rule("T7")
def test_every_launch_reads_its_overhead(tmp_path):
    k = launch(
        tmp_path,
        "__global__ void one(float* a) { if (threadIdx.x == 0) a[0] = 1.0f; }\n",
        {},
        (32, 1, 1),
        (1, 1, 1),
    )["one"]
    assert k["dram_bytes"]["load"] == LAUNCH_OVERHEAD
    assert k["dram_bytes"]["store"] == 4


@pytest.mark.rule("T8")
def test_a_guessed_size_assumes_no_reuse(tmp_path):
    source = (
        GEMM.replace("k < N", "k < n")
        .replace("* N", "* n")
        .replace("const float* A,", "const float* A, int n,")
    )
    bound = launch(tmp_path, source, {"n": "1024"}, (16, 16, 1), (64, 64, 1))["gemm"]
    guessed = launch(tmp_path, source, {}, (16, 16, 1), (64, 64, 1))["gemm"]
    assert guessed["defaults_applied"] == {"n": 1024}
    assert arrays(bound)["A"]["from_index"] and not arrays(guessed)["A"]["from_index"]
    # the same sizes, but only the bound one trusts its reuse
    assert arrays(guessed)["A"]["dram_bytes"]["load"] == arrays(guessed)["A"]["requested_bytes"]
    assert arrays(bound)["A"]["dram_bytes"]["load"] == 4 * 1024 * 1024


def test_textbook_dram_bytes_match_the_hand_counts():
    """Every textbook kernel's sidecar counts its launch's DRAM bytes by hand; the model is
    within 2x of all of them and within 5% of the streaming, stencil, GEMM (in and out of
    L2), transpose, SpMV, histogram and reduction kernels."""
    from roofcast.kernels.textbook import load_textbook

    exact_families = ("streaming", "stencils", "gemm", "transpose", "reductions")
    near = far = 0
    for entry in load_textbook():
        if entry.expected_dram is None:
            continue
        report = analyze_paths([entry.source], load_gpu("a100"), entry.defines)
        [kernel] = [k for k in report.kernels if k.ir.name == entry.name]
        assert kernel.resolved.dram is not None, entry.id
        ratio = kernel.resolved.dram.total / entry.expected_dram.total
        assert 0.5 <= ratio <= 2, (entry.id, ratio)
        if any(f in str(entry.source) for f in exact_families) and "regblock" not in entry.id:
            assert ratio == pytest.approx(1, rel=0.05), (entry.id, ratio)
            near += 1
        else:
            far += 1
    assert near >= 12


@pytest.mark.rule("T4")
def test_a_waves_stencil_neighbours_are_one_range():
    """Direct: a 3-point stencil over 2^18 floats (1 MiB), 4 blocks of 256 resident at a time
    on an 8 KiB L2. One wave touches about 4 KiB of `u`: its three neighbour ranges are one
    range, so the wave fits and `u` is read once; summed, they would not fit (12 KiB) and
    every wave would re-read its neighbours."""
    t, b = (sympy.Symbol(n, integer=True, nonnegative=True) for n in ("t", "b"))
    dims = [Dim(t, sympy.Integer(256), "lane"), Dim(b, sympy.Integer(1024), "block")]
    place = 256 * b + t
    reads = [Access("u", place + shift, 4, 4, False, sympy.Integer(1), 1) for shift in (-1, 0, 1)]
    machine = Machine(l2_bytes=8 * 1024, sms=4, threads_per_sm=256, blocks_per_sm=1)
    out = launch_traffic(reads, dims, {}, 256 * 1024, machine, block_threads=256)
    assert out is not None and out.waves == 256
    assert out.decision == "wave fits L2"
    (u,) = out.arrays
    assert u.wave_footprint == pytest.approx(4 * (4 * 256 + 2))
    assert u.dram_load == u.load_footprint == pytest.approx(4 * (1 << 18) + 8)


@pytest.mark.rule("T7")
def test_a_kernel_that_touches_no_memory_moves_its_overhead(tmp_path):
    k = launch(tmp_path, "__global__ void nothing() {}\n", {}, (32, 1, 1), (1, 1, 1))["nothing"]
    assert k["dram_bytes"]["load"] == LAUNCH_OVERHEAD and k["dram_bytes"]["store"] == 0


@pytest.mark.rule("T9")
def test_atomic_targets_are_written_back_once(tmp_path):
    """A counter bumped by every thread is one 4-byte store; the per-thread bytes leave it out."""
    source = """\
        __global__ void count(int* total, const int* flags) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (flags[i]) atomicAdd(total, 1);
        }
        __global__ void bump(float* acc) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          atomicAdd(&acc[i % 64], 1.0f);
        }
        """
    k = launch(tmp_path, source, {}, (256, 1, 1), (4096, 1, 1))
    count = k["count"]
    assert count["bytes_per_thread"]["store"] == 0 and count["features"]["atomics"] == 1
    assert arrays(count)["total"]["dram_bytes"]["store"] == 4
    assert count["dram_bytes"]["store"] == 4
    assert arrays(k["bump"])["acc"]["dram_bytes"]["store"] > 0  # placed, if not exactly


@pytest.mark.rule("T2")
def test_a_cast_dereference_of_a_pointer_sum_is_placed_in_its_array(tmp_path):
    """`*(char4*)(data + i + 4096*gx)`: the sum steps from `data`, so 1024 rows of 4 KiB are
    4 MiB read once; `atomicAdd(dist + 1024*gx + gy, c)` places 1024 x 1024 ints (T9)."""
    k = launch(
        tmp_path,
        """\
        __global__ void pairs(const char* data, int* dist) {
          int gx = blockIdx.x, gy = blockIdx.y;
          for (int i = 4 * threadIdx.x; i < 4096; i += 128 * 4) {
            char4 a = *(char4*)(data + i + 4096 * gx);
            char4 b = *(char4*)(data + i + 4096 * gy);
            atomicAdd(dist + 1024 * gx + gy, (a.x ^ b.x) + (a.y ^ b.y));
          }
        }
        """,
        {},
        (128, 1, 1),
        (1024, 1024, 1),
    )["pairs"]
    a = arrays(k)
    assert a["data"]["from_index"] and a["data"]["footprint_bytes"]["load"] == 4 * MIB
    assert a["dist"]["dram_bytes"]["store"] == 4 * MIB


@pytest.mark.rule("T2")
def test_a_pointer_moved_to_the_threads_place_keeps_its_offset(tmp_path):
    """`src += row * pitch + x` before any loop puts each thread at its own place: the tile
    loop then reads the 4096 x 1024 image once, not one element row per thread."""
    k = launch(
        tmp_path,
        """\
        __global__ void rows(float* dst, const float* src, int pitch) {
          int x = blockIdx.x * 64 + threadIdx.x;
          int row = blockIdx.y;
          src += row * pitch + x;
          dst += row * pitch + x;
          for (int i = 0; i < 4; i++) dst[16 * i] = 2.0f * src[16 * i];
        }
        """,
        {"pitch": "4096"},
        (16, 1, 1),
        (64, 1024, 1),
    )["rows"]
    a = arrays(k)
    assert a["src"]["from_index"] and a["src"]["footprint_bytes"]["load"] == 4 * 4096 * 1024
    assert a["dst"]["footprint_bytes"]["store"] == 4 * 4096 * 1024


@pytest.mark.rule("T5")
def test_block_sharing_survives_only_while_the_run_between_sharers_fits_l2():
    """Direct: an 8 x 8 grid of 32 x 4 blocks walking a loop of 1024. `a` (one 4 KiB row per
    block row) is shared by x neighbours; `b` (128 KiB per block column, shared
    by the block's 4 thread rows) by blocks a row of 8 apart. One block touches 132 KiB, one
    row of blocks 1 MiB + 4 KiB, one wave (16 blocks: two rows, in step) 1 MiB + 8 KiB: more
    than either L2 below. After the first wave, 48 of the 64 blocks."""
    tx, ty, bx, by, k = (
        sympy.Symbol(n, integer=True, nonnegative=True) for n in ("tx", "ty", "bx", "by", "k")
    )
    dims = [
        Dim(tx, sympy.Integer(32), "lane"),
        Dim(ty, sympy.Integer(4), "thread"),
        Dim(bx, sympy.Integer(8), "block"),
        Dim(by, sympy.Integer(8), "block"),
        Dim(k, sympy.Integer(1024), "loop"),
    ]
    a = Access("a", by * 1024 + k, 4, 4, False, sympy.Integer(1024), 1)
    b = Access("b", bx * 32768 + k * 32 + tx, 4, 4, False, sympy.Integer(1024), 2)
    threads = 128 * 64

    def run(l2: int) -> dict[str, float]:
        machine = Machine(l2_bytes=l2, sms=16, threads_per_sm=128, blocks_per_sm=4)
        out = launch_traffic([a, b], dims, {}, threads, machine, block_threads=128)
        assert out is not None and out.waves == 4 and out.decision == "spills L2"
        return {t.array: t.dram_load for t in out.arrays}

    # 512 KiB: a block fits (x neighbours share `a`: its footprint), a row does not (each of
    # the later 6 block rows reads all of `b` again, after the first wave's 1 MiB); by waves,
    # `b` would be 4 x 1 MiB
    assert run(512 * 1024) == {"a": 8 * 4096, "b": 1 * MIB + 6 * MIB}
    # 64 KiB: not even one block fits: every later block reads its own row of `a`
    assert run(64 * 1024) == {"a": 2 * 4096 + 48 * 4096, "b": 1 * MIB + 6 * MIB}


@pytest.mark.rule("T11")
def test_a_remainder_ranges_over_its_period():
    """Direct: `w[t % 16]` over 256 lanes reads 16 floats (64 bytes, two sectors), coalesced
    four bytes a lane; `w[t % 16 + 16 * b]` over 64 blocks, 64 such runs back to back."""
    t, b = (sympy.Symbol(n, integer=True, nonnegative=True) for n in ("t", "b"))
    dims = [Dim(t, sympy.Integer(256), "lane"), Dim(b, sympy.Integer(64), "block")]
    machine = Machine(l2_bytes=MIB, sms=64, threads_per_sm=256, blocks_per_sm=1)
    one = Access("w", sympy.Mod(t, 16), 4, 4, False, sympy.Integer(1), 1)
    out = launch_traffic([one], dims, {}, 256 * 64, machine, block_threads=256)
    assert out is not None and out.arrays[0].exact
    assert out.arrays[0].load_footprint == 64
    assert out.arrays[0].requested == 256 * 64 * 4
    runs = Access("w", sympy.Mod(t, 16) + 16 * b, 4, 4, False, sympy.Integer(1), 1)
    out = launch_traffic([runs], dims, {}, 256 * 64, machine, block_threads=256)
    assert out is not None and out.arrays[0].load_footprint == 64 * 64


@pytest.mark.rule("T11", "T5")
def test_a_gemm_with_one_d_blocks_places_its_columns_by_remainder(tmp_path):
    """16 x 16 outputs per 256-thread 1D block, column `t % 16`, at n = 4096 (48 MiB, beyond
    the A100's L2): the remainder places B's columns, so B moves as in the 2D GEMM above
    (the first wave's 64 MiB, then once per later block row), not its requested bytes."""
    source = """\
    __global__ void gemm1d(const float* A, const float* B, float* C, int n) {
      int t = threadIdx.x;
      int r = blockIdx.y * 16 + t / 16;
      int c = blockIdx.x * 16 + t % 16;
      float s = 0.0f;
      for (int k = 0; k < n; ++k)
        s += A[r * n + k] * B[k * n + c];
      C[r * n + c] = s;
    }
    """
    n = 4096
    k = launch(tmp_path, source, {"n": str(n)}, (256, 1, 1), (n // 16, n // 16, 1))["gemm1d"]
    a = arrays(k)
    assert a["B"]["from_index"] and a["C"]["from_index"]
    assert a["C"]["dram_bytes"]["store"] == 4 * n * n
    later = ((n // 16) ** 2 - 864) / (n // 16) ** 2
    assert a["B"]["dram_bytes"]["load"] == pytest.approx(64 * MIB * (1 + later * (n // 16)))
    assert a["B"]["dram_bytes"]["load"] < a["B"]["requested_bytes"] / 2


@pytest.mark.rule("T13")
def test_unplaced_sites_beside_a_placed_one_are_its_neighbours():
    """Direct: `u[t]` placed, then a loop of 4 over unplaced reads of `u` (a clipped stencil's
    `u[plus]`): they add only what exceeds `u[t]`'s 4 KiB. A gather of `x` beside a placed
    `x[t]`, and an unplaced read of `w` in a sibling nest of a placed `w`, stay apart."""
    t = sympy.Symbol("t", integer=True, nonnegative=True)
    dims = [Dim(t, sympy.Integer(1024), "lane")]
    one, four = sympy.Integer(1), sympy.Integer(4)
    accesses = [
        Access("u", t, 4, 4, False, one, 1),
        Access("u", None, 4, 4, False, four, 2, indirect=False, nest=(5,)),
        Access("x", t, 4, 4, False, one, 3),
        Access("x", None, 4, 4, False, four, 4, indirect=True, nest=(5,)),
        Access("w", t, 4, 4, False, four, 5, nest=(6,)),
        Access("w", None, 4, 4, False, four, 6, indirect=False, nest=(7,)),
    ]
    machine = Machine(l2_bytes=64 * MIB, sms=4, threads_per_sm=1024, blocks_per_sm=1)
    out = launch_traffic(accesses, dims, {}, 1024, machine)
    assert out is not None
    got = {a.array: a.load_footprint for a in out.arrays}
    assert got["u"] == 4 * 1024 * 4  # the loop's 16 KiB, `u[t]`'s 4 KiB within it
    assert got["x"] == 1024 * 4 + 1024 * 4  # a gather is its own place
    assert got["w"] == 1024 * 4 + 4 * 1024 * 4  # another nest: apart


@pytest.mark.rule("T14")
def test_an_unplaced_offset_touches_no_more_than_its_range():
    """Direct: `s[(t * t) % 16]` cannot be placed (a product of dims) but takes 16 values:
    64 bytes, three sectors with alignment, not a place per thread; `s[(t * t) % n]` with `n`
    unbound stays T6's place per thread."""
    t = sympy.Symbol("t", integer=True, nonnegative=True)
    n = sympy.Symbol("n", integer=True, positive=True)
    dims = [Dim(t, sympy.Integer(1024), "lane")]
    machine = Machine(l2_bytes=64 * MIB, sms=4, threads_per_sm=1024, blocks_per_sm=1)
    one = sympy.Integer(1)
    bounded = Access("s", sympy.Mod(t * t, 16, evaluate=False), 4, 4, False, one, 1, False)
    out = launch_traffic([bounded], dims, {}, 1024, machine)
    assert out is not None and not out.arrays[0].exact
    assert out.arrays[0].load_footprint == 3 * 32
    free = Access("s", sympy.Mod(t * t, n, evaluate=False), 4, 4, False, one, 1, False)
    out = launch_traffic([free], dims, {}, 1024, machine)
    assert out is not None and out.arrays[0].load_footprint == 1024 * 4


@pytest.mark.rule("T14")
def test_a_row_lookup_by_remainder_reads_its_rows_once(tmp_path):
    """`len[((i - i % m) / m) % n]`: each of the 2^20 threads looks up one of n = 64 row
    lengths; the offset is not affine in the dims, but it takes at most 64 values, not one a
    thread (4 MiB). Interval arithmetic cannot see that `i - i % m` is not negative, so it
    allows C's negative remainders too: -63 .. 63, 127 ints, 17 sectors with alignment."""
    k = launch(
        tmp_path,
        """\
        __global__ void rowmask(const int* len, const float* in, float* out) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          int c = i % m;
          int r = ((i - c) / m) % n;
          out[i] = c < len[r] ? in[i] : 0.0f;
        }
        """,
        {"m": "1024", "n": "64"},
        (256, 1, 1),
        (4096, 1, 1),
    )["rowmask"]
    a = arrays(k)
    assert a["len"]["footprint_bytes"]["load"] == 17 * 32
    assert a["in"]["footprint_bytes"]["load"] == 4 * 256 * 4096
