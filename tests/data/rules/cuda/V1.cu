// V1: compute when a class's intensity reaches its balance point on the GPU, else bandwidth.
__global__ void v1_compute(const double* x, double* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double v = x[i];
  for (int k = 0; k < 100; k++) {
    v = v * v + 1.0;
  }
  y[i] = v;
}

__global__ void v1_bandwidth(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] + 1.0f;
}
