// Driver for cuda/promotion.cu: float kernels whose double literals promote to double.
#include "driver_common.cuh"
#include "../cuda/promotion.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);
    const unsigned int block = 256, grid = blocks_for(n, block);
    float* x = device_floats(n, -3.0f, 3.0f);
    float* y = device_zeros<float>(n);
    RUN("scale_promoted", (scale_promoted<<<grid, block>>>(x, y, n)));
    RUN("gelu_promoted", (gelu_promoted<<<grid, block>>>(x, y, n)));
    return 0;
}
