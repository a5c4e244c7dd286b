// Shared host-side helpers for the corpus drivers (our own code): argument parsing, checked
// allocation with deterministic initial values, launch geometry.
//
// Every driver takes one argument, the problem size:
//   small  working set of a few MB: fits in the L2 of every GPU in gpu_specs (>= 4 MB)
//   large  working set of hundreds of MB to a few GB: far beyond any L2 (<= 96 MB)
// and launches each kernel of its source file once at that size.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// Launch, then wait and check, so a failing kernel is reported by name.
#define RUN(name, launch)                                                                  \
    do {                                                                                   \
        launch;                                                                            \
        CHECK(cudaGetLastError());                                                         \
        CHECK(cudaDeviceSynchronize());                                                    \
        std::printf("ran %s\n", name);                                                     \
    } while (0)

static bool g_large = false;

// Parses argv[1] ("small" | "large"); exits with a usage line otherwise.
static inline void parse_size(int argc, char** argv)
{
    if (argc == 2 && std::strcmp(argv[1], "small") == 0) { g_large = false; return; }
    if (argc == 2 && std::strcmp(argv[1], "large") == 0) { g_large = true; return; }
    std::fprintf(stderr, "usage: %s small|large\n", argv[0]);
    std::exit(2);
}

template <typename T> static inline T pick(T small, T large) { return g_large ? large : small; }

// Deterministic values in [lo, hi) (a 32-bit LCG; no libc rand state).
static inline float det_value(size_t i, float lo, float hi)
{
    unsigned int h = static_cast<unsigned int>(i) * 1664525u + 1013904223u;
    h ^= h >> 13;
    return lo + (hi - lo) * (h & 0xffffffu) / 16777216.0f;
}

// Device array of n elements, each made by `make(i)` on the host and copied over.
template <typename T, typename F> static T* device_array(size_t n, F make)
{
    std::vector<T> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = make(i);
    T* dev = nullptr;
    CHECK(cudaMalloc(&dev, n * sizeof(T)));
    CHECK(cudaMemcpy(dev, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    return dev;
}

template <typename T> static T* device_zeros(size_t n)
{
    T* dev = nullptr;
    CHECK(cudaMalloc(&dev, n * sizeof(T)));
    CHECK(cudaMemset(dev, 0, n * sizeof(T)));
    return dev;
}

static inline float* device_floats(size_t n, float lo = 0.0f, float hi = 1.0f)
{
    return device_array<float>(n, [=](size_t i) { return det_value(i, lo, hi); });
}

static inline double* device_doubles(size_t n, double lo = 0.0, double hi = 1.0)
{
    return device_array<double>(n, [=](size_t i) { return (double)det_value(i, (float)lo, (float)hi); });
}

static inline unsigned int blocks_for(size_t n, unsigned int block)
{
    return static_cast<unsigned int>((n + block - 1) / block);
}
