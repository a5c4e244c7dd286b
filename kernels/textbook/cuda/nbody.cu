// All-pairs gravitational accelerations: body i (one per thread) against every body j, the
// j bodies staged through shared memory one block-sized tile at a time. pos[j].w is the mass.
#include <cuda_runtime.h>

#define NB_TILE 256

// NB_TILE threads per block; nbodies is a multiple of NB_TILE.
__global__ void tb_nbody(const float4* __restrict__ pos, float4* __restrict__ acc, int nbodies,
                         float soft2)
{
    __shared__ float4 tile[NB_TILE];
    int i = blockIdx.x * NB_TILE + threadIdx.x;
    float4 me = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int base = 0; base < nbodies; base += NB_TILE) {
        tile[threadIdx.x] = pos[base + threadIdx.x];
        __syncthreads();
        for (int j = 0; j < NB_TILE; ++j) {
            float dx = tile[j].x - me.x;
            float dy = tile[j].y - me.y;
            float dz = tile[j].z - me.z;
            float r2 = dx * dx + dy * dy + dz * dz + soft2;
            float inv = rsqrtf(r2);
            float s = tile[j].w * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}
