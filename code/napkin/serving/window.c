#include "window.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int window_params_check(const window_params *p, char *err, size_t errlen)
{
    if (!(p->arrival_rate > 0) || !isfinite(p->arrival_rate)) {
        snprintf(err, errlen, "arrival rate must be a positive number of requests per second (got %g)",
                 p->arrival_rate);
        return -1;
    }
    if (!(p->window >= 0) || !isfinite(p->window)) {
        snprintf(err, errlen, "window must be a finite number of seconds >= 0 (got %g)", p->window);
        return -1;
    }
    if (p->max_batch < 1) {
        snprintf(err, errlen, "max batch must be at least 1 (got %d)", p->max_batch);
        return -1;
    }
    return 0;
}

static double poisson_pmf(long j, double mean)
{
    if (mean <= 0)
        return j == 0 ? 1.0 : 0.0;
    /* In logs: e^-mean underflows for a mean past ~745. */
    return exp(-mean + (double)j * log(mean) - log_factorial((double)j));
}

double poisson_cdf(long k, double mean)
{
    double s = 0;
    for (long j = 0; j <= k; j++)
        s += poisson_pmf(j, mean);
    return s > 1 ? 1 : s;
}

//> window_expected
int window_expected(const window_params *p, window_stats *out, char *err, size_t errlen)
{
    window_stats s = {0};
    *out = s;
    if (window_params_check(p, err, errlen))
        return -1;
    double mean = p->arrival_rate * p->window; /* arrivals a full window would see */
    double cdf = 0, tail_sum = 0, weighted_tail_sum = 0;
    for (long j = 0; j <= p->max_batch - 2; j++) {
        cdf += poisson_pmf(j, mean);
        double tail = cdf < 1 ? 1 - cdf : 0; /* P(X > j) */
        tail_sum += tail;                    /* E[min(X, B-1)] */
        weighted_tail_sum += (j + 1) * tail; /* lambda * E[total wait] */
    }
    s.mean_batch = 1 + tail_sum;
    s.mean_close = tail_sum / p->arrival_rate;
    s.mean_wait = weighted_tail_sum / p->arrival_rate / s.mean_batch;
    s.full_share = p->max_batch == 1 ? 1.0 : 1 - poisson_cdf(p->max_batch - 2, mean);
    s.batch_rate = 1 / (s.mean_close + 1 / p->arrival_rate);
    *out = s;
    return 0;
}
//< window_expected

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank quantile of sorted values. */
static double quantile_sorted(const double *v, long n, double q)
{
    if (n <= 0)
        return 0;
    long k = (long)ceil(q * (double)n) - 1;
    if (k < 0)
        k = 0;
    if (k >= n)
        k = n - 1;
    return v[k];
}

//> window_simulate
int window_simulate(const window_params *p, long batches, rng_state *r, window_stats *out,
                    char *err, size_t errlen)
{
    window_stats s = {0};
    *out = s;
    if (window_params_check(p, err, errlen))
        return -1;
    if (batches < 1) {
        snprintf(err, errlen, "simulate at least one batch (got %ld)", batches);
        return -1;
    }
    double *arrived = malloc((size_t)p->max_batch * sizeof *arrived);
    double *waits = malloc((size_t)batches * (size_t)p->max_batch * sizeof *waits);
    if (!arrived || !waits) {
        free(arrived);
        free(waits);
        snprintf(err, errlen, "out of memory for %ld batches of up to %d", batches,
                 p->max_batch);
        return -1;
    }
    double lambda = p->arrival_rate, next = rng_exponential(r, lambda);
    double close_sum = 0, wait_sum = 0, time_end = 0;
    long requests = 0, full = 0;
    for (long b = 0; b < batches; b++) {
        int n = 0;
        arrived[n++] = next; /* the batch opens at its first arrival */
        double deadline = next + p->window;
        next += rng_exponential(r, lambda);
        while (n < p->max_batch && next <= deadline) {
            arrived[n++] = next;
            next += rng_exponential(r, lambda);
        }
        double close = n == p->max_batch ? arrived[n - 1] : deadline;
        full += n == p->max_batch;
        close_sum += close - arrived[0];
        for (int i = 0; i < n; i++) {
            waits[requests + i] = close - arrived[i];
            wait_sum += close - arrived[i];
        }
        requests += n;
        time_end = close;
    }
    /* Arrivals after the last close belong to the next batch: the process
     * restarts there, so the cycles above are whole. */
    s.batches = batches;
    s.requests = requests;
    s.mean_batch = (double)requests / (double)batches;
    s.mean_close = close_sum / (double)batches;
    s.mean_wait = wait_sum / (double)requests;
    s.full_share = (double)full / (double)batches;
    s.batch_rate = (double)batches / time_end;
    qsort(waits, (size_t)requests, sizeof *waits, cmp_double);
    s.p50_wait = quantile_sorted(waits, requests, 0.50);
    s.p99_wait = quantile_sorted(waits, requests, 0.99);
    free(arrived);
    free(waits);
    *out = s;
    return 0;
}
//< window_simulate
