// Driver for cuda/fft_radix2.cu: one radix-2 butterfly stage over n complex values.
#include "driver_common.cuh"
#include "../cuda/fft_radix2.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);  // 2 MB or 512 MB of float2
    const unsigned int block = 256, grid = blocks_for(n / 2, block);
    float2* data = device_array<float2>(n, [](size_t i) {
        return make_float2(det_value(i, -1.0f, 1.0f), det_value(i + 7, -1.0f, 1.0f));
    });
    RUN("fft_radix2_stage", (fft_radix2_stage<<<grid, block>>>(data, n, 1024)));
    return 0;
}
