// C1: every arm counts as if taken; each `if` and `?:` is one branch.
__global__ void c1_arms(const float* x, float* y, float* z, int n) {
  int i = threadIdx.x;
  if (i < n) {
    y[i] = x[i] * 2.0f;
  } else {
    z[i] = x[i] + 1.0f;
  }
}
