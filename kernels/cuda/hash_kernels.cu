// Integer-only kernels: repeated 32-bit avalanche mixing (hashing) and Hamming distances
// with a branch-free popcount. No floating point at all.
#include <cuda_runtime.h>

#define ROUNDS 32

// xorshift-multiply finaliser: every input bit affects every output bit.
__device__ __forceinline__ unsigned int mix32(unsigned int h)
{
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

// SWAR population count of a 32-bit word.
__device__ __forceinline__ unsigned int popcount_swar(unsigned int v)
{
    v = v - ((v >> 1) & 0x55555555u);
    v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
    v = (v + (v >> 4)) & 0x0f0f0f0fu;
    return (v * 0x01010101u) >> 24;
}

__global__ void hash_keys(const unsigned int* __restrict__ keys, unsigned int* __restrict__ out,
                          unsigned int seed, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int h = keys[i] ^ seed;
        for (int r = 0; r < ROUNDS; ++r)
            h = mix32(h + r);
        out[i] = h;
    }
}

// Row r of a and of b are bitsets of words_per_row words; dist[r] = popcount(a_r XOR b_r).
__global__ void hamming_distance(const unsigned int* __restrict__ a, const unsigned int* __restrict__ b,
                                 unsigned int* __restrict__ dist, int words_per_row, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const unsigned int* pa = a + r * words_per_row;
        const unsigned int* pb = b + r * words_per_row;
        unsigned int total = 0;
        for (int w = 0; w < words_per_row; ++w)
            total += popcount_swar(pa[w] ^ pb[w]);
        dist[r] = total;
    }
}

// Steps for each start value to reach 1 under the Collatz map: a data-dependent while loop.
__global__ void collatz_steps(const unsigned int* __restrict__ start, int* __restrict__ steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = start[i];
        int count = 0;
        while (v != 1u) {
            v = (v & 1u) ? 3u * v + 1u : v >> 1;
            ++count;
        }
        steps[i] = count;
    }
}
