// Integer hashing: ROUNDS rounds of a multiply-xorshift mixer (the shape of MurmurHash3's
// 32-bit finaliser) per key; integer work only.
#include <stdint.h>

#define ROUNDS 128

void omp_hash(int n, const uint32_t* keys, uint32_t* out)
{
#pragma omp target teams distribute parallel for map(to: keys[0:n]) map(from: out[0:n])
    for (int i = 0; i < n; ++i) {
        uint32_t h = keys[i];
        for (int r = 0; r < ROUNDS; ++r) {
            h ^= h >> 16;
            h *= 0x85ebca6bu;
            h ^= h >> 13;
            h *= 0xc2b2ae35u;
            h ^= h >> 16;
        }
        out[i] = h;
    }
}
