// Two-dimensional stencils on a row-major nx-by-ny (or w-by-h) grid, one point per thread.
#include <cuda_runtime.h>

#define R2 1

__global__ void jacobi2d_5pt(const float* __restrict__ u, float* __restrict__ unew, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1) {
        int c = y * nx + x;
        unew[c] = 0.25f * (u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx]);
    }
}

// Box blur over a (2*R2+1)^2 window, written as two nested loops.
__global__ void box_blur2d(const float* __restrict__ img, float* __restrict__ out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < R2 || y < R2 || x >= w - R2 || y >= h - R2) return;
    float sum = 0.0f;
    for (int dy = -R2; dy <= R2; ++dy)
        for (int dx = -R2; dx <= R2; ++dx)
            sum += img[(y + dy) * w + (x + dx)];
    out[y * w + x] = sum / 9.0f;
}
