// One-dimensional stencils: a fixed 3-point smoother and a weighted window of radius RADIUS.
#include <cuda_runtime.h>

#define RADIUS 3

__global__ void stencil1d_3pt(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
    }
}

__global__ void stencil1d_weighted(const float* __restrict__ in, const float* __restrict__ w,
                                   float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + RADIUS;
    if (i < n - RADIUS) {
        float acc = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; ++k) {
            acc += w[k + RADIUS] * in[i + k];
        }
        out[i] = acc;
    }
}
