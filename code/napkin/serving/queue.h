/* A serving replica as a queue.
 *
 * Closed forms for one server fed by Poisson arrivals (rate lambda) with
 * service rate mu = 1 / E[S], utilisation rho = lambda / mu < 1:
 *   M/G/1, Pollaczek-Khinchine:  Wq = rho * (1 + cs2) / (2 (1 - rho)) * E[S]
 *     where cs2 = Var[S] / E[S]^2 (1 for exponential service, 0 for fixed)
 *   M/M/1:  W = 1 / (mu - lambda),  L = rho / (1 - rho)
 *   M/D/1:  Wq = rho / (2 mu (1 - rho))
 *   and everywhere W = Wq + E[S], L = lambda W, Lq = lambda Wq (Little).
 *
 * The simulation: a replica that serves requests in batches, run to
 * completion (the whole batch is one service).  When the server is free it
 * dispatches the oldest waiting requests, at most min(max_batch, kv_cap) of
 * them; with a window it first waits until that many are waiting or the
 * oldest has waited `window` seconds.  A batch of n takes batch_time[n-1]
 * seconds (from the step model: prefill plus decode), fixed or exponential
 * with that mean.  With max_batch 1 it is M/D/1 or M/M/1, which is how the
 * tests check it.  Deterministic for a given generator state. */
#ifndef NAPKIN_QUEUE_H
#define NAPKIN_QUEUE_H

#include "rng.h"

#include <stddef.h>

typedef struct {
    double rho;  /* utilisation lambda / mu */
    double wait; /* Wq: arrival to start of service, seconds */
    double time; /* W: arrival to completion */
    double in_queue;  /* Lq */
    double in_system; /* L */
} queue_formula;

/* M/G/1 by Pollaczek-Khinchine: mean service `service` seconds, squared
 * coefficient of variation cs2.  Returns 0, or -1 when rho >= 1 or an input
 * is not positive (cs2 may be 0). */
int mg1_formula(double lambda, double service, double cs2, queue_formula *out);
int mm1_formula(double lambda, double mu, queue_formula *out);
int md1_formula(double lambda, double mu, queue_formula *out);

/* M/D/c: c servers of fixed service `service` seconds each, Poisson
 * arrivals at lambda, rho = lambda service / c < 1.  Erlang C gives the
 * M/M/c wait, P(wait) / (c mu - lambda); a fixed service halves it (the
 * Allen-Cunneen approximation, (ca2 + cs2) / 2 with cs2 = 0; exact at c = 1,
 * where it is M/D/1's Pollaczek-Khinchine wait).  Returns 0, or -1 when
 * rho >= 1 or an input is not positive. */
int mdc_formula(double lambda, double service, int c, queue_formula *out);

/* The inverse: the highest arrival rate at which the M/G/1 mean time in
 * system W stays at or below `target_time`.  Solving W = S + rho (1 + cs2) S /
 * (2 (1 - rho)) for rho gives rho = 2x / (1 + cs2 + 2x), x = (target - S) / S.
 * Returns requests/s, 0 when target_time <= S, or -1 for bad input. */
double mg1_max_rate(double service, double cs2, double target_time);

typedef enum { SERVICE_FIXED, SERVICE_EXPONENTIAL } service_dist;

typedef struct {
    double arrival_rate;      /* lambda, requests per second */
    int max_batch;            /* requests one batch may hold, >= 1 */
    int kv_cap;               /* sequences the KV memory holds at once; 0 = no cap */
    double window;            /* seconds to wait for a fuller batch; 0 = dispatch at once */
    const double *batch_time; /* batch_time[n-1]: seconds to serve a batch of n, n = 1..max_batch */
    service_dist dist;
    long requests; /* requests measured */
    long warmup;   /* requests simulated first and left out of the statistics */
} queue_config;

/* Per-request figures are over the measured requests (after the warm-up);
 * time averages, utilisation and throughput are over the span from the first
 * measured arrival to the last arrival, in which everyone present is known. */
typedef struct {
    double mean_time;  /* W: arrival to completion, seconds */
    double mean_wait;  /* Wq: arrival to dispatch */
    double p50_time, p99_time;
    double in_system;  /* L: time average of requests present (waiting or served) */
    double in_queue;   /* Lq: time average of requests waiting */
    double mean_batch; /* requests per batch dispatched in the measured span */
    double utilization;/* share of time the server is busy */
    double throughput; /* completions per second */
    long completed;    /* requests measured */
} queue_stats;

/* The largest batch a dispatch may hold: min(max_batch, kv_cap). */
int queue_batch_limit(const queue_config *c);
/* Best sustainable rate, requests per second: max over n <= limit of n / batch_time[n-1]. */
double queue_capacity(const queue_config *c);
/* Check a configuration: 0, or -1 with a message. */
int queue_config_check(const queue_config *c, char *err, size_t errlen);
/* Run it.  Returns 0, or -1 with a message (bad configuration, out of memory). */
int queue_simulate(const queue_config *c, rng_state *r, queue_stats *out, char *err, size_t errlen);

#endif
