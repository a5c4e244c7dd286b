// Kernels whose work sits in __device__ helpers: a scalar helper, a helper that walks a
// global array through a pointer argument, and helpers calling helpers.
#include <cuda_runtime.h>

#define WINDOW 8

__device__ float lerp1(float a, float b, float t)
{
    return a + t * (b - a);
}

__device__ float sum_window(const float* __restrict__ p, int start, int len)
{
    float s = 0.0f;
    for (int k = 0; k < len; ++k)
        s += p[start + k];
    return s;
}

__device__ __forceinline__ float sq(float v)
{
    return v * v;
}

__device__ float length3(const float* __restrict__ p, int base)
{
    return sqrtf(sq(p[base]) + sq(p[base + 1]) + sq(p[base + 2]));
}

__global__ void blend_arrays(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ out, float t, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = lerp1(a[i], b[i], t);
    }
}

__global__ void moving_average(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - WINDOW) {
        out[i] = sum_window(in, i, WINDOW) / WINDOW;
    }
}

// xyz triples packed in v; one length per thread.
__global__ void vec3_length(const float* __restrict__ v, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = length3(v, 3 * i);
    }
}
