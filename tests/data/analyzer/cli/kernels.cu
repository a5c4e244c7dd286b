// Fixture for tests/test_analyze_cli.py (our own code). The per-thread counts the tests
// expect are derived by hand from docs/counting.md in the comments above each kernel.
#define SCALE 2.0f

// int: * + <  = 3; load src[i] 4; store dst[i] 4; no symbols left in the counts.
__global__ void copy_f32(const float* __restrict__ src, float* __restrict__ dst, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = src[i];
    }
}

// trip n; per iteration: k<n, k++, r*n, +k = 4 int, s+= 1 sp, a[...] 4 bytes.
// totals: sp n, int 4n, load 4n, store 4 (out[r]).
__global__ void row_sum(const float* a, float* out, int n)
{
    int r = blockIdx.x;
    float s = 0.0f;
    for (int k = 0; k < n; k++) {
        s += a[r * n + k];
    }
    out[r] = s;
}

// grid-stride: T = ceiling(n/(blockDim_x*gridDim_x)); sp T, load 4T, store 4T,
// int 2 (start) + 3T (i<n, blockDim.x*gridDim.x, +=).
__global__ void gs_scale(const float* x, float* y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = SCALE * x[i];
    }
}

// dp: v*v, *v, +, 2.0*v, + 1.0 = 5; load 8, store 8; int 0.
__global__ void dp_poly(const double* x, double* y)
{
    int i = threadIdx.x;
    double v = x[i];
    y[i] = v * v * v + 2.0 * v + 1.0;
}
