// Driver for cuda/stencil1d.cu: 3-point and weighted 7-point 1D stencils.
#include "driver_common.cuh"
#include "../cuda/stencil1d.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);
    const unsigned int block = 256;
    float* in = device_floats(n);
    float* out = device_zeros<float>(n);
    float* w = device_floats(2 * RADIUS + 1, 0.0f, 0.3f);
    RUN("stencil1d_3pt", (stencil1d_3pt<<<blocks_for(n, block), block>>>(in, out, n)));
    RUN("stencil1d_weighted", (stencil1d_weighted<<<blocks_for(n - 2 * RADIUS, block), block>>>(in, w, out, n)));
    return 0;
}
