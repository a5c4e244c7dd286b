// Two target regions in one function: find the largest magnitude, then scale by its inverse.
#include <cmath>

void normalize_two_pass(float* v, int n)
{
    float maxval = 0.0f;
#pragma omp target teams distribute parallel for reduction(max: maxval) map(to: v[0:n])
    for (int i = 0; i < n; ++i)
        maxval = fmaxf(maxval, fabsf(v[i]));
    float inv = 1.0f / maxval;
#pragma omp target teams distribute parallel for map(tofrom: v[0:n])
    for (int i = 0; i < n; ++i)
        v[i] *= inv;
}
