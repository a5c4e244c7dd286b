// C10: the counter is the name the test compares and the update steps (k = j++ steps j).
__global__ void c10_counters(float* y, const float* v, int n) {
  float s = 0.0f;
  int k = n - 1;
  for (int i = 64, j = 0; j < n; i++, k = j++) {
    s += v[j] * v[k];
  }
  y[threadIdx.x] = s;
}
