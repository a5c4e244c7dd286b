// C8: a bound clamped with a conditional (a < b ? a : b) is min(a, b).
__global__ void c8_clamped(float* y, int n) {
  int end = n < 64 ? n : 64;
  float s = 0.0f;
  for (int i = 0; i < end; i++) {
    s += 1.0f;
  }
  y[threadIdx.x] = s;
}
