// Driver for cuda/streaming.cu: copy, scale, add, triad over n floats.
#include "driver_common.cuh"
#include "../cuda/streaming.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);  // 1 MB or 256 MB per array
    const unsigned int block = 256, grid = blocks_for(n, block);
    float* a = device_floats(n);
    float* b = device_floats(n);
    float* c = device_zeros<float>(n);
    RUN("copy_f32", (copy_f32<<<grid, block>>>(a, c, n)));
    RUN("scale_f32", (scale_f32<<<grid, block>>>(a, c, 3.0f, n)));
    RUN("add_f32", (add_f32<<<grid, block>>>(a, b, c, n)));
    RUN("triad_f32", (triad_f32<<<grid, block>>>(c, a, b, 3.0f, n)));
    return 0;
}
