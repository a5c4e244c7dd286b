// I2: && || ! and ?: are not integer operations; the comparisons are.
__global__ void i2_not_int(const int* a, int* b, int n) {
  int i = threadIdx.x;
  bool ok = !(i >= n) && (i != 0 || n > 1);
  b[i] = ok ? a[i] : 0;
}
