// Driver for cuda/histogram.cu: 256-bin byte histograms, global and shared-memory atomics.
#include "driver_common.cuh"
#include "../cuda/histogram.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 21, 1 << 28);  // 2 MB or 256 MB of bytes
    const unsigned int block = 256;
    unsigned char* data = device_array<unsigned char>(n, [](size_t i) { return (unsigned char)((i * 2654435761u) >> 24); });
    unsigned int* bins = device_zeros<unsigned int>(NBINS);
    RUN("histogram_global", (histogram_global<<<blocks_for(n, block), block>>>(data, bins, n)));
    RUN("histogram_shared", (histogram_shared<<<1024, block>>>(data, bins, n)));
    return 0;
}
