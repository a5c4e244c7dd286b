// F1: precision after C promotions: float * 2.0 is a double multiply, float * int a float one.
__global__ void f1_promote(const float* x, double* y, int k) {
  int i = threadIdx.x;
  float v = x[i];
  y[i] = v * 2.0 + v * 2.0f + v * k;
}
