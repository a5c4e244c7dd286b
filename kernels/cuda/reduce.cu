// Sum reductions: a shared-memory tree inside one block, and warp shuffles with one atomic
// per warp. Both leave a per-block (or global) partial sum.
#include <cuda_runtime.h>

#define BLOCK 256

__global__ void reduce_sum_shared(const float* __restrict__ in, float* __restrict__ block_sums, int n)
{
    __shared__ float sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK + tid;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        block_sums[blockIdx.x] = sdata[0];
    }
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void reduce_sum_warp(const float* __restrict__ in, float* __restrict__ total, int n)
{
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += in[i];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(total, v);
}
