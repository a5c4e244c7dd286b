// Driver for cuda/hash_kernels.cu: integer hashing, Hamming distances, Collatz step counts.
#include "driver_common.cuh"
#include "../cuda/hash_kernels.cu"

int main(int argc, char** argv)
{
    parse_size(argc, argv);
    const int n = pick(1 << 18, 1 << 26);
    const unsigned int block = 256;
    unsigned int* keys = device_array<unsigned int>(n, [](size_t i) { return (unsigned int)(i * 2654435761u); });
    unsigned int* out = device_zeros<unsigned int>(n);
    RUN("hash_keys", (hash_keys<<<blocks_for(n, block), block>>>(keys, out, 0x9e3779b9u, n)));

    const int words = 32, rows = n / words;  // same bytes as keys, split in rows of 32 words
    unsigned int* other = device_array<unsigned int>(n, [](size_t i) { return (unsigned int)(i * 40503u + 7u); });
    RUN("hamming_distance", (hamming_distance<<<blocks_for(rows, block), block>>>(keys, other, out, words, rows)));

    // start values in [1, 100000]: the loop ends (no 0), and takes at most a few hundred steps
    unsigned int* start = device_array<unsigned int>(n, [](size_t i) { return (unsigned int)(1 + (i * 7919u) % 100000u); });
    int* steps = device_zeros<int>(n);
    RUN("collatz_steps", (collatz_steps<<<blocks_for(n, block), block>>>(start, steps, n)));
    return 0;
}
