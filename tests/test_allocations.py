"""Allocations from host code (docs/counting.md D28) and the footprint cap they give the
launch traffic model (T15), on kernels and host code written here."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import sympy
from roofcast.features.traffic import Access, Dim, Machine, launch_traffic
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult, LaunchContext

BIG = Machine(l2_bytes=64 * 2**20, sms=100, threads_per_sm=2048, blocks_per_sm=32)


def analyze(tmp_path: Path, files: dict[str, str], exe_args: str = "") -> list[KernelResult]:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    report = analyze_paths(
        [tmp_path], load_gpu("a100"), {}, RooflinePredictor(), LaunchContext(exe_args=exe_args)
    )
    assert not [p for p in report.problems if p.fatal], report.problems
    return report.kernels


def sizes(kernel: KernelResult) -> dict[str, tuple[str, bool]]:
    """Each array's allocation as text, and whether it counts elements."""
    return {k: (str(a.size), a.elements) for k, a in kernel.ir.allocations.items()}


def footprints(kernel: KernelResult) -> dict[str, dict]:
    return {a["array"]: a["footprint_bytes"] for a in kernel.to_json()["dram_bytes"]["arrays"]}


COPY_KERNEL = """\
__global__ void copy(const float* a, float* b, const int* c, long long int* d,
                     float** rows, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] + c[i] + d[i] + rows[0][i];
}
"""


@pytest.mark.rule("D28")
def test_each_launched_pointer_is_sized_by_the_one_allocation_that_reaches_it(tmp_path):
    """cudaMalloc through a cast and an `&`, malloc through a cast (`sizeof(long long int)`
    is 8), `new T[n]` in elements,
    a NULL initialiser that is no definition; a pointer allocated twice, and a pointer to
    pointers, stay unknown."""
    k = analyze(
        tmp_path,
        {
            "k.cu": COPY_KERNEL
            + """\
            int main(int argc, char** argv) {
              int n = atoi(argv[1]);
              size_t bytes = n * sizeof(float);
              float *d_a = NULL, *d_b;
              cudaMalloc((void**)&d_a, bytes);
              cudaMalloc(&d_b, 2 * bytes);
              cudaMalloc(&d_b, bytes);
              int* d_c = new int[n + 1];
              long long int* d_d = (long long int*)malloc(n * sizeof(long long int));
              float** d_rows;
              cudaMalloc(&d_rows, 8 * sizeof(float*));
              copy<<<(n + 255) / 256, 256>>>(d_a, d_b, d_c, d_d + 1, d_rows, n);
            }
            """
        },
    )[0]
    assert sizes(k) == {
        "a": ("4*argv_1", False),
        "c": ("argv_1 + 1", True),
        "d": ("8*argv_1", False),
    }


@pytest.mark.rule("D28")
def test_a_launching_functions_pointer_parameter_is_sized_in_its_caller(tmp_path):
    k = analyze(
        tmp_path,
        {
            "k.cu": COPY_KERNEL
            + """\
            void run(float* a, float* b, int n) {
              copy<<<n / 256, 256>>>(a, b, 0, 0, 0, n);
            }
            int main() {
              int n = 4096;
              float *x, *y;
              cudaMallocManaged(&x, n * sizeof(float));
              y = x;
              run(x, y, n);
            }
            """
        },
    )[0]
    assert sizes(k) == {"a": ("16384", False)}  # y is x under another name: not followed


@pytest.mark.rule("D28")
def test_an_openmp_regions_arrays_are_sized_by_map_sections_or_allocations(tmp_path):
    """The region's own section wins over an enclosing data region's; a section of two
    dimensions is not followed; an unmapped array takes its allocation."""
    k = analyze(
        tmp_path,
        {
            "r.cpp": """\
            #include <cstdlib>
            void run(int n) {
              float* a = (float*)malloc(n * sizeof(float));
              float* b = new float[2 * n];
              float g[64][32];
              float* h = (float*)calloc(n, 8);
              #pragma omp target data map(to: a[0:n], b[0:n])
              {
                #pragma omp target teams distribute parallel for map(to: b[0:n / 2], g[0:64][0:32])
                for (int i = 0; i < n / 2; i++) b[i] = a[i] + g[i % 64][i % 32] + h[i];
              }
            }
            int main() { run(1024); }
            """
        },
    )[0]
    assert sizes(k) == {"a": ("1024", True), "b": ("512", True), "h": ("8192", False)}


SPMV = """\
__global__ void spmv(const int* ptr, const int* col, const float* val, const float* x,
                     float* y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.0f;
  for (int j = ptr[r]; j < ptr[r + 1]; ++j) s += val[j] * x[col[j]];
  y[r] = s;
}
int main(int argc, char** argv) {
  int rows = atoi(argv[1]);
  int nnz = 2 * rows;
  int *d_ptr, *d_col;
  float *d_val, *d_x, *d_y;
  cudaMalloc(&d_ptr, (rows + 1) * sizeof(int));
  cudaMalloc(&d_col, nnz * sizeof(int));
  cudaMalloc(&d_val, nnz * sizeof(float));
  cudaMalloc(&d_x, rows * sizeof(float));
  cudaMalloc(&d_y, rows * sizeof(float));
  spmv<<<(rows + 255) / 256, 256>>>(d_ptr, d_col, d_val, d_x, d_y, rows);
}
"""


@pytest.mark.rule("T15")
def test_an_unplaced_arrays_footprint_is_at_most_its_allocation(tmp_path):
    """The nonzeros' loop has a guessed trip: without the allocation every row would read
    DRAM for each guessed trip; with it, `val` and `col` read at most their nnz elements."""
    rows = 1 << 16
    capped = analyze(tmp_path, {"k.cu": SPMV}, exe_args=str(rows))[0]
    assert footprints(capped)["val"]["load"] == 4 * 2 * rows
    assert footprints(capped)["col"]["load"] == 4 * 2 * rows
    assert footprints(capped)["y"]["store"] == 4 * rows
    (tmp_path / "k.cu").write_text(
        SPMV.replace("cudaMalloc(&d_val", "d_val = d_x;\n  cudaMalloc(&d_val")
    )
    uncapped = analyze(tmp_path, {}, exe_args=str(rows))[0]
    assert "val" not in uncapped.ir.allocations
    assert footprints(uncapped)["val"]["load"] > 4 * 2 * rows


@pytest.mark.rule("T15")
def test_a_cap_in_elements_counts_the_widest_element_and_rounds_to_sectors():
    i = sympy.Symbol("i")
    dims = [Dim(i, sympy.Integer(1000), "lane")]
    moved = Access("a", None, 16, 16, False, sympy.Integer(64), 1, indirect=False)
    narrow = Access("a", i, 4, 4, False, sympy.Integer(1), 2)
    free = launch_traffic([moved, narrow], dims, {}, 1000, BIG)
    cap = launch_traffic([moved, narrow], dims, {}, 1000, BIG, allocations={"a": (1001, True)})
    assert free is not None and cap is not None
    assert free.arrays[0].load_footprint > 16 * 1001
    assert cap.arrays[0].load_footprint == 32 * 501  # 16016 bytes: 500.5 sectors
    in_bytes = launch_traffic([moved], dims, {}, 1000, BIG, allocations={"a": (4000, False)})
    assert in_bytes is not None and in_bytes.arrays[0].load_footprint == 4000


@pytest.mark.rule("T15")
def test_an_allocation_the_launch_contradicts_caps_nothing():
    """`b[i]` placed over the launch spans 4 MB: host code that allocated a tenth of that
    sized another problem (a header's macro read in the wrong arm), so no cap is trusted."""
    i = sympy.Symbol("i")
    dims = [Dim(i, sympy.Integer(1 << 20), "lane")]
    moved = Access("a", None, 4, 4, False, sympy.Integer(8), 1, indirect=False)
    placed = Access("b", i, 4, 4, False, sympy.Integer(1), 2)
    sizes = {"a": (4096.0, False), "b": (419430.0, False)}
    out = launch_traffic([moved, placed], dims, {}, 1 << 20, BIG, allocations=sizes)
    assert out is not None
    by_array = {a.array: a.load_footprint for a in out.arrays}
    assert by_array == {"a": 4 * 8 * (1 << 20), "b": 4 * (1 << 20)}
    sizes["b"] = (4.0 * (1 << 20), False)  # the launch's own size: both caps hold
    out = launch_traffic([moved, placed], dims, {}, 1 << 20, BIG, allocations=sizes)
    assert out is not None and {a.array: a.load_footprint for a in out.arrays}["a"] == 4096


CSR_LOCALS = """\
__global__ void rowsum(const int* ptr, const double* val, double* out, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  int start = ptr[r], end;
  end = ptr[r + 1];
  double s = 0.0;
  for (int j = start; j < end; ++j) s += val[j];
  out[r] = s;
}
int main(int argc, char** argv) {
  int rows = atoi(argv[1]);
  int nnz = atoi(argv[2]);
  int* d_ptr;
  double *d_val, *d_out;
  cudaMalloc(&d_ptr, (rows + 1) * sizeof(int));
  cudaMalloc(&d_val, nnz * sizeof(double));
  cudaMalloc(&d_out, rows * sizeof(double));
  rowsum<<<(rows + 255) / 256, 256>>>(d_ptr, d_val, d_out, rows);
}
"""


@pytest.mark.rule("C11")
def test_a_compressed_row_loop_runs_the_mean_row_length(tmp_path):
    """nnz / rows trips per row, through the locals `start` and `end`: one FP64 add each."""
    k = analyze(tmp_path, {"k.cu": SPMV}, exe_args="1000")[0]
    assert "[C11] trip_L6 = 2: 2000 elements over 1000 rows of ptr" in k.resolved.notes
    assert "trip_L6" not in k.resolved.defaults
    (tmp_path / "k.cu").unlink()
    k = analyze(tmp_path, {"r.cu": CSR_LOCALS}, exe_args="4096 28672")[0]
    assert k.resolved.bindings["trip_L7"] == 7
    assert k.resolved.flops["dp"] == 7
    (tmp_path / "r.cu").write_text(CSR_LOCALS.replace("j < end", "j < end + 1"))
    k = analyze(tmp_path, {}, exe_args="4096 28672")[0]
    assert k.resolved.defaults.get("trip_L7") == 4  # not a row's range: a guess


@pytest.mark.rule("D28")
def test_deeply_nested_host_code_leaves_an_allocation_unknown_without_failing(tmp_path):
    deep = "(" * 3000 + "d_a" + ")" * 3000
    k = analyze(
        tmp_path,
        {
            "k.cu": COPY_KERNEL
            + f"""\
            int main() {{
              float* d_a;
              cudaMalloc(&d_a, {"(" * 3000}64{")" * 3000});
              copy<<<1, 64>>>({deep}, 0, 0, 0, 0, 64);
            }}
            """
        },
    )[0]
    assert "a" not in k.ir.allocations
