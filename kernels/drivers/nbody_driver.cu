// Driver for cuda/nbody.cu: all-pairs forces. O(n^2) work, so the large size is bounded by
// time, not memory: 2^19 bodies (8 MB) is far more work but not beyond a large L2.
#include "driver_common.cuh"
#include "../cuda/nbody.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 14, 1 << 19);
    const unsigned int block = 256;
    float4* pos = device_array<float4>(n, [](size_t i) {
        return make_float4(det_value(i, -1, 1), det_value(i + 1, -1, 1), det_value(i + 2, -1, 1), det_value(i + 3, 0.5f, 1));
    });
    float3* acc = device_zeros<float3>(n);
    RUN("nbody_forces", (nbody_forces<<<blocks_for(n, block), block>>>(pos, acc, n, 1e-3f)));
    return 0;
}
