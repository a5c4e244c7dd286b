// Driver for cuda/gemm.cu: naive and shared-memory tiled SGEMM on N x N matrices.
#include "driver_common.cuh"
#include "../cuda/gemm.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int N = pick(512, 4096);  // 3 matrices: 3 MB or 192 MB
    const size_t nn = (size_t)N * N;
    float* A = device_floats(nn, -1.0f, 1.0f);
    float* B = device_floats(nn, -1.0f, 1.0f);
    float* C = device_zeros<float>(nn);
    dim3 block(TILE, TILE), grid(N / TILE, N / TILE);
    RUN("gemm_naive", (gemm_naive<<<grid, block>>>(A, B, C, N, N, N)));
    RUN("gemm_tiled", (gemm_tiled<<<grid, block>>>(A, B, C, N)));
    return 0;
}
