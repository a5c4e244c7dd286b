// Elementwise special functions: float activations (exp, log1p, division) and
// double-precision Gaussian weights (pow, exp, sqrt, division).
#include <cmath>

void activations(const float* x, float* softplus, float* sigmoid, int n)
{
#pragma omp target teams loop map(to: x[0:n]) map(from: softplus[0:n], sigmoid[0:n])
    for (int i = 0; i < n; ++i) {
        float v = x[i];
        softplus[i] = log1pf(expf(v));
        sigmoid[i] = 1.0f / (1.0f + expf(-v));
    }
}

void gaussian_weights(const double* d, double* w, double sigma, int n)
{
#pragma omp target teams distribute parallel for simd map(to: d[0:n]) map(from: w[0:n])
    for (int i = 0; i < n; ++i)
        w[i] = exp(-pow(d[i] / sigma, 2.0)) / sqrt(2.0 * 3.141592653589793 * sigma * sigma);
}
