// M3: an access whose index the loop does not change counts once for the loop.
__global__ void m3_hoist(const float* w, const float* x, float* y) {
  int i = threadIdx.x;
  float s = 0.0f;
  for (int k = 0; k < 16; k++) {
    s += w[i] * x[k];
  }
  y[i] = s;
}
