// All-pairs gravitational acceleration: each thread sums the pull of every body on its own.
// pos[j].w holds the mass; soft2 is the softening term that keeps r = 0 finite.
#include <cuda_runtime.h>

__global__ void nbody_forces(const float4* __restrict__ pos, float3* __restrict__ acc,
                             int n, float soft2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 pi = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; ++j) {
        float4 pj = pos[j];
        float dx = pj.x - pi.x;
        float dy = pj.y - pi.y;
        float dz = pj.z - pi.z;
        float d2 = dx * dx + dy * dy + dz * dz + soft2;
        float inv = rsqrtf(d2);
        float inv3 = inv * inv * inv;
        float s = pj.w * inv3;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    acc[i] = make_float3(ax, ay, az);
}
