// STREAM-style kernels, one element per thread: every byte is touched once, so the DRAM
// traffic is the arrays' sizes and the work per byte is a fraction of one operation.
#include <cuda_runtime.h>

__global__ void tb_copy(const float* __restrict__ src, float* __restrict__ dst, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[i];
}

__global__ void tb_scale(const float* __restrict__ src, float* __restrict__ dst, float q, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = q * src[i];
}

__global__ void tb_triad(float* __restrict__ a, const float* __restrict__ b,
                         const float* __restrict__ c, float q, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = b[i] + q * c[i];
}
