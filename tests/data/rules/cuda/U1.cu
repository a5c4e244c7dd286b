// U1: a device function's counts are added at its call site; its pointer keeps its space.
__device__ float twice(const float* p, int k) { return p[k] * 2.0f; }

__global__ void u1_callee(const float* x, float* y) {
  int i = threadIdx.x;
  y[i] = twice(x, i) + 1.0f;
}
