// Explicit heat-equation step: 7-point Laplacian on an nx*ny*nz grid, one cell per thread.
#include <cuda_runtime.h>

__global__ void heat3d_7pt(const float* __restrict__ t, float* __restrict__ tn,
                           int nx, int ny, int nz, float alpha)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z * blockDim.z + threadIdx.z;
    if (i < 1 || j < 1 || k < 1 || i >= nx - 1 || j >= ny - 1 || k >= nz - 1) return;
    int sx = 1, sy = nx, sz = nx * ny;
    int c = k * sz + j * sy + i;
    float lap = t[c - sx] + t[c + sx] + t[c - sy] + t[c + sy] + t[c - sz] + t[c + sz] - 6.0f * t[c];
    tn[c] = t[c] + alpha * lap;
}
