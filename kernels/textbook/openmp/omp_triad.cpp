// STREAM triad a = b + q * c offloaded with OpenMP: one element per iteration.

void omp_triad(long n, float q, float* a, const float* b, const float* c)
{
#pragma omp target teams distribute parallel for map(to: b[0:n], c[0:n]) map(from: a[0:n])
    for (long i = 0; i < n; ++i)
        a[i] = b[i] + q * c[i];
}
