/* napkin serve --simulate: an event-level replay of the closed-loop
 * benchmark of closed_loop.h, step by step, over the same priced step costs:
 * the client keeps C requests in flight and sends N; the engine admits at
 * iteration boundaries, fills each step's token budget with one token of
 * every decoding request and then prompt tokens first come first served
 * (chunking a prompt that does not fit), and a request leaves after its
 * last output token, which sends the next.  Each request's TTFT (from the
 * moment it is sent, or made ready with departure_wait) and TPOT are recorded; the first
 * `warmup` requests are left out of the statistics. */
#ifndef NAPKIN_SIMULATE_H
#define NAPKIN_SIMULATE_H

#include "closed_loop.h"

#include <stddef.h>
#include <stdint.h>

/* What keeps a benchmark's requests apart (serve --simulate's default): with
 * every request alike they lock into cohorts, because the cohort prefilled
 * in one long step finishes in one short decode step and returns together;
 * outputs that differ by 10 % (the lengths a tokeniser gives, or stop
 * tokens) and overheads that vary (HTTP, tokenisation) spread them within a
 * round, and the steady state is the one closed_loop.h prices. */
#define SIM_SPREAD 0.1

typedef struct {
    bench_setup bench;
    step_costs costs;
    int warmup;      /* requests left out of the statistics, in the order sent */
    int jitter;      /* 1: each request's overhead is exponential with mean h (seeded); 0: exactly h */
    uint64_t seed;
    double spread;   /* each request's output length uniform in O (1 -+ spread), mean O; 0: exactly O */
} sim_setup;

typedef struct {
    double mean, p50, p90, p99;
} sim_stats;

/* One request as replayed; times in seconds from the start. */
typedef struct {
    double ready, sent, arrived, first, last;
    int output; /* its output length */
} sim_request;

typedef struct {
    sim_stats ttft, tpot;
    int measured;       /* requests in the statistics */
    int steps;          /* engine iterations */
    double makespan;    /* when the last request finished */
    sim_request *requests; /* N of them when the caller asked (sim_run's keep), else NULL */
} sim_result;

/* Replay the benchmark.  keep: 1 to return every request (free with
 * sim_result_free).  Returns 0, or -1 with a message for a bad setup. */
int sim_run(const sim_setup *s, int keep, sim_result *out, char *err, size_t errlen);
void sim_result_free(sim_result *r);

/* mean, p50, p90, p99 of x[0..n) (linear between order statistics); x is
 * sorted in place.  Zeros for n = 0. */
void sim_stats_of(double *x, int n, sim_stats *s);

#endif
