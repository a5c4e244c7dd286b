// Sum of n floats. Both kernels first let every thread accumulate a strided slice of the
// input in a register (a grid-stride loop), then combine the block's partial sums: one through
// a shared-memory tree (one partial per block written out), one with warp shuffles and a
// single atomic per warp.
#include <cuda_runtime.h>

#define RBLOCK 256

// Launched with RBLOCK threads per block; partial[blockIdx.x] receives the block's sum.
__global__ void tb_reduce_tree(const float* __restrict__ in, float* __restrict__ partial, long n)
{
    __shared__ float buf[RBLOCK];
    float acc = 0.0f;
    long step = (long)blockDim.x * gridDim.x;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        acc += in[i];
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (int half = RBLOCK / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half)
            buf[threadIdx.x] += buf[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = buf[0];
}

__device__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// Any block size that is a multiple of 32; *total must be zeroed before the launch.
__global__ void tb_reduce_shuffle(const float* __restrict__ in, float* __restrict__ total, long n)
{
    float acc = 0.0f;
    long step = (long)blockDim.x * gridDim.x;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        acc += in[i];
    acc = warp_sum(acc);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(total, acc);
}
