// Irregular access: the address of one access comes from another load. CSR sparse
// matrix-vector product (one row per thread), an indexed gather, an indexed scatter, and a
// 256-bin histogram privatised in shared memory and merged with global atomics.
#include <cuda_runtime.h>

__global__ void tb_spmv_csr(int rows, const int* __restrict__ row_start,
                            const int* __restrict__ col, const float* __restrict__ val,
                            const float* __restrict__ x, float* __restrict__ y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float dot = 0.0f;
    int end = row_start[r + 1];
    for (int j = row_start[r]; j < end; ++j)
        dot += val[j] * x[col[j]];
    y[r] = dot;
}

__global__ void tb_gather(const float* __restrict__ table, const int* __restrict__ where,
                          float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = table[where[i]];
}

__global__ void tb_scatter(const float* __restrict__ in, const int* __restrict__ where,
                           float* __restrict__ table, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        table[where[i]] = in[i];
}

#define BINS 256

// Radix-sort digit count: how many 32-bit keys have each value of the top byte. Each thread
// walks a grid-stride slice of the keys, one shared-memory atomic per key.
__global__ void tb_histogram(const unsigned int* __restrict__ keys, int nkeys,
                             unsigned int* __restrict__ bins)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    int step = blockDim.x * gridDim.x;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < nkeys; k += step)
        atomicAdd(&local[keys[k] >> 24], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        atomicAdd(&bins[b], local[b]);
}
