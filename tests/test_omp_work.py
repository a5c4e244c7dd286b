"""OpenMP target regions without a work-shared loop: how many units of work they run.

Each region is written here; the expected work is read off its clauses by hand.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from roofcast.features.ompwork import clause_argument, region_shape
from roofcast.gpu_specs import load_gpu

from roofcast.evaluation.counts import launch_threads
from roofcast.pipeline import analyze_paths
from roofcast.predictors.base import LaunchContext
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult


def analyze(
    tmp_path: Path, source: str, block=None, grid=None, extra=None
) -> dict[str, KernelResult]:
    path = tmp_path / "region.cpp"
    path.write_text(textwrap.dedent(source))
    context = LaunchContext(block=block, grid=grid, extra=dict(extra or {}))
    report = analyze_paths([path], load_gpu("rtx3080"), {}, RooflinePredictor(), context)
    return {k.ir.name: k for k in report.kernels}


CUDA_STYLE = """
    void scale(int n, const float *x, float *y) {
      #pragma omp target teams num_teams(n / 128) thread_limit(128) map(to: x[0:n], y[0:n])
      {
        #pragma omp parallel
        {
          int i = omp_get_team_num() * 128 + omp_get_thread_num();
          y[i] = 3.0f * x[i];
        }
      }
    }
    void blocks(int n, float *y) {
      #pragma omp target teams num_teams(64) map(tofrom: y[0:n])
      {
        #pragma omp parallel num_threads(32)
        {
          y[omp_get_team_num() * 32 + omp_get_thread_num()] *= 2.0f;
        }
      }
    }
    void geometry(int n, float *y) {
      #pragma omp target teams map(tofrom: y[0:n])
      {
        #pragma omp parallel
        {
          y[omp_get_team_num() * omp_get_num_threads() + omp_get_thread_num()] += 1.0f;
        }
      }
    }
    void once(float *y) {
      #pragma omp target map(tofrom: y[0:1])
      {
        y[0] = y[0] * 0.5f;
      }
    }
    void per_team(int n, float *y) {
      #pragma omp target teams num_teams(n)
      {
        y[omp_get_team_num()] = 1.0f;
      }
    }
"""


def test_teams_with_inner_parallel_run_teams_times_threads(tmp_path):
    kernels = analyze(tmp_path, CUDA_STYLE)
    k = kernels["scale"]
    # per thread: one load and one store of a float, one SP multiply
    assert (k.features.load_bytes, k.features.store_bytes, k.features.flops_sp) == (4, 4, 1)
    work = k.features.work_items
    assert str(work) == "n"  # n / 128 teams x 128 threads
    assert any(
        "num_teams(n / 128) teams x thread_limit(128) threads" in n for n in k.features.notes
    )
    k = kernels["blocks"]
    assert k.features.work_items == 64 * 32  # num_threads of the inner parallel wins
    assert "num_threads(32)" in k.features.notes[0]


def test_missing_clauses_fall_back_to_the_launch_geometry(tmp_path):
    k = analyze(tmp_path, CUDA_STYLE, block=(96, 1, 1), grid=(50, 1, 1))["geometry"]
    assert k.resolved.threads == 96 * 50
    assert "gridDim teams x blockDim threads" in k.features.notes[0]
    unbound = analyze(tmp_path, CUDA_STYLE)["geometry"]
    assert {"gridDim_x", "blockDim_x"} <= set(unbound.resolved.defaults)


def test_serial_and_team_only_regions_say_what_they_counted(tmp_path):
    kernels = analyze(tmp_path, CUDA_STYLE)
    once = kernels["once"]
    assert once.features.work_items == 1
    assert once.features.notes == [
        "serial target region (no teams, parallel or work-shared loop): one unit of work [U3]"
    ]
    team = kernels["per_team"]
    assert str(team.features.work_items) == "n"
    assert "per team" in team.features.notes[0]
    assert kernels["scale"].to_json()["notes"] == kernels["scale"].features.notes


def test_workshared_regions_are_unchanged_and_carry_no_note(tmp_path):
    source = """
        void saxpy(int n, float a, const float *x, float *y) {
          #pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n])
          for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
        }
    """
    k = analyze(tmp_path, source)["saxpy"]
    assert str(k.features.work_items) == "n" and k.features.notes == []


def test_evaluation_uses_the_region_work_as_launch_threads(tmp_path):
    """launch totals of a CUDA-style region: per-thread counts x the row's launch."""
    from types import SimpleNamespace

    k = analyze(tmp_path, CUDA_STYLE, block=(96, 1, 1), grid=(50, 1, 1))["geometry"]
    row = SimpleNamespace(language="OMP", threads=1)
    assert launch_threads(SimpleNamespace(row=row, result=k)) == 96 * 50


@pytest.mark.parametrize(
    ("text", "clause", "expected"),
    [
        (
            "omp target teams num_teams((n + 255) / 256) thread_limit(256)",
            "num_teams",
            "(n + 255) / 256",
        ),
        ("omp target teams num_teams(1 : g) thread_limit(256)", "num_teams", "g"),
        ("omp target teams num_teams(n > 0 ? n : 1)", "num_teams", "n > 0 ? n : 1"),
        ("omp target teams thread_limit(B)", "num_teams", ""),
        ("omp target teams num_teams(unclosed", "num_teams", ""),
    ],
)
def test_clause_arguments(text, clause, expected):
    assert clause_argument(text, clause) == expected


def test_shape_reads_a_teams_construct_nested_in_a_plain_target():
    shape = region_shape(
        "#pragma omp target map(to: a[0:n])",
        ["#pragma omp teams num_teams(G) thread_limit(B)", "#pragma omp parallel"],
    )
    assert (shape.teams, shape.parallel, shape.num_teams, shape.threads) == (True, True, "G", "B")


@pytest.mark.rule("U4")
def test_the_openmp_runtime_adds_its_integer_work_per_launched_thread(tmp_path):
    source = """
        void saxpy(int n, float a, const float *x, float *y) {
          #pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n])
          for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
        }
    """
    bare = analyze(tmp_path, source, extra={"n": 1024})["saxpy"]
    launched = analyze(tmp_path, source, block=(128, 1, 1), grid=(80, 1, 1), extra={"n": 1024})[
        "saxpy"
    ]
    assert bare.resolved.notes == []  # no launch geometry: nothing is guessed
    units = launched.resolved.threads  # n = 1024 iterations, bound by the caller
    assert units == 1024
    added = launched.resolved.flops["int"] - bare.resolved.flops["int"]
    assert added == pytest.approx(40 * 128 * 80 / 1024)  # 40 per launched thread, per unit
    assert launched.to_json()["notes"][-1].startswith("[U4] OpenMP runtime: 40 int ops")
    assert launched.resolved.flops["sp"] == bare.resolved.flops["sp"]


@pytest.mark.rule("U5")
def test_an_unbound_iteration_count_is_solved_from_the_launch(tmp_path):
    """U5: `n` reaches the region from nowhere; the runtime launched 80 x 128 threads for it,
    so n is about 10,240, not the documented default 1024, and a note says so."""
    source = """
        void stencil(int n, const float *x, float *y) {
          #pragma omp target teams distribute parallel for collapse(2)
          for (int i = 1; i < n - 1; i++)
            for (int j = 0; j < 4; j++) y[4 * i + j] = x[4 * i + j - 4] + x[4 * i + j + 4];
        }
    """
    bare = analyze(tmp_path, source)["stencil"]
    launched = analyze(tmp_path, source, block=(128, 1, 1), grid=(80, 1, 1))["stencil"]
    assert bare.resolved.defaults == {"n": 1024}  # no launch: the documented default
    assert launched.resolved.defaults == {}
    assert launched.resolved.threads == 10240  # (n - 2) x 4 iterations, one per thread
    assert launched.resolved.bindings["n"] == 2562
    assert any(note.startswith("[U5] n = 2562") for note in launched.to_json()["notes"])
    given = analyze(tmp_path, source, block=(128, 1, 1), grid=(80, 1, 1), extra={"n": 100})
    assert given["stencil"].resolved.threads == 4 * 98  # a bound name is never overridden


def test_sizes_reach_a_region_through_driver_functions(tmp_path):
    """A size read from the command line in `main` reaches a region two calls down, and a
    driver's own loop counter is its first value: `conv<T>(n, 3)` from `run(n)` from main."""
    source = """
        #include <cstdlib>
        template <typename T>
        void conv(const T *in, T *out, int width, int mask) {
          #pragma omp target teams distribute parallel for
          for (int i = 0; i < width; i++) {
            T s = 0;
            for (int j = 0; j < mask; j++) s += in[i + j];
            out[i] = s;
          }
        }
        void run(const float *in, float *out, int width) {
          for (int mask = 3; mask < 9; mask += 2) conv<float>(in, out, width, mask);
        }
        int main(int argc, char **argv) {
          int width = atoi(argv[1]);
          float *in = 0, *out = 0;
          run(in, out, width * 2);
          return 0;
        }
    """
    path = tmp_path / "region.cpp"
    path.write_text(textwrap.dedent(source))
    context = LaunchContext(exe_args="5000")
    report = analyze_paths([path], load_gpu("rtx3080"), {}, RooflinePredictor(), context)
    (region,) = report.kernels
    assert region.resolved.defaults == {}
    assert region.resolved.bindings["width"] == 10000  # 2 x argv[1], through run()
    assert region.resolved.bindings["mask"] == 3
    assert region.resolved.threads == 10000
    assert region.resolved.flops["sp"] == 3


@pytest.mark.rule("U6")
def test_a_cuda_thread_guard_bounds_its_size_by_the_launch(tmp_path):
    """`if (i >= n) return;` on 40 x 256 threads: n is 10,240, and the inner loop to n (an
    n-body's) runs 10,240 times, not the default 1024; `i < m` inside a loop guards no thread."""
    source = """
        __global__ void energy(const float4 *p, float *e, int n, int m) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i >= n) return;
          float s = 0.0f;
          for (int j = 0; j < n; j++) {
            float dx = p[j].x - p[i].x;
            s += dx * dx;
            if (i < m) s += 1.0f;
          }
          for (int k = 0; k < m; k++) s *= 0.5f;
          e[i] = s;
        }
    """
    path = tmp_path / "nbody.cu"
    path.write_text(textwrap.dedent(source))

    def run(context: LaunchContext) -> KernelResult:
        report = analyze_paths([path], load_gpu("rtx3080"), {}, RooflinePredictor(), context)
        return report.kernels[0]

    bare = run(LaunchContext())
    launched = run(LaunchContext(block=(256, 1, 1), grid=(40, 1, 1)))
    assert bare.resolved.defaults == {"n": 1024, "m": 1024}
    assert launched.resolved.bindings["n"] == 10240
    assert launched.resolved.defaults == {"m": 1024}  # m guards no thread
    sp_per_j = (bare.resolved.flops["sp"] - 1024) / 1024  # the k loop: 1024 multiplies
    assert launched.resolved.flops["sp"] == 10240 * sp_per_j + 1024
    assert "[U6] n = 10240" in " ".join(launched.resolved.notes)
    shifted = textwrap.dedent(source).replace("if (i >= n) return;", "if (i >= n - 2) return;")
    path.write_text(shifted)
    assert run(LaunchContext(block=(256, 1, 1), grid=(40, 1, 1))).resolved.bindings["n"] == 10242


@pytest.mark.rule("U8")
def test_a_guarded_local_read_from_memory_is_sized_by_the_launch(tmp_path):
    """`int n = p->count; if (i >= n) return;` on 8 x 256 threads: the loop to n runs 2048
    times (U6 through U8), not the unknown loop's default; the same local unguarded stays an
    unknown trip count."""
    source = """
        struct Params { int count; };
        __global__ void guarded(const float *x, float *y, const Params *p) {
          int n = p->count;
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i >= n) return;
          float s = 0.0f;
          for (int j = 0; j < n; j++) s += x[j];
          y[i] = s;
        }
        __global__ void unguarded(const float *x, float *y, const Params *p) {
          int n = p->count;
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          float s = 0.0f;
          for (int j = 0; j < n; j++) s += x[j];
          y[i] = s;
        }
    """
    path = tmp_path / "pairs.cu"
    path.write_text(textwrap.dedent(source))
    launch = LaunchContext(block=(256, 1, 1), grid=(8, 1, 1))
    report = analyze_paths([path], load_gpu("rtx3080"), {}, RooflinePredictor(), launch)
    guarded, unguarded = sorted(report.kernels, key=lambda k: k.ir.name)
    assert guarded.resolved.bindings["n"] == 2048
    assert guarded.resolved.defaults == {}
    assert guarded.resolved.flops["sp"] == 2048
    assert "[U6] n = 2048" in " ".join(guarded.resolved.notes)
    assert set(unguarded.resolved.defaults) == {"trip_L15"}  # the loop's line
    assert unguarded.resolved.flops["sp"] == 4  # C4's documented default


@pytest.mark.rule("U3")
def test_a_cuda_style_region_has_a_thread_grid(tmp_path):
    """omp_get_thread_num() / omp_get_team_num() are the lanes and blocks of the traffic
    model, and omp_get_num_threads() x omp_get_num_teams() is the clauses' grid: a
    grid-stride loop over 2^20 floats on 64 x 128 threads runs 128 times, and each array's
    footprint is the whole 4 MiB once, not a guess per thread."""
    source = """
        void scale(const float *x, float *y) {
          #pragma omp target teams num_teams(64) thread_limit(128)
          {
            #pragma omp parallel
            {
              int t = omp_get_team_num() * omp_get_num_threads() + omp_get_thread_num();
              for (int i = t; i < 1048576; i += omp_get_num_threads() * omp_get_num_teams())
                y[i] = 3.0f * x[i];
            }
          }
        }
    """
    region = analyze(tmp_path, source)["scale"]
    assert region.resolved.defaults == {}
    assert region.resolved.threads == 64 * 128
    assert region.resolved.flops["sp"] == 128  # 2^20 / (64 x 128) iterations
    dram = {a.array: a for a in region.resolved.dram.arrays}
    assert dram["x"].exact and dram["x"].load_footprint == 4 * 1048576
    assert dram["y"].store_footprint == 4 * 1048576


@pytest.mark.rule("D8")
def test_host_values_follow_file_initialisers_and_conditionals(tmp_path):
    """`array_size = ARRAY_SIZE` (a file-level int) and `batch = (B > 4) ? 4 : B` with B
    from argv: 4 when the command line gives 7, and 2 when it gives 2."""
    source = """
        #include <cstdlib>
        int ARRAY_SIZE = 1 << 20;
        __global__ void scale(float *x, int n, int batch) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          for (int b = 0; b < batch; b++) x[b * n + i] *= 2.0f;
        }
        void run(float *x, int B) {
          const int array_size = ARRAY_SIZE;
          int batch = (B > 4) ? 4 : B;
          scale<<<array_size / 256, 256>>>(x, array_size, batch);
        }
        int main(int argc, char **argv) {
          float *x = 0;
          run(x, atoi(argv[1]));
        }
    """
    path = tmp_path / "host.cu"
    path.write_text(textwrap.dedent(source))

    def run(args: str) -> KernelResult:
        report = analyze_paths(
            [path], load_gpu("rtx3080"), {}, RooflinePredictor(), LaunchContext(exe_args=args)
        )
        return report.kernels[0]

    seven, two = run("7"), run("2")
    assert seven.resolved.defaults == {} and two.resolved.defaults == {}
    assert seven.resolved.bindings["n"] == 1 << 20
    assert seven.resolved.flops["sp"] == 4 and two.resolved.flops["sp"] == 2


@pytest.mark.rule("D8")
def test_a_size_set_only_when_an_argument_is_given_keeps_its_default_otherwise(tmp_path):
    """`int n = 4096; if (argc > 1) n = atoi(argv[1]);`: 4096 without arguments, 100 with."""
    source = """
        #include <cstdlib>
        __global__ void scale(float *x, int n) {
          for (int j = 0; j < n; j++) x[j] *= 2.0f;
        }
        int main(int argc, char **argv) {
          int n = 4096;
          if (argc > 1)
            n = atoi(argv[1]);
          float *x = 0;
          scale<<<1, 1>>>(x, n);
        }
    """
    path = tmp_path / "args.cu"
    path.write_text(textwrap.dedent(source))

    def sp(args: str) -> float:
        context = LaunchContext(exe_args=args)
        report = analyze_paths([path], load_gpu("rtx3080"), {}, RooflinePredictor(), context)
        assert report.kernels[0].resolved.defaults == {}
        return report.kernels[0].resolved.flops["sp"]

    assert sp("") == 4096 and sp("100") == 100
