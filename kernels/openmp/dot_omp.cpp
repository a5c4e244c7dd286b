// Double-precision dot product with a reduction clause on the combined construct.

double dot_omp(const double* x, const double* y, int n)
{
    double sum = 0.0;
#pragma omp target teams distribute parallel for reduction(+: sum) map(to: x[0:n], y[0:n]) map(tofrom: sum)
    for (int i = 0; i < n; ++i)
        sum += x[i] * y[i];
    return sum;
}
