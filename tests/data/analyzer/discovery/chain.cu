// Fixture for tests/test_discovery.py (our own code): a __device__ call graph.
__device__ float leaf(float v) { return v * v; }
__device__ float left(float v) { return leaf(v) + 1.0f; }
__device__ float right(float v) { return leaf(v) - 1.0f; }
__device__ float unused(float v) { return v / 3.0f; }
__global__ void child(float* a) { a[0] = 0.0f; }

__global__ void root(const float* x, float* y)
{
    int i = threadIdx.x;
    float l = left(x[i]);
    float r = right(x[i]);
    y[i] = l * r;
}
