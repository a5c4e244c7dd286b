// A long dependent fp32 FMA chain per element: 2048 FMAs between one load and one store.

#define CHAIN_STEPS 2048

void omp_chain(int n, const float* in, float* out, float a, float b)
{
#pragma omp target teams distribute parallel for map(to: in[0:n]) map(from: out[0:n])
    for (int i = 0; i < n; ++i) {
        float v = in[i];
        for (int s = 0; s < CHAIN_STEPS; ++s)
            v = v * a + b;
        out[i] = v;
    }
}
