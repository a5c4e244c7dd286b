// Driver for cuda/reduce.cu: block reduction in shared memory, warp-shuffle reduction.
#include "driver_common.cuh"
#include "../cuda/reduce.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);
    float* in = device_floats(n);
    const unsigned int grid = blocks_for(n, BLOCK);
    float* block_sums = device_zeros<float>(grid);
    float* total = device_zeros<float>(1);
    RUN("reduce_sum_shared", (reduce_sum_shared<<<grid, BLOCK>>>(in, block_sums, n)));
    RUN("reduce_sum_warp", (reduce_sum_warp<<<1024, 256>>>(in, total, n)));
    return 0;
}
