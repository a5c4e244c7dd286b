// Fixture for tests/test_preprocess.py (our own code): multi-line macros before kernels.
#define BLOCK 256
#define LONG_MACRO(a, b) \
  ((a) * BLOCK + \
   (b))
#define IDX(i, j) \
  ((i) * 16 + (j))
#define A(r, c) a[(r) * 16 + (c)]
#define KERNEL(name) __global__ void name
/* a comment
   spanning
   lines */
__constant__ int table[4] = { LONG_MACRO(1,
                                         2),
                              IDX(3,
                                  4), 0, 0 };
__global__ void after_macros(const float* x, float* y, int n)
{
  int i = IDX(threadIdx.x,
              0);
  float s = 0.0f;
  while (s < x[i]) {
    s += 1.0f;
  }
  y[i] = s;
}

KERNEL(declared_by_macro)(const float* a, float* out)
{
  out[0] = A(0, 0) + A(0, 1) + A(1, 0) + A(1, 1);
}
