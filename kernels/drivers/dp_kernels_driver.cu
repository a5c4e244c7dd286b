// Driver for cuda/dp_kernels.cu: double-precision axpy, polynomial, logistic map.
#include "driver_common.cuh"
#include "../cuda/dp_kernels.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 17, 1 << 25);  // 1 MB or 256 MB per double array
    const unsigned int block = 256, grid = blocks_for(n, block);
    double* x = device_doubles(n, -1.0, 1.0);
    double* y = device_doubles(n);
    double* coef = device_doubles(DEG + 1, -0.5, 0.5);
    double* state = device_doubles(n, 0.1, 0.9);
    RUN("daxpy", (daxpy<<<grid, block>>>(n, 2.0, x, y)));
    RUN("poly_eval_dp", (poly_eval_dp<<<grid, block>>>(x, coef, y, n)));
    RUN("logistic_map_dp", (logistic_map_dp<<<grid, block>>>(state, 3.7, 64, n)));
    return 0;
}
