// Driver for cuda/black_scholes.cu: n European options.
#include "driver_common.cuh"
#include "../cuda/black_scholes.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 17, 1 << 25);  // 5 arrays: 2.5 MB or 640 MB
    const unsigned int block = 128, grid = blocks_for(n, block);
    float* spot = device_floats(n, 5.0f, 30.0f);
    float* strike = device_floats(n, 1.0f, 100.0f);
    float* years = device_floats(n, 0.25f, 10.0f);
    float* call = device_zeros<float>(n);
    float* put = device_zeros<float>(n);
    RUN("black_scholes", (black_scholes<<<grid, block>>>(spot, strike, years, call, put, 0.02f, 0.30f, n)));
    return 0;
}
