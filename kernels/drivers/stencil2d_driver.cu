// Driver for cuda/stencil2d.cu: Jacobi 5-point and 3x3 box blur on an nx x ny grid.
#include "driver_common.cuh"
#include "../cuda/stencil2d.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int nx = pick(512, 8192), ny = nx;  // 1 MB or 256 MB per grid
    float* u = device_floats((size_t)nx * ny);
    float* unew = device_zeros<float>((size_t)nx * ny);
    dim3 block(32, 8), grid(blocks_for(nx, 32), blocks_for(ny, 8));
    RUN("jacobi2d_5pt", (jacobi2d_5pt<<<grid, block>>>(u, unew, nx, ny)));
    RUN("box_blur2d", (box_blur2d<<<grid, block>>>(u, unew, nx, ny)));
    return 0;
}
