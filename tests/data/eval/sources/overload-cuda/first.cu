// Test fixture: two kernels share a name in different files; the signature tells them apart.
__global__ void reduce(const float *in, float *out)
{
  out[blockIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
}

__global__ void reduceFinal(const double *partial, double *total, unsigned long n)
{
  if (threadIdx.x < n) total[0] = partial[threadIdx.x];
}
