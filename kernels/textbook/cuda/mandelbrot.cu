// Mandelbrot set escape times over the window [-2, 1] x [-1.5, 1.5], one pixel per thread,
// at most MAX_ITER iterations of z <- z^2 + c. Writes the count, reads nothing.
#include <cuda_runtime.h>

#define MAX_ITER 1000

__global__ void tb_mandelbrot(int* __restrict__ iters, int width, int height)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height)
        return;
    float cx = -2.0f + 3.0f * px / width;
    float cy = -1.5f + 3.0f * py / height;
    float x = 0.0f, y = 0.0f;
    int it = 0;
    for (; it < MAX_ITER; ++it) {
        float xx = x * x;
        float yy = y * y;
        if (xx + yy > 4.0f)
            break;
        y = 2.0f * x * y + cy;
        x = xx - yy + cx;
    }
    iters[py * width + px] = it;
}
