// Driver for cuda/vec4.cu: float4 scale-add and float4 -> float2 packing.
#include "driver_common.cuh"
#include "../cuda/vec4.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n4 = pick(1 << 16, 1 << 24);  // 1 MB or 256 MB per float4 array
    const unsigned int block = 256, grid = blocks_for(n4, block);
    auto make4 = [](size_t i) { return make_float4(det_value(i, 0, 1), det_value(i + 1, 0, 1), det_value(i + 2, 0, 1), det_value(i + 3, 0, 1)); };
    float4* a = device_array<float4>(n4, make4);
    float4* b = device_array<float4>(n4, make4);
    float4* out = device_zeros<float4>(n4);
    float2* xy = device_zeros<float2>(n4);
    RUN("scale_add_float4", (scale_add_float4<<<grid, block>>>(a, b, out, 2.0f, n4)));
    RUN("pack_xy", (pack_xy<<<grid, block>>>(a, xy, n4)));
    return 0;
}
