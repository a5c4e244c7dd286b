// Vector add with `target parallel for`: one team, its threads share the loop.

void vadd_parallel_for(const float* a, const float* b, float* c, int n)
{
#pragma omp target parallel for map(to: a[0:n], b[0:n]) map(from: c[0:n])
    for (int i = 0; i < n; ++i)
        c[i] = a[i] + b[i];
}
