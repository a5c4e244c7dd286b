// Fixture for tests/test_discovery.py (our own code): a header of the same tree.
#pragma once
#define GLOBAL __global__
#define BOUNDS __launch_bounds__(256)

__device__ inline float scale2(float v) { return v * 2.0f; }

__device__ inline float twice_plus_one(float v) { return scale2(v) + 1.0f; }

__global__ void header_kernel(float* a) { a[threadIdx.x] = twice_plus_one(a[threadIdx.x]); }
