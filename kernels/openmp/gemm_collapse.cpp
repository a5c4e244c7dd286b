// Matrix multiply C = A * B (row-major, M x K times K x N): the i/j nest is collapsed into
// one iteration space, and each (i, j) iteration runs the whole k loop.

void gemm_collapse(const float* A, const float* B, float* C, int M, int N, int K)
{
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:M*K], B[0:K*N]) map(from: C[0:M*N])
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k)
                acc += A[i * K + k] * B[k * N + j];
            C[i * N + j] = acc;
        }
    }
}
