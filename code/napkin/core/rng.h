/* A small seeded pseudo-random generator: xoshiro256** seeded through
 * splitmix64 (Blackman and Vigna).  The caller owns the state, so two
 * simulations never share a stream and a fixed seed replays exactly.
 *
 * Draws: uniform on [0,1), exponential, normal, lognormal, Poisson, and an
 * unbiased integer below a bound.  Not for cryptography. */
#ifndef NAPKIN_RNG_H
#define NAPKIN_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4]; /* never all zero (rng_seed guarantees it) */
} rng_state;

/* One step of splitmix64: advances *x and returns a well-mixed word. */
uint64_t splitmix64_next(uint64_t *x);

/* Fill the state from a 64-bit seed with splitmix64; any seed, 0 included. */
void rng_seed(rng_state *r, uint64_t seed);
/* A stream for the seed, ready to use: rng_state r = rng_make(42). */
rng_state rng_make(uint64_t seed);
/* Advance by 2^128 draws: call it k times on copies to get k streams that
 * never overlap in any practical run. */
void rng_jump(rng_state *r);

/* The next 64 random bits (xoshiro256**). */
uint64_t rng_next(rng_state *r);
/* Uniform on [0, 1), 53 bits. */
double rng_uniform(rng_state *r);
/* Uniform on (0, 1): safe to take the log of. */
double rng_uniform_open(rng_state *r);
/* Uniform integer in [0, n), without modulo bias; 0 when n is 0. */
uint64_t rng_below(rng_state *r, uint64_t n);
/* Exponential with the given rate (mean 1/rate); rate > 0. */
double rng_exponential(rng_state *r, double rate);
/* Standard normal (Box-Muller; one of the pair is dropped so that the
 * state stays the four words above). */
double rng_normal(rng_state *r);
/* exp(mu + sigma * Z): median exp(mu), mean exp(mu + sigma^2/2). */
double rng_lognormal(rng_state *r, double mu, double sigma);
/* Poisson with the given mean >= 0: multiplication of uniforms below mean
 * 30, Hormann's transformed rejection (PTRS) above. */
long rng_poisson(rng_state *r, double mean);

/* ln(k!) for k >= 0 (exact sums below 17, Stirling's series above, error
 * under 1e-13).  Used instead of lgamma, which writes the global signgam
 * and so is not safe to call from several threads. */
double log_factorial(double k);

#endif
