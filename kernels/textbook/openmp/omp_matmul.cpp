// Plain single-precision matrix multiply C = A * B (n x n, row-major), one C element per
// iteration of the collapsed i, j space, the k loop inside.

void omp_matmul(int n, const float* A, const float* B, float* C)
{
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n*n], B[0:n*n]) map(from: C[0:n*n])
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (int k = 0; k < n; ++k)
                sum += A[i * n + k] * B[k * n + j];
            C[i * n + j] = sum;
        }
}
