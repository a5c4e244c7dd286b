// Flip-set member in OpenMP: y = w * x^84 + (a polynomial in x), evaluated by Horner's rule
// as 84 dependent fp32 FMAs per element over two loads and one store (168 FLOPs per 12 bytes,
// 14 FLOP/B: between the A100's and the H100's fp32 balance points). Twelve FMAs per trip.

#define HORNER_TRIPS 7

void omp_flip(int n, const float* x, const float* w, float* y, float k)
{
#pragma omp target teams distribute parallel for map(to: x[0:n], w[0:n]) map(from: y[0:n])
    for (int i = 0; i < n; ++i) {
        float xi = x[i];
        float p = w[i];
        for (int t = 0; t < HORNER_TRIPS; ++t) {
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
            p = p * xi + k;
        }
        y[i] = p;
    }
}
