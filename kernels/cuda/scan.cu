// Inclusive prefix sum inside one block (Hillis-Steele), double-buffered in shared memory
// so each step needs a single barrier. Blocks are independent; a second pass would add
// the block totals.
#include <cuda_runtime.h>

#define SCAN_BLOCK 512

__global__ void scan_block_inclusive(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float buf[2][SCAN_BLOCK];
    int tid = threadIdx.x;
    int gid = blockIdx.x * SCAN_BLOCK + tid;
    int src = 0;
    float v = (gid < n) ? in[gid] : 0.0f;
    buf[0][tid] = v;
    __syncthreads();
    for (int offset = 1; offset < SCAN_BLOCK; offset <<= 1) {
        if (tid >= offset)
            v += buf[src][tid - offset];
        src = 1 - src;
        buf[src][tid] = v;
        __syncthreads();
    }
    if (gid < n)
        out[gid] = v;
}
