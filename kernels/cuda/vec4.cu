// Vector-typed memory access: 16-byte float4 loads and stores, and member reads of a float4
// element (only the members read move).
#include <cuda_runtime.h>

__global__ void scale_add_float4(const float4* __restrict__ a, const float4* __restrict__ b,
                                 float4* __restrict__ out, float s, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 va = a[i];
        float4 vb = b[i];
        float4 r;
        r.x = s * va.x + vb.x;
        r.y = s * va.y + vb.y;
        r.z = s * va.z + vb.z;
        r.w = s * va.w + vb.w;
        out[i] = r;
    }
}

__global__ void pack_xy(const float4* __restrict__ pts, float2* __restrict__ xy, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        xy[i] = make_float2(pts[i].x, pts[i].y);
    }
}
