// Sparse matrix-vector product y = A x, A in CSR form. The inner loop's length comes from
// row_ptr (data-dependent) and x is reached through col_idx (indirect).
#include <cuda_runtime.h>

// One thread per row.
__global__ void spmv_csr_scalar(int nrows, const int* __restrict__ row_ptr,
                                const int* __restrict__ col_idx, const float* __restrict__ vals,
                                const float* __restrict__ x, float* __restrict__ y)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < nrows) {
        int begin = row_ptr[row];
        int end = row_ptr[row + 1];
        float dot = 0.0f;
        for (int j = begin; j < end; ++j) {
            dot += vals[j] * x[col_idx[j]];
        }
        y[row] = dot;
    }
}

// One warp per row: lanes stride through the row, then combine with shuffles.
__global__ void spmv_csr_vector(int nrows, const int* __restrict__ row_ptr,
                                const int* __restrict__ col_idx, const float* __restrict__ vals,
                                const float* __restrict__ x, float* __restrict__ y)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (warp < nrows) {
        float dot = 0.0f;
        for (int j = row_ptr[warp] + lane; j < row_ptr[warp + 1]; j += 32)
            dot += vals[j] * x[col_idx[j]];
        for (int off = 16; off > 0; off >>= 1)
            dot += __shfl_down_sync(0xffffffffu, dot, off);
        if (lane == 0)
            y[warp] = dot;
    }
}
