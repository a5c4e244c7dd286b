// The target region and the worksharing construct written as two nested pragmas.

void saxpy_split(float a, const float* x, float* y, int n)
{
#pragma omp target map(to: x[0:n]) map(tofrom: y[0:n])
    {
#pragma omp teams distribute parallel for
        for (int i = 0; i < n; ++i)
            y[i] = a * x[i] + y[i];
    }
}
