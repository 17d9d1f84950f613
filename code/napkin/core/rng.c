#include "rng.h"

#include <math.h>

uint64_t splitmix64_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_seed(rng_state *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64_next(&x);
    /* splitmix64 is a bijection of a counter, so four zero words cannot
     * follow; keep the guard anyway, xoshiro's one forbidden state. */
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
        r->s[0] = 1;
}

rng_state rng_make(uint64_t seed)
{
    rng_state r;
    rng_seed(&r, seed);
    return r;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(rng_state *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void rng_jump(rng_state *r)
{
    static const uint64_t jump[] = {0x180ec6d33cfd0abaULL, 0xd5a61266f0c9392cULL, 0xa9582618e03fc9aaULL,
                                    0x39abdc4529b1661cULL};
    uint64_t acc[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 64; b++) {
            if (jump[i] & (1ULL << b))
                for (int w = 0; w < 4; w++)
                    acc[w] ^= r->s[w];
            rng_next(r);
        }
    for (int w = 0; w < 4; w++)
        r->s[w] = acc[w];
}

double rng_uniform(rng_state *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

double rng_uniform_open(rng_state *r) { return ((double)(rng_next(r) >> 11) + 0.5) * 0x1.0p-53; }

uint64_t rng_below(rng_state *r, uint64_t n)
{
    if (n == 0)
        return 0;
    /* Reject the top sliver that would make some residues more likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= limit);
    return x % n;
}

double rng_exponential(rng_state *r, double rate) { return -log(rng_uniform_open(r)) / rate; }

double rng_normal(rng_state *r)
{
    double u1 = rng_uniform_open(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2) /* 2 pi */;
}

double rng_lognormal(rng_state *r, double mu, double sigma) { return exp(mu + sigma * rng_normal(r)); }

double log_factorial(double k)
{
    if (k < 17) {
        double s = 0;
        for (int i = 2; i <= (int)k; i++)
            s += log((double)i);
        return s;
    }
    double x = k + 1; /* ln k! = ln Gamma(k + 1) */
    double x2 = x * x;
    return (x - 0.5) * log(x) - x + 0.91893853320467274178 /* ln sqrt(2 pi) */ +
           1 / (12 * x) - 1 / (360 * x * x2) + 1 / (1260 * x * x2 * x2);
}

long rng_poisson(rng_state *r, double mean)
{
    if (!(mean > 0))
        return 0;
    if (mean < 30) {
        /* Count uniforms until their product drops below e^-mean. */
        double limit = exp(-mean), prod = rng_uniform_open(r);
        long k = 0;
        while (prod > limit) {
            prod *= rng_uniform_open(r);
            k++;
        }
        return k;
    }
    /* PTRS: W. Hormann, "The transformed rejection method for generating
     * Poisson random variables", Insurance: Mathematics and Economics 12 (1993). */
    double slam = sqrt(mean), loglam = log(mean);
    double b = 0.931 + 2.53 * slam;
    double a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4);
    double vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        double u = rng_uniform(r) - 0.5;
        double v = rng_uniform_open(r);
        double us = 0.5 - fabs(u);
        double k = floor((2 * a / us + b) * u + mean + 0.43);
        if (us >= 0.07 && v <= vr)
            return (long)k;
        if (k < 0 || (us < 0.013 && v > us))
            continue;
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -mean + k * loglam - log_factorial(k))
            return (long)k;
    }
}
