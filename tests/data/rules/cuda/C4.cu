// C4: a bound read from memory is unknown: trip_L<line>, bound here by a define.
__global__ void c4_unknown(const int* len, float* y) {
  float s = 0.0f;
  for (int k = 0; k < len[0]; k++) {
    s += 1.0f;
  }
  y[threadIdx.x] = s;
}
