// Double-precision kernels: a streaming daxpy, Horner evaluation of a degree-DEG polynomial
// with coefficients in global memory, and an iterated logistic map (arithmetic only).
#include <cuda_runtime.h>

#define DEG 16

__global__ void daxpy(int n, double a, const double* __restrict__ x, double* __restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] += a * x[i];
    }
}

__global__ void poly_eval_dp(const double* __restrict__ x, const double* __restrict__ coef,
                             double* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double xi = x[i];
        double acc = coef[DEG];
        for (int k = DEG - 1; k >= 0; --k)
            acc = acc * xi + coef[k];
        y[i] = acc;
    }
}

__global__ void logistic_map_dp(double* __restrict__ state, double r, int steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double v = state[i];
        for (int s = 0; s < steps; ++s)
            v = r * v * (1.0 - v);
        state[i] = v;
    }
}
