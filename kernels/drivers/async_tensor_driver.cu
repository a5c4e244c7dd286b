// Driver for cuda/async_tensor.cu: cooperative-groups, pipeline and PTX cp.async copies into
// shared memory, and a WMMA 16x16x16 tile product (needs sm_80 or newer).
#include "driver_common.cuh"
#include "../cuda/async_tensor.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);  // floats: 1 MB or 256 MB per array

    float* g = device_floats(n);
    float* out = device_zeros<float>(n);

    // stage_block: one TILE of g per block, blockDim.x = TILE (sidecar: blockDim_x = 256)
    RUN("stage_block", (stage_block<<<n / TILE, TILE>>>(g, out)));

    // stage_thread: 128 float4 per block, one per thread
    const int n4 = n / 4;
    RUN("stage_thread", (stage_thread<<<n4 / 128, 128>>>(reinterpret_cast<const float4*>(g),
                                                          reinterpret_cast<float4*>(out))));

    // stage_ptx: 128 threads copy 16 bytes each (512 floats of g per block), 128 floats stored
    RUN("stage_ptx", (stage_ptx<<<n / 512, 128>>>(g, out)));

    // wmma_tile: A is 16 x (16 * tiles) row-major, B (16 * tiles) x 16 column-major, both with
    // leading dimension 16 * tiles (sidecar: tiles = 8); every warp computes the same C tile.
    const int tiles = 8, ld = 16 * tiles;
    __half* a = device_array<__half>(16 * ld, [](size_t i) { return __float2half(det_value(i, -1.0f, 1.0f)); });
    __half* b = device_array<__half>(16 * ld, [](size_t i) { return __float2half(det_value(i + 7, -1.0f, 1.0f)); });
    float* c = device_zeros<float>(16 * 16);
    const unsigned int warps = pick(1u << 12, 1u << 18), block = 128;
    RUN("wmma_tile", (wmma_tile<<<warps * 32 / block, block>>>(a, b, c, tiles)));
    return 0;
}
