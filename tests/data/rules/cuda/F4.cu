// F4: special functions per call by kind and precision (the catalogue's); sin of a double is dp.
__global__ void f4_specials(const float* x, double* y) {
  int i = threadIdx.x;
  float a = x[i];
  float r = sqrtf(a) + __expf(a) / a;
  double d = sin((double)a);
  y[i] = r + d;
}
