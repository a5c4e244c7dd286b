// CSR sparse matrix-vector product in double precision, one row per iteration; the inner
// loop's bounds are read from rowptr.

void spmv_omp(int nrows, int nnz, const int* rowptr, const int* cols, const double* vals,
              const double* x, double* y)
{
#pragma omp target teams distribute parallel for map(to: rowptr[0:nrows+1], cols[0:nnz], vals[0:nnz], x[0:nrows]) map(from: y[0:nrows])
    for (int r = 0; r < nrows; ++r) {
        double acc = 0.0;
        for (int j = rowptr[r]; j < rowptr[r + 1]; ++j)
            acc += vals[j] * x[cols[j]];
        y[r] = acc;
    }
}
