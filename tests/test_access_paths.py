"""Access paths of docs/counting.md beyond the corpus kernels (kernels/cuda/access_paths.cu):
the cases where the rule must NOT count, and the primary-template typedef."""

from __future__ import annotations

import textwrap
from pathlib import Path

from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult


def analyze(
    tmp_path: Path, source: str, defines: dict[str, str] | None = None
) -> dict[str, KernelResult]:
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(source))
    report = analyze_paths([path], load_gpu("a100"), defines or {}, RooflinePredictor())
    return {k.ir.name: k for k in report.kernels}


def test_member_through_a_pointer_to_a_local_object_is_not_traffic(tmp_path):
    k = analyze(
        tmp_path,
        """
        struct P { float x; float y; };
        __global__ void local_ptr(float *out) {
          P local;
          P *q = &local;
          q->x = 1.0f;
          out[threadIdx.x] = q->x + q->y;
        }
    """,
    )["local_ptr"]
    assert (k.features.load_bytes, k.features.store_bytes) == (0, 4)


def test_primary_template_typedef_takes_the_arguments(tmp_path):
    source = """
        template <typename T> struct pair_of { typedef T value_type; };
        template <typename T>
        __global__ void halve(typename pair_of<T>::value_type *v) {
          int i = threadIdx.x;
          v[i] = v[i] * v[i];
        }
    """
    for bound, (size, field) in {"float": (4, "flops_sp"), "double": (8, "flops_dp")}.items():
        k = analyze(tmp_path, source, {"T": bound})["halve"]
        assert (k.features.load_bytes, k.features.store_bytes) == (size, size)
        assert getattr(k.features, field) == 1 and k.features.int_ops == 0


def test_method_of_a_by_value_object_reads_registers(tmp_path):
    k = analyze(
        tmp_path,
        """
        struct Affine {
          float a, b;
          __device__ float at(float x) const { return a * x + b; }
        };
        __global__ void apply(Affine f, const float *x, float *y) {
          int i = threadIdx.x;
          y[i] = f.at(x[i]);
        }
    """,
    )["apply"]
    assert (k.features.load_bytes, k.features.store_bytes, k.features.flops_sp) == (4, 4, 2)


def test_helper_without_shared_storage_still_returns_global(tmp_path):
    k = analyze(
        tmp_path,
        """
        __device__ float *offset(float *p, int k) { return p + k; }
        __global__ void shifted(float *data) {
          float *q = offset(data, 4);
          q[threadIdx.x] = 0.0f;
        }
    """,
    )["shifted"]
    assert k.features.store_bytes == 4 and k.features.shared_store_bytes == 0


def test_tensor_flops_are_their_own_field_in_the_json(tmp_path):
    k = analyze(
        tmp_path,
        """
        #include <mma.h>
        using namespace nvcuda;
        __global__ void one_mma(const half *a, const half *b, float *c) {
          wmma::fragment<wmma::matrix_a, 32, 8, 16, half, wmma::row_major> fa;
          wmma::fragment<wmma::matrix_b, 32, 8, 16, half, wmma::col_major> fb;
          wmma::fragment<wmma::accumulator, 32, 8, 16, float> fc;
          wmma::load_matrix_sync(fa, a, 16);
          wmma::load_matrix_sync(fb, b, 16);
          wmma::mma_sync(fc, fa, fb, fc);
          wmma::store_matrix_sync(c, fc, 8, wmma::mem_row_major);
        }
    """,
    )["one_mma"]
    data = k.to_json()
    assert data["features"]["flops_tensor"] == 2 * 32 * 8 * 16 / 32
    assert data["flops_per_thread"] == {"sp": 0, "dp": 0, "hp": 0, "int": 0}
    # A 32x16 half tile, B 16x8 half, C 32x8 float: per thread of the warp
    assert data["bytes_per_thread"] == {"load": (32 * 16 + 16 * 8) * 2 / 32, "store": 32}


def test_async_copy_of_unknown_size_counts_one_element_and_says_so(tmp_path):
    k = analyze(
        tmp_path,
        """
        __global__ void stage(const float *g, float *out, const int *sizes) {
          __shared__ float tile[64];
          __pipeline_memcpy_async(&tile[threadIdx.x], &g[threadIdx.x], sizes[0]);
          out[threadIdx.x] = tile[threadIdx.x];
        }
    """,
    )["stage"]
    assert k.features.shared_store_bytes == 4
    assert k.features.load_bytes == 4 + 4  # sizes[0] and the copy's one element
    assert any("size not known" in n for n in k.features.notes)


def test_integer_member_of_a_by_value_object_is_a_symbol_like_a_parameter(tmp_path):
    k = analyze(
        tmp_path,
        """
        struct Range {
          int count;
          __device__ float sum(const float *x) const {
            float s = 0.0f;
            for (int k = 0; k < count; k++) s += x[k];
            return s;
          }
        };
        __global__ void sums(Range r, const float *x, float *y) { y[threadIdx.x] = r.sum(x); }
    """,
    )["sums"]
    assert str(k.features.flops_sp) == "count"
    assert str(k.features.load_bytes) == "4*count"
