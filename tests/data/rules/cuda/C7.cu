// C7: while/do loops that count a local from a known start have their for loop's trips.
__global__ void c7_counted_while(float* y, int n) {
  float s = 0.0f;
  int i = 0;
  while (i < n) {
    s += 1.0f;
    i += 2;
  }
  int k = 5;
  do {
    s += 2.0f;
  } while (--k);
  y[threadIdx.x] = s;
}
