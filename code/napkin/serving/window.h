/* The price of a batch window under Poisson arrivals.
 *
 * Requests arrive as a Poisson process of rate lambda.  A batch opens at its
 * first arrival and is dispatched when it holds max_batch requests or when
 * `window` seconds have passed since that first arrival, whichever comes
 * first; the next batch opens at the next arrival.  Dispatch is taken as
 * instant (the server keeps up), so this is the wait the window itself adds.
 *
 * Closed forms (the book's notation), with X ~ Poisson(lambda * W) the
 * arrivals a full window would see after the first and Bmax the maximum size:
 *   batch size  B = 1 + min(X, Bmax-1)          E[B] = 1 + sum_{j=0}^{Bmax-2} P(X > j)
 *   dispatch    D = min(W, time of arrival Bmax) E[D] = (E[B] - 1) / lambda
 *   total wait of a batch's requests             E[A] = sum_{j=0}^{Bmax-2} (j+1) P(X > j) / lambda
 *   mean wait per request (long run)             E[A] / E[B]
 * (The arrival count up to t, given the batch is still open, is the Poisson
 * count conditioned on being below Bmax-1; integrating its tail over [0, W]
 * gives the sums.) */
#ifndef NAPKIN_WINDOW_H
#define NAPKIN_WINDOW_H

#include "rng.h"

#include <stddef.h>

typedef struct {
    double arrival_rate; /* lambda, requests per second, > 0 */
    double window;       /* W, seconds from a batch's first arrival, >= 0 */
    int max_batch;       /* B >= 1 */
} window_params;

typedef struct {
    double mean_batch;  /* E[B], requests per dispatched batch */
    double mean_close;  /* E[D], seconds from first arrival to dispatch */
    double mean_wait;   /* seconds a request waits for dispatch, averaged over requests */
    double full_share;  /* share of batches that fill to B before the window ends */
    double batch_rate;  /* batches per second: 1 / (E[D] + 1/lambda) */
    /* Simulation only (0 in the closed form): quantiles of the per-request wait. */
    double p50_wait, p99_wait;
    long requests, batches; /* simulated counts (0 in the closed form) */
} window_stats;

/* Check the parameters: 0, or -1 with a message. */
int window_params_check(const window_params *p, char *err, size_t errlen);

/* P(X <= k) for X ~ Poisson(mean); 0 for k < 0. */
double poisson_cdf(long k, double mean);

/* The closed forms above.  Returns 0, or -1 with a message. */
int window_expected(const window_params *p, window_stats *out, char *err, size_t errlen);

/* Simulate `batches` batches from the generator's stream.  Returns 0, or -1
 * with a message (bad parameters, batches < 1, out of memory). */
int window_simulate(const window_params *p, long batches, rng_state *r, window_stats *out, char *err,
                    size_t errlen);

#endif
