// Test fixture for roofcast evaluate: small kernels written for the roofcast test suite.
#include <cstdio>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T>
__global__ void scale(T *v, T factor, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * factor;
}

__global__ void count_loop(const int *in, int *out, int n, int reps)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = 0;
  for (int r = 0; r < reps; r++) acc += in[i] * r;
  if (i < n) out[i] = acc;
}

int main()
{
  const int n = 1 << 20;
  float *x, *y;
  double *d;
  int *a, *b;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&d, n * sizeof(double));
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  saxpy<<<n / 256, 256>>>(n, 2.0f, x, y);
  scale<float><<<n / 256, 256>>>(y, 0.5f, n);
  scale<double><<<n / 256, 256>>>(d, 0.5, n);
  count_loop<<<n / 256, 256>>>(a, b, n, 64);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
