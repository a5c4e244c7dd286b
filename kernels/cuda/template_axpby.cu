// A precision-generic kernel: y = alpha * x + beta * y for any arithmetic T.
#include <cuda_runtime.h>

template <typename T> __global__ void axpby(int n, T alpha, const T* __restrict__ x, T beta, T* __restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i] + beta * y[i];
    }
}

template __global__ void axpby<float>(int, float, const float*, float, float*);
template __global__ void axpby<double>(int, double, const double*, double, double*);
