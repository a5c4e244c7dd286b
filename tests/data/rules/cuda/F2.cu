// F2: + - * and their compound forms 1 each, a*b + c 2, fmaf 2, ++ 1.
__global__ void f2_ops(const float* x, float* y) {
  int i = threadIdx.x;
  float a = x[i];
  float b = a * a + a;
  b += fmaf(a, b, 1.0f);
  b++;
  y[i] = b - a;
}
