// Matrix transpose: naive (one of the two accesses is strided) and through a padded
// shared-memory tile so that both global accesses are coalesced. The tiled version uses
// TDIM x ROWS blocks, each thread moving TDIM / ROWS elements.
#include <cuda_runtime.h>

#define TDIM 32
#define ROWS 8

__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out,
                                int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];
    }
}

__global__ void transpose_shared(const float* __restrict__ in, float* __restrict__ out,
                                 int width, int height)
{
    __shared__ float tile[TDIM][TDIM + 1];
    int x = blockIdx.x * TDIM + threadIdx.x;
    int y = blockIdx.y * TDIM + threadIdx.y;
    for (int j = 0; j < TDIM; j += ROWS) {
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }
    __syncthreads();
    x = blockIdx.y * TDIM + threadIdx.x;
    y = blockIdx.x * TDIM + threadIdx.y;
    for (int j = 0; j < TDIM; j += ROWS) {
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
