// I1: integer * + % << & ^, ++, compound assignments and integer comparisons: 1 each.
__global__ void i1_int(const int* a, int* b, int n) {
  int i = threadIdx.x;
  int v = a[i] * 3 + (n % 4);
  v <<= 1;
  v++;
  b[i] = (v & 7) ^ (i < n);
}
