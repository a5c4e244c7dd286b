// Structured-grid stencils, one output point per thread, boundary points left alone.
// Neighbouring threads share their neighbours, so through L1/L2 each input element comes from
// DRAM about once: the traffic is one read of the input grid and one write of the output.
#include <cuda_runtime.h>

__global__ void tb_stencil1d(const float* __restrict__ u, float* __restrict__ v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1)
        v[i] = 0.25f * u[i - 1] + 0.5f * u[i] + 0.25f * u[i + 1];
}

// Jacobi sweep for the 2D Laplace equation on an nx x ny grid (x fastest), 2D launch.
__global__ void tb_jacobi2d(const float* __restrict__ u, float* __restrict__ v, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
        int p = y * nx + x;
        v[p] = 0.25f * (u[p - 1] + u[p + 1] + u[p - nx] + u[p + nx]);
    }
}

// One explicit step of the 3D heat equation (7-point Laplacian) in double precision, 3D launch.
__global__ void tb_heat3d(const double* __restrict__ t, double* __restrict__ tn, double alpha,
                          int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || x >= nx - 1 || y < 1 || y >= ny - 1 || z < 1 || z >= nz - 1)
        return;
    long plane = (long)nx * ny;
    long p = z * plane + (long)y * nx + x;
    double lap = t[p - 1] + t[p + 1] + t[p - nx] + t[p + nx] + t[p - plane] + t[p + plane]
                 - 6.0 * t[p];
    tn[p] = t[p] + alpha * lap;
}
