#include "queue.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

//> pk_formula
int mg1_formula(double lambda, double service, double cs2, queue_formula *out)
{
    queue_formula f = {0};
    *out = f;
    if (!(lambda > 0) || !(service > 0) || !(cs2 >= 0))
        return -1;
    f.rho = lambda * service;
    if (!(f.rho < 1))
        return -1;
    f.wait = f.rho * (1 + cs2) / (2 * (1 - f.rho)) * service; /* Pollaczek-Khinchine */
    f.time = f.wait + service;
    f.in_queue = lambda * f.wait; /* Little */
    f.in_system = lambda * f.time;
    *out = f;
    return 0;
}
//< pk_formula

double mg1_max_rate(double service, double cs2, double target_time)
{
    if (!(service > 0) || !(cs2 >= 0) || !(target_time > 0) || !isfinite(target_time))
        return -1;
    if (target_time <= service)
        return 0;
    double x = (target_time - service) / service; /* allowed queueing delay, in service times */
    return 2 * x / (1 + cs2 + 2 * x) / service;
}

int mm1_formula(double lambda, double mu, queue_formula *out)
{
    return mg1_formula(lambda, mu > 0 ? 1 / mu : 0, 1.0, out);
}

int md1_formula(double lambda, double mu, queue_formula *out)
{
    return mg1_formula(lambda, mu > 0 ? 1 / mu : 0, 0.0, out);
}

//> mdc_formula
int mdc_formula(double lambda, double service, int c, queue_formula *out)
{
    const double a = lambda * service; /* offered load, in servers */
    if (!(lambda > 0) || !(service > 0) || c < 1 || !(a < c))
        return -1;
    /* Erlang C by the recurrence of Erlang B: B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)) */
    double b = 1;
    for (int k = 1; k <= c; k++)
        b = a * b / (k + a * b);
    const double rho = a / c;
    const double p_wait = b / (1 - rho + rho * b);
    queue_formula q = {rho, 0.5 * p_wait * service / (c - a), 0, 0, 0};
    q.time = q.wait + service;
    q.in_queue = lambda * q.wait;
    q.in_system = lambda * q.time;
    *out = q;
    return 0;
}
//< mdc_formula

int queue_batch_limit(const queue_config *c)
{
    return c->kv_cap > 0 && c->kv_cap < c->max_batch ? c->kv_cap : c->max_batch;
}

double queue_capacity(const queue_config *c)
{
    double best = 0;
    for (int n = 1; n <= queue_batch_limit(c); n++)
        if (c->batch_time[n - 1] > 0 && n / c->batch_time[n - 1] > best)
            best = n / c->batch_time[n - 1];
    return best;
}

int queue_config_check(const queue_config *c, char *err, size_t errlen)
{
    if (!(c->arrival_rate > 0) || !isfinite(c->arrival_rate)) {
        snprintf(err, errlen, "arrival rate must be positive (got %g requests/s)", c->arrival_rate);
        return -1;
    }
    if (c->max_batch < 1 || c->kv_cap < 0) {
        snprintf(err, errlen, "max batch must be >= 1 and kv cap >= 0 (got %d, %d)", c->max_batch, c->kv_cap);
        return -1;
    }
    if (!(c->window >= 0) || !isfinite(c->window)) {
        snprintf(err, errlen, "window must be finite and >= 0 seconds (got %g)", c->window);
        return -1;
    }
    if (!c->batch_time) {
        snprintf(err, errlen, "no batch service times given");
        return -1;
    }
    for (int n = 1; n <= queue_batch_limit(c); n++)
        if (!(c->batch_time[n - 1] > 0) || !isfinite(c->batch_time[n - 1])) {
            snprintf(err, errlen, "batch_time[%d] (a batch of %d) must be positive (got %g)", n - 1, n,
                     c->batch_time[n - 1]);
            return -1;
        }
    if (c->dist != SERVICE_FIXED && c->dist != SERVICE_EXPONENTIAL) {
        snprintf(err, errlen, "unknown service distribution %d", (int)c->dist);
        return -1;
    }
    if (c->requests < 1 || c->warmup < 0) {
        snprintf(err, errlen, "need requests >= 1 and warmup >= 0 (got %ld, %ld)", c->requests, c->warmup);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Length of [a, b] inside [lo, hi]. */
static double overlap(double a, double b, double lo, double hi)
{
    double s = a > lo ? a : lo, e = b < hi ? b : hi;
    return e > s ? e - s : 0;
}

//> queue_dispatch
/* When the server, free at t_free, starts its next batch, and how many it
 * takes: the oldest waiting request opens the batch; it goes when `limit`
 * requests are there or the oldest has waited the window, but never before
 * the server is free. */
static double next_dispatch(const double *arrival, long head, long total, int limit,
                            double window, double t_free, int *taken)
{
    double ready = arrival[head] + window;
    if (head + limit - 1 < total && arrival[head + limit - 1] < ready)
        ready = arrival[head + limit - 1]; /* the batch filled first */
    double start = ready > t_free ? ready : t_free;
    int n = 0;
    while (n < limit && head + n < total && arrival[head + n] <= start)
        n++;
    *taken = n;
    return start;
}
//< queue_dispatch

int queue_simulate(const queue_config *c, rng_state *r, queue_stats *out, char *err, size_t errlen)
{
    queue_stats s = {0};
    *out = s;
    if (queue_config_check(c, err, errlen))
        return -1;
    long total = c->warmup + c->requests;
    double *arrival = calloc((size_t)total, sizeof *arrival);
    double *start = malloc((size_t)total * sizeof *start);
    double *done = malloc((size_t)total * sizeof *done);
    double *times = malloc((size_t)c->requests * sizeof *times);
    if (!arrival || !start || !done || !times) {
        free(arrival);
        free(start);
        free(done);
        free(times);
        snprintf(err, errlen, "out of memory for %ld requests", total);
        return -1;
    }
    double t = 0;
    for (long i = 0; i < total; i++) {
        t += rng_exponential(r, c->arrival_rate);
        arrival[i] = t;
    }
    int limit = queue_batch_limit(c);
    double t_free = 0, busy = 0;
    long batches = 0, batched = 0;
    /* Measure over [t0, t1]: the first measured arrival to the last arrival,
     * a span in which every request present is known. */
    double t0 = arrival[c->warmup], t1 = arrival[total - 1];
    for (long head = 0; head < total;) {
        int n;
        double go = next_dispatch(arrival, head, total, limit, c->window, t_free, &n);
        double mean = c->batch_time[n - 1];
        double service = c->dist == SERVICE_EXPONENTIAL ? rng_exponential(r, 1 / mean) : mean;
        for (int k = 0; k < n; k++) {
            start[head + k] = go;
            done[head + k] = go + service;
        }
        busy += overlap(go, go + service, t0, t1);
        if (go >= t0 && go <= t1) { /* batches dispatched in the measured span */
            batches++;
            batched += n;
        }
        t_free = go + service;
        head += n;
    }
    double span = t1 - t0, area_system = 0, area_queue = 0, time_sum = 0, wait_sum = 0;
    long finished_in_span = 0;
    for (long i = 0; i < total; i++) {
        area_system += overlap(arrival[i], done[i], t0, t1);
        area_queue += overlap(arrival[i], start[i], t0, t1);
        finished_in_span += done[i] >= t0 && done[i] <= t1;
        if (i >= c->warmup) {
            times[i - c->warmup] = done[i] - arrival[i];
            time_sum += done[i] - arrival[i];
            wait_sum += start[i] - arrival[i];
        }
    }
    s.completed = c->requests;
    s.mean_time = time_sum / (double)c->requests;
    s.mean_wait = wait_sum / (double)c->requests;
    if (span > 0) {
        s.in_system = area_system / span;
        s.in_queue = area_queue / span;
        s.utilization = busy / span;
        s.throughput = (double)finished_in_span / span;
    }
    s.mean_batch = batches ? (double)batched / (double)batches : 0;
    qsort(times, (size_t)c->requests, sizeof *times, cmp_double);
    long k50 = (long)ceil(0.50 * (double)c->requests) - 1, k99 = (long)ceil(0.99 * (double)c->requests) - 1;
    s.p50_time = times[k50 < 0 ? 0 : k50];
    s.p99_time = times[k99 < 0 ? 0 : k99];
    free(arrival);
    free(start);
    free(done);
    free(times);
    *out = s;
    return 0;
}
