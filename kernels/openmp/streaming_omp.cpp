// Streaming loops offloaded with OpenMP: a double-precision triad with the combined
// construct, and a float scale with the `loop` construct.

void triad_omp(double* a, const double* b, const double* c, double scalar, int n)
{
#pragma omp target teams distribute parallel for map(to: b[0:n], c[0:n]) map(from: a[0:n])
    for (int i = 0; i < n; ++i)
        a[i] = b[i] + scalar * c[i];
}

void scale_loop(float* y, const float* x, float alpha, int n)
{
#pragma omp target teams loop map(to: x[0:n]) map(from: y[0:n])
    for (int i = 0; i < n; ++i)
        y[i] = alpha * x[i];
}
