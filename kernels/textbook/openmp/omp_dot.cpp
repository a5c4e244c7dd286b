// Dot product of two double vectors with an OpenMP reduction.

double omp_dot(long n, const double* x, const double* y)
{
    double sum = 0.0;
#pragma omp target teams distribute parallel for reduction(+: sum) map(to: x[0:n], y[0:n]) map(tofrom: sum)
    for (long i = 0; i < n; ++i)
        sum += x[i] * y[i];
    return sum;
}
