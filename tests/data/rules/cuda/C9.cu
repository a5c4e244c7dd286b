// C9: a test of a linear function of the counter (2 * m < n) tests m against n / 2.
__global__ void c9_linear(float* y, int n) {
  float s = 0.0f;
  for (int m = 0; 2 * m < n; m++) {
    s += 1.0f;
  }
  y[threadIdx.x] = s;
}
