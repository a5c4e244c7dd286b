// Driver for cuda/gridstride.cu: grid-stride loops with a fixed grid of 1024 x 256 threads.
#include "driver_common.cuh"
#include "../cuda/gridstride.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);
    const unsigned int block = 256, grid = 1024;
    float* x = device_floats(n);
    float* y = device_floats(n);
    float* partial = device_zeros<float>((size_t)grid * block);
    RUN("saxpy_grid", (saxpy_grid<<<grid, block>>>(n, 2.0f, x, y)));
    RUN("sum_squares_grid", (sum_squares_grid<<<grid, block>>>(x, partial, n)));
    return 0;
}
