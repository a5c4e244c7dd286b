// European option pricing with the Black-Scholes closed form, one option per thread.
// The normal CDF is written with erfcf: N(x) = erfc(-x / sqrt(2)) / 2.
#include <cuda_runtime.h>

__device__ float norm_cdf(float x)
{
    return 0.5f * erfcf(-x * 0.70710678f);
}

__global__ void black_scholes(const float* __restrict__ spot, const float* __restrict__ strike,
                              const float* __restrict__ years, float* __restrict__ call,
                              float* __restrict__ put, float rate, float vol, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = spot[i];
    float x = strike[i];
    float t = years[i];
    float sqrt_t = sqrtf(t);
    float d1 = (logf(s / x) + (rate + 0.5f * vol * vol) * t) / (vol * sqrt_t);
    float d2 = d1 - vol * sqrt_t;
    float disc = x * expf(-rate * t);
    call[i] = s * norm_cdf(d1) - disc * norm_cdf(d2);
    put[i] = disc * norm_cdf(-d2) - s * norm_cdf(-d1);
}
