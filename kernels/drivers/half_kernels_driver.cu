// Driver for cuda/half_kernels.cu: half-precision axpy and chunked dot products.
#include "driver_common.cuh"
#include "../cuda/half_kernels.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 19, 1 << 27);  // 1 MB or 256 MB per __half array
    const unsigned int block = 256;
    __half* x = device_array<__half>(n, [](size_t i) { return __float2half(det_value(i, -1.0f, 1.0f)); });
    __half* y = device_array<__half>(n, [](size_t i) { return __float2half(det_value(i + 3, -1.0f, 1.0f)); });
    const int nchunks = n / CHUNK;
    float* partial = device_zeros<float>(nchunks);
    RUN("haxpy", (haxpy<<<blocks_for(n, block), block>>>(n, __float2half(0.5f), x, y)));
    RUN("half_dot_chunks", (half_dot_chunks<<<blocks_for(nchunks, block), block>>>(x, y, partial, nchunks)));
    return 0;
}
