// Driver for cuda/template_axpby.cu: both explicit instantiations (float, double).
#include "driver_common.cuh"
#include "../cuda/template_axpby.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 17, 1 << 25);
    const unsigned int block = 256, grid = blocks_for(n, block);
    float* xf = device_floats(n);
    float* yf = device_floats(n);
    double* xd = device_doubles(n);
    double* yd = device_doubles(n);
    RUN("axpby<float>", (axpby<float><<<grid, block>>>(n, 2.0f, xf, 0.5f, yf)));
    RUN("axpby<double>", (axpby<double><<<grid, block>>>(n, 2.0, xd, 0.5, yd)));
    return 0;
}
