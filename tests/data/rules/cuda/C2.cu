// C2: affine bounds give exact trip counts; a multiplying step gives a logarithm.
__global__ void c2_trips(float* y) {
  float s = 0.0f;
  for (int k = 0; k < 10; k += 3) {
    s += 1.0f;
  }
  for (int k = 1; k <= 8; k *= 2) {
    s += 2.0f;
  }
  y[threadIdx.x] = s;
}
