// C6: a kernel parameter stays a symbol.
__global__ void c6_symbols(float* y, int n) {
  float s = 0.0f;
  for (int k = 0; k < n; k++) {
    s += 2.0f;
  }
  y[threadIdx.x] = s;
}
