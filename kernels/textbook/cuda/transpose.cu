// Matrix transpose out = in^T for a rows x cols row-major float matrix. The naive kernel
// reads rows and writes columns; the tiled one stages a 32 x 32 tile in shared memory (one
// column of padding against bank conflicts) so both global accesses run along rows.
#include <cuda_runtime.h>

#define TT 32
#define ROWS_PER_PASS 8

// Launched with 32 x 8 blocks, one element per thread.
__global__ void tb_transpose_naive(const float* __restrict__ in, float* __restrict__ out,
                                   int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols)
        out[c * rows + r] = in[r * cols + c];
}

// Launched with TT x ROWS_PER_PASS blocks; each thread moves TT / ROWS_PER_PASS elements.
__global__ void tb_transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                   int rows, int cols)
{
    __shared__ float tile[TT][TT + 1];
    int c = blockIdx.x * TT + threadIdx.x;
    int r0 = blockIdx.y * TT + threadIdx.y;
    for (int k = 0; k < TT; k += ROWS_PER_PASS)
        tile[threadIdx.y + k][threadIdx.x] = in[(r0 + k) * cols + c];
    __syncthreads();
    int oc = blockIdx.y * TT + threadIdx.x;
    int or0 = blockIdx.x * TT + threadIdx.y;
    for (int k = 0; k < TT; k += ROWS_PER_PASS)
        out[(or0 + k) * rows + oc] = tile[threadIdx.x][threadIdx.y + k];
}
