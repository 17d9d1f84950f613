/* The latency a batch window adds, measured on this machine against the
 * chapter-3 theory (window.h).
 *
 * Poisson arrivals at rate lambda are replayed against a real batcher
 * (max batch 256, so the window, not the size, closes every batch; a no-op
 * handler, so all the latency is the window's and the batcher's own).  A
 * pool of caller threads takes the arrivals in order, sleeps until each
 * arrival time on CLOCK_MONOTONIC and submits.  For each window W and load
 * lambda*W we record the mean, p50 and p99 of submit-to-return, divided by
 * W, next to the theory's numbers.
 *
 * Writes 04-window-measured.tsv (one row per run) and 04-window-theory.tsv
 * (the theory on a fine grid of lambda*W), and values ch04_*. */
#include "batcher.h"
#include "notebook.h"
#include "rng.h"
#include "window.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { CALLERS = 96, MAX_BATCH = 256 };

static int noop(void *ctx, batcher_item *items, size_t n)
{
    (void)ctx;
    (void)items;
    (void)n;
    return BATCHER_HANDLER_OK;
}

typedef struct {
    batcher *b;
    const double *arrival; /* absolute CLOCK_MONOTONIC seconds */
    double *latency;
    long n;
    atomic_long next;
    atomic_long late; /* submitted more than 200 µs after its arrival time */
} replay;

static void *caller(void *arg)
{
    replay *r = arg;
    for (;;) {
        long i = atomic_fetch_add(&r->next, 1);
        if (i >= r->n)
            return NULL;
        struct timespec ts = batcher_timespec(r->arrival[i]);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
        }
        double t0 = batcher_now();
        if (t0 - r->arrival[i] > 200e-6)
            atomic_fetch_add(&r->late, 1);
        long id = i;
        if (batcher_submit(r->b, &id, NULL) != BATCHER_OK) {
            fprintf(stderr, "window_latency: a request failed\n");
            exit(1);
        }
        r->latency[i] = batcher_now() - t0;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double mean, p50, p99, late_share;
    long n;
} measured;

static measured measure(double lambda, double w, long n, rng_state *rng)
{
    batcher_config cfg = {.max_batch = MAX_BATCH, .max_wait = w, .request_size = sizeof(long),
                          .handler = noop};
    char err[128];
    batcher *b = batcher_create(&cfg, err, sizeof err);
    if (!b) {
        fprintf(stderr, "window_latency: %s\n", err);
        exit(1);
    }
    double *arrival = malloc((size_t)n * sizeof *arrival);
    double *lat = malloc((size_t)n * sizeof *lat);
    if (!arrival || !lat) {
        fprintf(stderr, "window_latency: out of memory\n");
        exit(1);
    }
    double t = batcher_now() + 0.020; /* let the callers start first */
    for (long i = 0; i < n; i++) {
        t += rng_exponential(rng, lambda);
        arrival[i] = t;
    }
    replay r = {.b = b, .arrival = arrival, .latency = lat, .n = n};
    atomic_init(&r.next, 0);
    atomic_init(&r.late, 0);
    pthread_t th[CALLERS];
    for (int i = 0; i < CALLERS; i++)
        if (pthread_create(&th[i], NULL, caller, &r) != 0) {
            fprintf(stderr, "window_latency: cannot start a thread\n");
            exit(1);
        }
    for (int i = 0; i < CALLERS; i++)
        pthread_join(th[i], NULL);
    batcher_close(b, BATCHER_DRAIN);
    batcher_destroy(b);
    measured m = {.n = n, .late_share = (double)atomic_load(&r.late) / (double)n};
    for (long i = 0; i < n; i++)
        m.mean += lat[i] / (double)n;
    qsort(lat, (size_t)n, sizeof *lat, cmp_double);
    m.p50 = lat[n / 2];
    m.p99 = lat[(long)(0.99 * (double)n)];
    free(arrival);
    free(lat);
    return m;
}

typedef struct {
    double mean, p50, p99;
} theory;

static theory predict(double lambda, double w, rng_state *rng)
{
    window_params p = {.arrival_rate = lambda, .window = w, .max_batch = MAX_BATCH};
    window_stats ex, sim;
    char err[128];
    if (window_expected(&p, &ex, err, sizeof err) != 0 ||
        window_simulate(&p, 20000, rng, &sim, err, sizeof err) != 0) {
        fprintf(stderr, "window_latency: %s\n", err);
        exit(1);
    }
    return (theory){ex.mean_wait, sim.p50_wait, sim.p99_wait};
}

static void cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v++;
                while (*v == ' ')
                    v++;
                v[strcspn(v, "\n")] = 0;
                snprintf(out, n, "%s", v);
            }
            break;
        }
    }
    fclose(f);
}

int main(void)
{
    rng_state rng = rng_make(4);
    rng_state theory_rng = rng_make(40);
    const double windows[] = {1e-3, 3e-3};
    const double loads[] = {0.5, 2, 8, 32}; /* lambda * W: requests per window */

    FILE *th = nb_data_open("04-window-theory.tsv");
    fprintf(th, "# theory (window.h): mean from the closed form, p50/p99 simulated; B = %d\n", MAX_BATCH);
    fprintf(th, "lambda_w\tmean_over_w\tp50_over_w\tp99_over_w\n");
    for (double k = 0.2; k <= 64.0001; k *= 1.25) {
        theory t = predict(k / 1e-3, 1e-3, &theory_rng); /* depends on lambda*W only */
        fprintf(th, "%.4g\t%.4f\t%.4f\t%.4f\n", k, t.mean / 1e-3, t.p50 / 1e-3, t.p99 / 1e-3);
    }
    fclose(th);

    FILE *out = nb_data_open("04-window-measured.tsv");
    fprintf(out, "# measured on this machine when the book was built: no-op handler, B = %d, %d callers\n",
                 MAX_BATCH, CALLERS);
    fprintf(out, "lambda_w\tw_ms\tlambda\tn\tmean_over_w\tp50_over_w\tp99_over_w\t"
                 "theory_mean_over_w\ttheory_p50_over_w\ttheory_p99_over_w\tlate_share\n");
    printf("%8s %6s %9s %6s | %-17s | %-17s | %-17s\n", "lambda*W", "W ms", "lambda/s", "n",
           "mean/W meas theory", "p50/W meas theory", "p99/W meas theory");
    double worst_excess = 0, worst_late = 0;
    for (size_t wi = 0; wi < sizeof windows / sizeof *windows; wi++) {
        for (size_t li = 0; li < sizeof loads / sizeof *loads; li++) {
            double w = windows[wi], lambda = loads[li] / w;
            long n = (long)fmax(400, lambda * 0.3);
            measured m = measure(lambda, w, n, &rng);
            theory t = predict(lambda, w, &theory_rng);
            fprintf(out, "%g\t%g\t%.1f\t%ld\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\n", loads[li],
                    w * 1e3, lambda, n, m.mean / w, m.p50 / w, m.p99 / w, t.mean / w, t.p50 / w,
                    t.p99 / w, m.late_share);
            printf("%8g %6g %9.0f %6ld | %8.3f %8.3f | %8.3f %8.3f | %8.3f %8.3f\n", loads[li], w * 1e3,
                   lambda, n, m.mean / w, t.mean / w, m.p50 / w, t.p50 / w, m.p99 / w, t.p99 / w);
            double excess = m.mean - t.mean;
            if (excess > worst_excess)
                worst_excess = excess;
            if (m.late_share > worst_late)
                worst_late = m.late_share;
            char name[64], tag[16];
            int wtag = (int)lround(w * 1e3);
            snprintf(tag, sizeof tag, "%g", loads[li]); /* 0.5 -> "0p5" */
            for (char *c = tag; *c; c++)
                if (*c == '.')
                    *c = 'p';
            snprintf(name, sizeof name, "ch04_w%d_k%s_p50_over_w", wtag, tag);
            nb_value(name, "%.2f", m.p50 / w);
            snprintf(name, sizeof name, "ch04_w%d_k%s_p50_theory_over_w", wtag, tag);
            nb_value(name, "%.2f", t.p50 / w);
            snprintf(name, sizeof name, "ch04_w%d_k%s_p99_over_w", wtag, tag);
            nb_value(name, "%.2f", m.p99 / w);
            snprintf(name, sizeof name, "ch04_w%d_k%s_mean_over_w", wtag, tag);
            nb_value(name, "%.2f", m.mean / w);
            snprintf(name, sizeof name, "ch04_w%d_k%s_mean_theory_over_w", wtag, tag);
            nb_value(name, "%.2f", t.mean / w);
            snprintf(name, sizeof name, "ch04_w%d_k%s_lambda", wtag, tag);
            nb_value(name, "%.0f", lambda);
        }
    }
    fclose(out);
    char cpu[200];
    cpu_model(cpu, sizeof cpu);
    nb_value("ch04_cpu_model", "%s", cpu);
    nb_value("ch04_cores", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    nb_value("ch04_callers", "%d", CALLERS);
    nb_value("ch04_max_batch", "%d", MAX_BATCH);
    nb_value("ch04_worst_mean_excess_us", "%.0f", worst_excess * 1e6);
    nb_value("ch04_worst_late_pct", "%.1f", 100 * worst_late);
    return 0;
}
