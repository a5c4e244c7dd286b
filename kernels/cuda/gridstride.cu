// Grid-stride loops: a fixed-size grid walks an array of any length.
// Per thread the loop runs ceil(n / (blockDim.x * gridDim.x)) times on average.
#include <cuda_runtime.h>

__global__ void saxpy_grid(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}

// Partial sums of squares; the stride is written inline in the increment.
__global__ void sum_squares_grid(const float* __restrict__ x, float* __restrict__ partial, int n)
{
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        acc += x[i] * x[i];
    partial[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
