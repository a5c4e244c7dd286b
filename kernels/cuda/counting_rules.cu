// Small kernels that each pin down one counting rule: explicit loads (__ldg, *(p + k)),
// fused multiply-adds, every arm of a branch, reads after writes, loop-invariant accesses,
// typedef'd and vector element types, loop shapes, a do/while loop and declaration forms
// (namespace, __launch_bounds__, extern "C").
#include <cuda_runtime.h>

#define REPS 16

typedef double real_t;

__global__ void ldg_deref(const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float u = __ldg(&a[i]);
        float v = *(b + i);
        *(out + i) = u * v;
    }
}

__global__ void fma_chain(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float acc = fmaf(v, v, 1.0f);
        acc = __fmaf_rn(acc, v, -0.5f);
        acc++;
        y[i] = acc - fabsf(v);
    }
}

__global__ void piecewise(const float* __restrict__ x, const int* __restrict__ mode,
                          float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float r;
        switch (mode[i]) {
        case 0:
            r = v * v;
            break;
        case 1:
            r = v + 1.0f;
            break;
        default:
            r = -v;
            break;
        }
        if (v > 0.0f)
            r = r * 2.0f;
        else
            r = r * 0.5f + 1.0f;
        y[i] = (r > 1.0f) ? r - 1.0f : r;
    }
}

__global__ void accumulate_in_place(const float* __restrict__ x, const float* __restrict__ w,
                                    float* __restrict__ y, float* __restrict__ z, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 0.0f;
        for (int r = 0; r < REPS; ++r)
            y[i] += w[r] * x[i];
        z[i] = y[i] * y[i];
    }
}

__global__ void typedef_scale(const real_t* __restrict__ in, real_t* __restrict__ out, real_t s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = s * in[i];
    }
}

__global__ void complex_mul_dp(const double2* __restrict__ a, const double2* __restrict__ b,
                               double2* __restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double2 x = a[i];
        double2 y = b[i];
        c[i] = make_double2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
    }
}

__global__ void loop_shapes(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 10; k > 0; --k)
        acc += x[i] * k;
    for (int k = 0; k <= 8; k += 2)
        acc -= 0.5f;
    for (int m = 1024; m > 1; m /= 4)
        acc *= 0.99f;
    y[i] = acc;
}

// Newton iterations for sqrt(a) until converged (or 20 steps): a do/while loop.
__global__ void newton_sqrt(const float* __restrict__ a, float* __restrict__ root, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i];
        float g = v > 1.0f ? v * 0.5f : 1.0f;
        int it = 0;
        do {
            g = 0.5f * (g + v / g);
            ++it;
        } while (it < 20 && fabsf(g * g - v) > 1e-6f * v);
        root[i] = g;
    }
}

namespace corpus {
__global__ void __launch_bounds__(256) bounded_scale(float* __restrict__ v, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        v[i] *= s;
    }
}
}  // namespace corpus

extern "C" __global__ void c_linkage_sub(const float* __restrict__ a, const float* __restrict__ b,
                                         float* __restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] - b[i];
    }
}

// C15: a linear search over a sorted table leaves at the first match, (n + 1) / 2 trips on
// average for a draw spread evenly over the table (inverse-CDF sampling)
__global__ void sample_cdf(const float* __restrict__ cdf, const float* __restrict__ u,
                           int* __restrict__ picked, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        int found = n - 1;
        for (int k = 0; k < n; k++) {
            if (cdf[k] >= u[i]) {
                found = k;
                break;
            }
        }
        picked[i] = found;
    }
}
