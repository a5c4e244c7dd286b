// Driver for cuda/stencil3d.cu: 7-point heat equation step on an n^3 grid.
#include "driver_common.cuh"
#include "../cuda/stencil3d.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(64, 512);  // 1 MB or 512 MB per grid
    const size_t cells = (size_t)n * n * n;
    float* t = device_floats(cells);
    float* tn = device_zeros<float>(cells);
    dim3 block(32, 4, 2), grid(blocks_for(n, 32), blocks_for(n, 4), blocks_for(n, 2));
    RUN("heat3d_7pt", (heat3d_7pt<<<grid, block>>>(t, tn, n, n, n, 0.1f)));
    return 0;
}
