// One radix-2 decimation-in-time butterfly stage of a complex FFT, in place.
// Thread t owns one butterfly; half_span is the distance between its two inputs.
#include <cuda_runtime.h>

#define PI_F 3.14159265358979f

__global__ void fft_radix2_stage(float2* __restrict__ data, int n, int half_span)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n / 2) return;
    int group = t / half_span;
    int pos = t % half_span;
    int top = group * 2 * half_span + pos;
    int bot = top + half_span;
    float s, c;
    sincosf(-PI_F * pos / half_span, &s, &c);
    float2 a = data[top];
    float2 b = data[bot];
    float2 tw = make_float2(b.x * c - b.y * s, b.x * s + b.y * c);
    data[top] = make_float2(a.x + tw.x, a.y + tw.y);
    data[bot] = make_float2(a.x - tw.x, a.y - tw.y);
}
