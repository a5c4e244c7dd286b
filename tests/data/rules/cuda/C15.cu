// C15: `position == k ? a : b` in a bound is b, what every thread but a few sees.
__global__ void c15_last_block(const int* in, int* out, int size) {
  int region = size / gridDim.x;
  int start = blockIdx.x * region;
  int stop = (blockIdx.x == gridDim.x - 1) ? size : start + region;
  int s = 0;
  for (int i = start + threadIdx.x; i < stop; i += blockDim.x) {
    s += in[i];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
