// The flip set: a fixed number of dependent FMAs between one load and one store, chosen so
// that the FLOPs per DRAM byte lie between the A100's and the H100's balance points: the
// same kernel is compute-bound on the A100 and bandwidth-bound on the H100. The chain is
// written eight FMAs per loop trip so that loop bookkeeping stays a small part of the work.
#include <cuda_runtime.h>

#define FLIP_TRIPS 7

// 56 FMAs (112 FLOPs) per 8 bytes: 14 FLOP/B.
__global__ void tb_flip_sp(const float* __restrict__ in, float* __restrict__ out, float a,
                           float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = in[i];
    for (int t = 0; t < FLIP_TRIPS; ++t) {
        v = fmaf(v, a, b);
        v = fmaf(v, a, b);
        v = fmaf(v, a, b);
        v = fmaf(v, a, b);
        v = fmaf(v, a, b);
        v = fmaf(v, a, b);
        v = fmaf(v, a, b);
        v = fmaf(v, a, b);
    }
    out[i] = v;
}

// 56 double FMAs (112 FLOPs) per 16 bytes: 7 FLOP/B.
__global__ void tb_flip_dp(const double* __restrict__ in, double* __restrict__ out, double a,
                           double b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double v = in[i];
    for (int t = 0; t < FLIP_TRIPS; ++t) {
        v = fma(v, a, b);
        v = fma(v, a, b);
        v = fma(v, a, b);
        v = fma(v, a, b);
        v = fma(v, a, b);
        v = fma(v, a, b);
        v = fma(v, a, b);
        v = fma(v, a, b);
    }
    out[i] = v;
}
