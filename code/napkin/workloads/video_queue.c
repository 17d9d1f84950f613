/* Minute-long jobs in line: Erlang C for M/M/c, the M/D/c approximation, a
 * first-come-first-served c-server simulation, and the two placements of a
 * video service on G GPUs (see video.h). */
#include "video.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double erlang_c(int c, double a)
{
    if (c < 1 || !(a > 0) || a >= c)
        return -1;
    /* sum_{k<c} a^k / k!, and the last term a^c / c!, built up term by term */
    double term = 1.0, sum = 0.0;
    for (int k = 0; k < c; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    double last = term / (1.0 - a / c);
    return last / (sum + last);
}

double mmc_wait(double lambda, double service, int c)
{
    double a = lambda * service;
    double p = erlang_c(c, a);
    return p < 0 ? -1 : p * service / (c - a);
}

//> mdc_approx
double mdc_wait_approx(double lambda, double service, int c)
{
    /* Deterministic service halves the M/M/c wait (Cosmetatos' first term;
     * exact for c = 1 by Pollaczek-Khinchine). */
    double w = mmc_wait(lambda, service, c);
    return w < 0 ? -1 : 0.5 * w;
}
//< mdc_approx

/* The largest term the alternating sum may hold: long double carries 19
 * digits, so terms up to 1e14 leave the sum good to about 1e-6. */
#define MD1_MAX_TERM 1e14L

//> md1_exact
double md1_wait_cdf(double lambda, double service, double t)
{
    double rho = lambda * service;
    if (!(lambda > 0) || !(service > 0) || !(rho < 1) || !(t >= 0) || !isfinite(t))
        return NAN;
    /* Erlang's M/D/1 waiting-time distribution (first come, first served):
     * P(Wq <= t) = (1 - rho) sum_{k=0}^{floor(t/D)} (-x_k)^k / k! e^{x_k},
     * x_k = lambda (t - k D).  The terms alternate and can grow like
     * e^{2 lambda t}; past MD1_MAX_TERM the digits are gone. */
    long double sum = 0, largest = 0;
    for (int k = 0; k * service <= t; k++) {
        long double x = (long double)lambda * ((long double)t - (long double)k * service), term = expl(x);
        for (int i = 1; i <= k; i++)
            term *= -x / i;
        sum += term;
        if (fabsl(term) > largest)
            largest = fabsl(term);
    }
    if (largest > MD1_MAX_TERM)
        return NAN;
    double p = (double)((1 - rho) * sum);
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

double md1_time_quantile(double lambda, double service, double q)
{
    if (!(q > 0 && q < 1) || isnan(md1_wait_cdf(lambda, service, 0)))
        return NAN;
    if (md1_wait_cdf(lambda, service, 0) >= q) /* the job finds the server free */
        return service;
    double lo = 0, hi = service, p;
    while ((p = md1_wait_cdf(lambda, service, hi)) < q) { /* grow the bracket a service at a time: the sum has a range */
        lo = hi;
        hi += service;
    }
    if (isnan(p))
        return NAN;
    for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (md1_wait_cdf(lambda, service, mid) < q)
            lo = mid;
        else
            hi = mid;
    }
    return service + hi; /* time in system = wait + the fixed service */
}
//< md1_exact

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double overlap(double a0, double a1, double b0, double b1)
{
    double lo = fmax(a0, b0), hi = fmin(a1, b1);
    return hi > lo ? hi - lo : 0.0;
}

int mdc_simulate(const mdc_config *c, rng_state *r, mdc_stats *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!(c->lambda > 0) || !(c->service > 0) || c->servers < 1 || c->jobs < 2 || c->warmup < 0) {
        snprintf(err, errlen, "need a positive rate and service time, at least 1 server and 2 jobs");
        return -1;
    }
    if (c->lambda * c->service >= c->servers) {
        snprintf(err, errlen, "utilisation %.3g >= 1: the queue grows without bound",
                 c->lambda * c->service / c->servers);
        return -1;
    }
    long total = c->warmup + c->jobs;
    double *arrive = calloc((size_t)total, sizeof *arrive);
    double *start = calloc((size_t)total, sizeof *start);
    double *finish = calloc((size_t)total, sizeof *finish);
    double *free_at = calloc((size_t)c->servers, sizeof *free_at);
    double *times = malloc((size_t)c->jobs * sizeof *times);
    if (!arrive || !start || !finish || !free_at || !times) {
        free(arrive), free(start), free(finish), free(free_at), free(times);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    //> mdc_sim
    double t = 0;
    for (long i = 0; i < total; i++) {
        t += rng_exponential(r, c->lambda);
        /* first come, first served: the next arrival takes the server that frees first */
        int s = 0;
        for (int k = 1; k < c->servers; k++)
            if (free_at[k] < free_at[s])
                s = k;
        double service = c->dist == MDC_FIXED ? c->service : rng_exponential(r, 1.0 / c->service);
        arrive[i] = t;
        start[i] = fmax(t, free_at[s]);
        finish[i] = start[i] + service;
        free_at[s] = finish[i];
    }
    //< mdc_sim
    double t0 = arrive[c->warmup], t1 = arrive[total - 1], span = t1 - t0;
    double wait = 0, sum_time = 0, present = 0, busy = 0;
    for (long i = 0; i < total; i++) {
        present += overlap(arrive[i], finish[i], t0, t1);
        busy += overlap(start[i], finish[i], t0, t1);
        if (i >= c->warmup) {
            wait += start[i] - arrive[i];
            sum_time += finish[i] - arrive[i];
            times[i - c->warmup] = finish[i] - arrive[i];
        }
    }
    qsort(times, (size_t)c->jobs, sizeof *times, cmp_double);
    out->measured = c->jobs;
    out->mean_wait = wait / c->jobs;
    out->mean_time = sum_time / c->jobs;
    out->p50_time = times[(long)floor(0.50 * (c->jobs - 1))];
    out->p95_time = times[(long)floor(0.95 * (c->jobs - 1))];
    out->in_system = span > 0 ? present / span : 0;
    out->utilization = span > 0 ? busy / (span * c->servers) : 0;
    out->throughput = span > 0 ? (double)(c->jobs - 1) / span : 0;
    free(arrive), free(start), free(finish), free(free_at), free(times);
    return 0;
}

int video_placements(const video_request *r, double jobs_per_hour, long jobs, uint64_t seed, video_placement *out,
                     char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!(jobs_per_hour > 0)) {
        snprintf(err, errlen, "the arrival rate must be positive");
        return -1;
    }
    video_estimate sp, one;
    video_request alone = *r;
    alone.gpus = 1;
    alone.sp_efficiency = 0;
    if (video_estimate_compute(r, &sp, err, errlen) != 0 || video_estimate_compute(&alone, &one, err, errlen) != 0)
        return -1;
    double lambda = jobs_per_hour / 3600.0;
    int G = r->gpus;
    out->service_sp = sp.t_request;
    out->service_independent = one.t_request;
    out->fits_sp = sp.fits;
    out->fits_independent = one.fits;
    out->rho_sp = lambda * sp.t_request;
    out->rho_independent = lambda * one.t_request / G;
    out->stable_sp = out->rho_sp < 1;
    out->stable_independent = out->rho_independent < 1;
    mdc_config c = {lambda, sp.t_request, MDC_FIXED, 1, jobs, jobs / 10};
    rng_state rs = rng_make(seed);
    if (out->stable_sp && mdc_simulate(&c, &rs, &out->sp, err, errlen) != 0)
        return -1;
    out->jobs_sp = out->stable_sp ? jobs : 0;
    /* G servers: as many arrivals as the work limit allows, at most jobs */
    long within = (long)(MDC_WORK_LIMIT / (1.1 * (G > 0 ? G : 1)));
    c.jobs = jobs < within ? jobs : within;
    c.warmup = c.jobs / 10;
    c.service = one.t_request;
    c.servers = G;
    rs = rng_make(seed);
    if (out->stable_independent && (c.jobs < 2 || mdc_simulate(&c, &rs, &out->independent, err, errlen) != 0)) {
        if (c.jobs < 2)
            snprintf(err, errlen, "%d servers exceed the simulation's work limit", G);
        return -1;
    }
    out->jobs_independent = out->stable_independent ? c.jobs : 0;
    return 0;
}
