// Fixture for tests/test_discovery.py (our own code): many ways to write a kernel.
#include <cuda_runtime.h>
#include "include/common.cuh"

__global__ void plain(float* a) { a[threadIdx.x] = 1.0f; }

template <typename T, int B>
__global__ void templated(T* a)
{
    a[threadIdx.x] = (T)B;
}

extern "C" __global__ void c_linkage(float* a) { a[threadIdx.x] = twice_plus_one(a[0]); }

extern "C" {
__global__ void c_block(float* a) { a[0] = 0.0f; }
}

namespace outer {
namespace inner {
__global__ void in_namespace(float* a) { a[threadIdx.x] = 3.0f; }
}  // namespace inner
}  // namespace outer

GLOBAL void behind_macro(float* a) { a[threadIdx.x] = scale2(a[threadIdx.x]); }

__global__ void BOUNDS bounded(float* a) { a[threadIdx.x] = 4.0f; }

static __global__ void
split_signature(float* a,
                int n)
{
    if (threadIdx.x < n) a[threadIdx.x] = 5.0f;
}

__global__ void declared_only(float* a);

__device__ float not_a_kernel(float v) { return v; }

void host_launch(float* a)
{
    plain<<<1, 32>>>(a);
    templated<float, 4><<<1, 32>>>(a);
}
