// The float -> double promotion pitfall: an unsuffixed literal such as 2.0 is a double, so
// the arithmetic around it runs in fp64 even though every array is float.
#include <cuda_runtime.h>

__global__ void scale_promoted(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i] * 2.0 + 1.0f;
    }
}

// tanh-approximated GELU where one constant lost its f suffix.
__global__ void gelu_promoted(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float inner = 0.7978845608f * (v + 0.044715 * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}
