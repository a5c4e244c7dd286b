// Fixture for tests/test_analyze_cli.py: one OpenMP offload region (our own code).
// Per iteration: a*x[i] = 1 sp; load 4; store 4; work items n.
void scale(const float* x, float* y, float a, int n)
{
    #pragma omp target teams distribute parallel for map(to: x[0:n]) map(from: y[0:n])
    for (int i = 0; i < n; i++) {
        y[i] = a * x[i];
    }
}
