// I4: a for loop of at most 32 trips, a constant, is unrolled fully: its condition and
// increment count 0, its body still counts per trip. At 33 trips the control counts (I3).
__global__ void i4_unroll(int* y) {
  int s = 0;
  for (int k = 0; k < 32; k++) {
    s += k;
  }
  for (int k = 0; k < 33; k++) {
    s ^= k;
  }
  y[threadIdx.x] = s;
}
