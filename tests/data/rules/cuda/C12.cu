// C12: a name declared inside a loop body is a new variable: its writes move no bound.
__global__ void c12_shadowed(const int* a, int* out, int n) {
  int idx = threadIdx.x;
  for (int i = idx; i < n; i += 64) {
    if (a[i] != 0) {
      int idx = a[i];
      idx += 1;
      out[idx] = i;
    }
  }
}
