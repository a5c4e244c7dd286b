// Ampere data paths: asynchronous global->shared copies and warp matrix (tensor core) math.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/pipeline>
#include <mma.h>

namespace cg = cooperative_groups;
using namespace nvcuda;

#define TILE 256

__global__ void stage_block(const float *g, float *out) {
  __shared__ float tile[TILE];
  cg::thread_block block = cg::this_thread_block();
  cg::memcpy_async(block, tile, g + blockIdx.x * TILE, sizeof(float) * TILE);
  cg::wait(block);
  out[blockIdx.x * TILE + threadIdx.x] = 2.0f * tile[threadIdx.x];
}

__global__ void stage_thread(const float4 *g, float4 *out) {
  __shared__ float4 tile[128];
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  pipe.producer_acquire();
  cuda::memcpy_async(&tile[threadIdx.x], &g[blockIdx.x * 128 + threadIdx.x], sizeof(float4),
                     pipe);
  pipe.producer_commit();
  pipe.consumer_wait();
  out[blockIdx.x * 128 + threadIdx.x] = tile[threadIdx.x];
}

__global__ void stage_ptx(const float *g, float *out) {
  __shared__ float tile[512];
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&tile[threadIdx.x * 4]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], %2;\n" ::"r"(dst),
               "l"(g + blockIdx.x * 512 + threadIdx.x * 4), "n"(16));
  asm volatile("cp.async.wait_all;\n" ::);
  out[blockIdx.x * 128 + threadIdx.x] = tile[threadIdx.x];
}

__global__ void wmma_tile(const half *a, const half *b, float *c, int tiles) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  for (int t = 0; t < tiles; t++) {
    wmma::load_matrix_sync(fa, a + t * 16, 16 * tiles);
    wmma::load_matrix_sync(fb, b + t * 16, 16 * tiles);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
