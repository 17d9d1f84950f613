/* Random inputs by position: element i of a buffer seeded s is a pure
 * function of (s, i), so a GPU fills a gigabyte in parallel and the host
 * recomputes any element it wants to check.  The mixing is splitmix64's
 * finaliser (the same constants as rng.c's splitmix64_next).
 * Header-only, for C and CUDA alike. */
#ifndef NAPKIN_COUNTER_RNG_H
#define NAPKIN_COUNTER_RNG_H

#include <stdint.h>

#if defined(__CUDACC__)
#define NB_CRNG_FN __host__ __device__
#else
#define NB_CRNG_FN
#endif

static inline NB_CRNG_FN uint64_t counter_hash(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi) from 24 random bits (exact in a float). */
static inline NB_CRNG_FN float counter_uniform(uint64_t seed, uint64_t i, float lo, float hi)
{
    float u = (float)(counter_hash(seed, i) >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

#endif
