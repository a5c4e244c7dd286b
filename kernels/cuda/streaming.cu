// Streaming kernels (STREAM-style): one element per thread, no reuse at all.
// They move bytes and do almost no arithmetic, so every GPU sees them bandwidth-bound.
#include <cuda_runtime.h>

__global__ void copy_f32(const float* __restrict__ src, float* __restrict__ dst, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = src[i];
    }
}

__global__ void scale_f32(const float* __restrict__ src, float* __restrict__ dst, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = alpha * src[i];
    }
}

__global__ void add_f32(const float* __restrict__ a, const float* __restrict__ b,
                        float* __restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

__global__ void triad_f32(float* __restrict__ a, const float* __restrict__ b,
                          const float* __restrict__ c, float scalar, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = b[i] + scalar * c[i];
    }
}
