// Byte histograms: every thread bumps a global counter with an atomic, or blocks keep a
// private copy in shared memory and merge it at the end.
#include <cuda_runtime.h>

#define NBINS 256

__global__ void histogram_global(const unsigned char* __restrict__ data,
                                 unsigned int* __restrict__ bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[data[i]], 1u);
    }
}

__global__ void histogram_shared(const unsigned char* __restrict__ data,
                                 unsigned int* __restrict__ bins, int n)
{
    __shared__ unsigned int local[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int k = threadIdx.x; k < NBINS; k += blockDim.x)
        atomicAdd(&bins[k], local[k]);
}
