// Long dependent arithmetic chains: one load and one store per thread around thousands of
// operations, so the work per DRAM byte is in the hundreds or more.
#include <cuda_runtime.h>
#include <stdint.h>

#define SP_STEPS 4096
#define DP_STEPS 1024
#define HASH_ROUNDS 256

__global__ void tb_chain_fp32(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = in[i];
    for (int s = 0; s < SP_STEPS; ++s)
        v = fmaf(v, 0.999f, 0.001f);
    out[i] = v;
}

__global__ void tb_chain_fp64(const double* __restrict__ in, double* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double v = in[i];
    for (int s = 0; s < DP_STEPS; ++s)
        v = fma(v, 0.9999, 1.0e-4);
    out[i] = v;
}

// Rounds of xorshift32 followed by a linear congruential step: integer-only work.
__global__ void tb_hash_rounds(const uint32_t* __restrict__ keys, uint32_t* __restrict__ out,
                               int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t h = keys[i];
    for (int r = 0; r < HASH_ROUNDS; ++r) {
        h ^= h << 13;
        h ^= h >> 17;
        h ^= h << 5;
        h = h * 1664525u + 1013904223u;
    }
    out[i] = h;
}

// A damped oscillator sampled through sinf/expf: special functions in every step, plus
// three explicit FLOPs so the kernel stays compute-bound even if they were counted as none.
#define SF_STEPS 256

__global__ void tb_special_heavy(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = in[i];
    for (int s = 0; s < SF_STEPS; ++s)
        v = fmaf(sinf(v), 0.75f, expf(-0.5f * v));
    out[i] = v;
}
