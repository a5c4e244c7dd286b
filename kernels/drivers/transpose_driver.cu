// Driver for cuda/transpose.cu: naive and shared-memory tiled transposes of a square matrix.
#include "driver_common.cuh"
#include "../cuda/transpose.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int w = pick(1024, 16384), h = w;  // 4 MB or 1 GB per matrix
    float* in = device_floats((size_t)w * h);
    float* out = device_zeros<float>((size_t)w * h);
    dim3 nblock(32, 8), ngrid(blocks_for(w, 32), blocks_for(h, 8));
    RUN("transpose_naive", (transpose_naive<<<ngrid, nblock>>>(in, out, w, h)));
    dim3 tblock(TDIM, ROWS), tgrid(blocks_for(w, TDIM), blocks_for(h, TDIM));
    RUN("transpose_shared", (transpose_shared<<<tgrid, tblock>>>(in, out, w, h)));
    return 0;
}
