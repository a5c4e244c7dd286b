// Dense matrix multiply C = A * B for square n x n row-major matrices, four ways: straight
// from global memory, through 32 x 32 shared-memory tiles (fp32), through 128 x 128 block
// tiles with an 8 x 8 register tile per thread (fp32), and through 16 x 16 tiles in fp64.
// n is a multiple of every tile size.
#include <cuda_runtime.h>

// 16 x 16 blocks, one C element per thread.
__global__ void tb_sgemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                               float* __restrict__ C, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
        sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
}

#define T32 32

// T32 x T32 blocks (1024 threads), one C element per thread.
__global__ void tb_sgemm_tiled32(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, int n)
{
    __shared__ float sa[T32][T32];
    __shared__ float sb[T32][T32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T32 + ty;
    int col = blockIdx.x * T32 + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < n; k0 += T32) {
        sa[ty][tx] = A[row * n + k0 + tx];
        sb[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < T32; ++k)
            sum += sa[ty][k] * sb[k][tx];
        __syncthreads();
    }
    C[row * n + col] = sum;
}

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define RB_THREADS 256

// RB_THREADS threads (1D) per block, grid (n / BN, n / BM); each thread owns TM x TN of C.
__global__ void tb_sgemm_regblock(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, int n)
{
    __shared__ float sa[BK][BM];
    __shared__ float sb[BK][BN];
    int t = threadIdx.x;
    int trow = t / (BN / TN);
    int tcol = t % (BN / TN);
    int m0 = blockIdx.y * BM;
    int n0 = blockIdx.x * BN;
    float acc[TM][TN];
    for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    float ar[TM];
    float br[TN];
    for (int k0 = 0; k0 < n; k0 += BK) {
        for (int e = t; e < BM * BK; e += RB_THREADS) {
            sa[e % BK][e / BK] = A[(m0 + e / BK) * n + k0 + e % BK];
            sb[e / BN][e % BN] = B[(k0 + e / BN) * n + n0 + e % BN];
        }
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            for (int i = 0; i < TM; ++i)
                ar[i] = sa[k][trow * TM + i];
            for (int j = 0; j < TN; ++j)
                br[j] = sb[k][tcol * TN + j];
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j)
            C[(m0 + trow * TM + i) * n + n0 + tcol * TN + j] = acc[i][j];
}

#define T16 16

// T16 x T16 blocks, one C element per thread, double precision.
__global__ void tb_dgemm_tiled16(const double* __restrict__ A, const double* __restrict__ B,
                                 double* __restrict__ C, int n)
{
    __shared__ double sa[T16][T16];
    __shared__ double sb[T16][T16];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T16 + ty;
    int col = blockIdx.x * T16 + tx;
    double sum = 0.0;
    for (int k0 = 0; k0 < n; k0 += T16) {
        sa[ty][tx] = A[row * n + k0 + tx];
        sb[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < T16; ++k)
            sum += sa[ty][k] * sb[k][tx];
        __syncthreads();
    }
    C[row * n + col] = sum;
}
