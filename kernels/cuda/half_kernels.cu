// Half-precision kernels with the cuda_fp16.h intrinsics: an axpy and chunked dot products
// accumulated in fp16 with fused multiply-adds.
#include <cuda_fp16.h>

#define CHUNK 8

__global__ void haxpy(int n, __half a, const __half* __restrict__ x, __half* __restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __hadd(__hmul(a, x[i]), y[i]);
    }
}

__global__ void half_dot_chunks(const __half* __restrict__ a, const __half* __restrict__ b,
                                float* __restrict__ partial, int nchunks)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < nchunks) {
        int base = c * CHUNK;
        __half acc = __float2half(0.0f);
        for (int k = 0; k < CHUNK; ++k)
            acc = __hfma(a[base + k], b[base + k], acc);
        partial[c] = __half2float(acc);
    }
}
