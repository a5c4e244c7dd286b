// Driver for cuda/access_paths.cu: members through pointers, dynamic shared memory handed out by
// helpers, vector types named through a class template, and work inside class methods.
// Both sidecar variants of pair_sums and dot4 (T unbound = float, T = double) are launched.
// CUDA 13 deprecates double4 (for double4_16a / double4_32a) and the corpus file names it on
// purpose; keep the host compiler quiet about it, down to nvcc's generated stub.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include "driver_common.cuh"
#include "../cuda/access_paths.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 17, 1 << 25);   // elements: 1 MB or 256 MB per 8-byte array
    const int n4 = pick(1 << 15, 1 << 23);  // vectors: 1 MB or 256 MB per double4 array
    const unsigned int block = 256, grid = blocks_for(n, block), grid4 = blocks_for(n4, block);

    Point2* pts = device_array<Point2>(n, [](size_t i) { return Point2{det_value(i, 0, 1), det_value(i + 1, 0, 1)}; });
    Body* bodies = device_array<Body>(n, [](size_t i) { return Body{det_value(i, -1, 1), det_value(i + 1, -1, 1)}; });
    float* xf = device_floats(n);
    float* yf = device_zeros<float>(n);
    double* xd = device_doubles(2 * (size_t)n);
    double* yd = device_zeros<double>(n);

    auto make_f4 = [](size_t i) { return make_float4(det_value(i, 0, 1), det_value(i + 1, 0, 1), det_value(i + 2, 0, 1), det_value(i + 3, 0, 1)); };
    auto make_d4 = [](size_t i) { return make_double4(det_value(i, 0, 1), det_value(i + 1, 0, 1), det_value(i + 2, 0, 1), det_value(i + 3, 0, 1)); };
    float4* af4 = device_array<float4>(n4, make_f4);
    float4* bf4 = device_array<float4>(n4, make_f4);
    double4* ad4 = device_array<double4>(n4, make_d4);
    double4* bd4 = device_array<double4>(n4, make_d4);
    float* dotf = device_zeros<float>(n4);
    double* dotd = device_zeros<double>(n4);

    RUN("arrow_sum", (arrow_sum<<<grid, block>>>(pts, yf, n)));
    RUN("arrow_update", (arrow_update<<<grid, block>>>(pts, n)));
    // pair_sums and scratch_reverse have no bounds check: n is a multiple of the block
    RUN("pair_sums<float>", (pair_sums<float><<<grid, block, block * sizeof(float)>>>(xf, yf)));
    RUN("pair_sums<double>", (pair_sums<double><<<grid, block, block * sizeof(double)>>>(xd, yd)));
    RUN("scratch_reverse", (scratch_reverse<<<grid, block, block * sizeof(float)>>>(xf, yf, 2.0f)));
    RUN("dot4<float>", (dot4<float><<<grid4, block>>>(af4, bf4, dotf)));
    RUN("dot4<double>", (dot4<double><<<grid4, block>>>(ad4, bd4, dotd)));
    RUN("advance_bodies", (advance_bodies<<<grid, block>>>(bodies, yf, 0.01f, n)));
    // src.pair(k) reads base[2k] and base[2k + 1]: xd holds 2n doubles
    RUN("gather_pairs<double>", (gather_pairs<<<grid, block>>>(Strided<double>{xd, 2}, yd, n)));
    // T = double, Op = Cube<double>, deduced from the arguments
    RUN("map_op<double, Cube<double>>", (map_op<<<grid, block>>>(xd, yd, Cube<double>(), n)));
    return 0;
}
