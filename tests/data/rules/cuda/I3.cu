// I3: a for loop's condition and increment count once per iteration (64 trips: above I4's 32).
__global__ void i3_loop(float* y) {
  float s = 0.0f;
  for (int k = 0; k < 64; k++) {
    s += 1.0f;
  }
  y[threadIdx.x] = s;
}
