// Driver for cuda/counting_rules.cu: one launch per counting-rule kernel.
#include "driver_common.cuh"
#include "../cuda/counting_rules.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);
    const unsigned int block = 256, grid = blocks_for(n, block);
    float* a = device_floats(n, 0.1f, 4.0f);
    float* b = device_floats(n, -1.0f, 1.0f);
    float* c = device_zeros<float>(n);
    float* d = device_zeros<float>(n);
    float* w = device_floats(REPS);
    int* mode = device_array<int>(n, [](size_t i) { return (int)(i % 3); });
    double* in = device_doubles(n);
    double* out = device_zeros<double>(n);
    double2* za = device_array<double2>(n / 2, [](size_t i) { return make_double2(det_value(i, -1, 1), det_value(i + 1, -1, 1)); });
    double2* zb = device_array<double2>(n / 2, [](size_t i) { return make_double2(det_value(i + 2, -1, 1), det_value(i + 3, -1, 1)); });
    double2* zc = device_zeros<double2>(n / 2);
    RUN("ldg_deref", (ldg_deref<<<grid, block>>>(a, b, c, n)));
    RUN("fma_chain", (fma_chain<<<grid, block>>>(a, c, n)));
    RUN("piecewise", (piecewise<<<grid, block>>>(b, mode, c, n)));
    RUN("accumulate_in_place", (accumulate_in_place<<<grid, block>>>(a, w, c, d, n)));
    RUN("typedef_scale", (typedef_scale<<<grid, block>>>(in, out, 3.0, n)));
    RUN("complex_mul_dp", (complex_mul_dp<<<blocks_for(n / 2, block), block>>>(za, zb, zc, n / 2)));
    RUN("loop_shapes", (loop_shapes<<<grid, block>>>(a, c, n)));
    RUN("newton_sqrt", (newton_sqrt<<<grid, block>>>(a, c, n)));
    RUN("bounded_scale", (corpus::bounded_scale<<<grid, block>>>(c, 0.5f, n)));
    RUN("c_linkage_sub", (c_linkage_sub<<<grid, block>>>(a, b, c, n)));
    // a sorted table of 1000 steps searched for uniform draws (C15: 500.5 trips each)
    const int steps = 1000;
    float* cdf = device_array<float>(steps, [](size_t k) { return (float)(k + 1) / 1000.0f; });
    float* draws = device_floats(n, 0.0f, 1.0f);
    int* picked = device_zeros<int>(n);
    RUN("sample_cdf", (sample_cdf<<<grid, block>>>(cdf, draws, picked, steps, n)));
    return 0;
}
