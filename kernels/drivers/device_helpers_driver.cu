// Driver for cuda/device_helpers.cu: kernels that call __device__ helpers.
#include "driver_common.cuh"
#include "../cuda/device_helpers.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);
    const unsigned int block = 256, grid = blocks_for(n, block);
    float* a = device_floats(n);
    float* b = device_floats(n);
    float* out = device_zeros<float>(n);
    float* v = device_floats(3 * (size_t)n, -1.0f, 1.0f);
    RUN("blend_arrays", (blend_arrays<<<grid, block>>>(a, b, out, 0.25f, n)));
    RUN("moving_average", (moving_average<<<grid, block>>>(a, out, n)));
    RUN("vec3_length", (vec3_length<<<grid, block>>>(v, out, n)));
    return 0;
}
