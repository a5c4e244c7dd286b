// Driver for cuda/spmv_csr.cu: CSR SpMV, 16 nonzeros per row at scattered columns.
#include "driver_common.cuh"
#include "../cuda/spmv_csr.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int nrows = pick(1 << 14, 1 << 22);  // nnz 2^18 (3 MB) or 2^26 (512 MB + vectors)
    const int per_row = 16;
    const size_t nnz = (size_t)nrows * per_row;
    int* row_ptr = device_array<int>(nrows + 1, [=](size_t r) { return (int)(r * per_row); });
    int* col_idx = device_array<int>(nnz, [=](size_t j) { return (int)((j * 2654435761u) % (unsigned)nrows); });
    float* vals = device_floats(nnz, -1.0f, 1.0f);
    float* x = device_floats(nrows);
    float* y = device_zeros<float>(nrows);
    const unsigned int block = 256;
    RUN("spmv_csr_scalar", (spmv_csr_scalar<<<blocks_for(nrows, block), block>>>(nrows, row_ptr, col_idx, vals, x, y)));
    RUN("spmv_csr_vector", (spmv_csr_vector<<<blocks_for((size_t)nrows * 32, block), block>>>(nrows, row_ptr, col_idx, vals, x, y)));
    return 0;
}
