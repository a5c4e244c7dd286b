// Driver for cuda/scan.cu: block-wise inclusive scan (Hillis-Steele, double-buffered).
#include "driver_common.cuh"
#include "../cuda/scan.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);
    float* in = device_floats(n);
    float* out = device_zeros<float>(n);
    RUN("scan_block_inclusive", (scan_block_inclusive<<<blocks_for(n, SCAN_BLOCK), SCAN_BLOCK>>>(in, out, n)));
    return 0;
}
