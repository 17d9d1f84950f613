/* Chapter 4 worked answers.  The decision and the deadline are the
 * batcher's own (batcher.c); the window's price is chapter 3's (window.h).
 * The exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "04-batch-window-in-c.h"

#include "batcher.h"
#include "notebook.h"
#include "window.h"

#include <math.h>
#include <stdio.h>

batcher_decision ex04_decide(size_t queued, double oldest_arrival, double now, size_t max_batch,
                             double max_wait, double *deadline)
{
    return batcher_decide(queued, oldest_arrival, now, max_batch, max_wait, deadline);
}

struct timespec ex04_deadline(double now, double wait)
{
    double t = now + wait;
    if (!isfinite(t) || t < 0)
        return (struct timespec){0, 0};
    return batcher_timespec(t);
}

static long bisect(const int *bad, size_t lo, size_t hi)
{
    int any = 0;
    for (size_t i = lo; i < hi; i++)
        any |= bad[i] != 0;
    if (!any || hi - lo == 1)
        return 1; /* passes, or fails alone: the culprit is found */
    size_t mid = lo + (hi - lo) / 2;
    return 1 + bisect(bad, lo, mid) + bisect(bad, mid, hi);
}

long ex04_bisect_calls(size_t n, const int *bad)
{
    if (n < 1 || !bad)
        return -1;
    return bisect(bad, 0, n);
}

static int window(double lambda, double w, int max_batch, window_stats *s)
{
    window_params p = {.arrival_rate = lambda, .window = w, .max_batch = max_batch};
    char err[128];
    return window_expected(&p, s, err, sizeof err);
}

double ex04_mean_wait(double lambda, double w, int max_batch)
{
    window_stats s;
    return window(lambda, w, max_batch, &s) == 0 ? s.mean_wait : NAN;
}

double ex04_fill_share(double lambda, double w, int max_batch)
{
    window_stats s;
    return window(lambda, w, max_batch, &s) == 0 ? s.full_share : NAN;
}

double ex04_serial_throughput(size_t batch, double overhead, double fixed, double per_item)
{
    if (batch < 1 || !(overhead >= 0) || !(fixed >= 0) || !(per_item >= 0))
        return NAN;
    double t = overhead + fixed + per_item * (double)batch;
    return t > 0 ? (double)batch / t : NAN;
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    /* 1. The decision: B = 8, W = 5 ms; oldest arrived at t = 1.000 s. */
    double dl = 0;
    batcher_decision d = ex04_decide(3, 1.000, 1.002, 8, 0.005, &dl);
    nb_value("ch04_ex_1a_deadline_ms", "%.0f", dl * 1e3);
    nb_value("ch04_ex_1a_sleep_ms", "%.0f", (dl - 1.002) * 1e3);
    nb_value("ch04_ex_1a_is_wait", "%s", d == BATCHER_WAIT ? "wait" : "flush");
    d = ex04_decide(8, 1.000, 1.002, 8, 0.005, &dl);
    nb_value("ch04_ex_1b_decision", "%s", d == BATCHER_FLUSH_FULL ? "flush (full)" : "other");
    d = ex04_decide(3, 1.000, 1.0061, 8, 0.005, &dl);
    nb_value("ch04_ex_1c_decision", "%s", d == BATCHER_FLUSH_EXPIRED ? "flush (expired)" : "other");

    /* 2. The deadline: now 41.9997 s, W = 0.5 ms. */
    struct timespec ts = ex04_deadline(41.9997, 0.0005);
    nb_value("ch04_ex_2_sec", "%lld", (long long)ts.tv_sec);
    nb_value("ch04_ex_2_nsec", "%ld", (long)ts.tv_nsec);
    nb_value("ch04_ex_2_naive_nsec", "%ld", 999700000L + 500000L);

    /* 3. Bisection: one bad request in 64; two bad ones, 0 and 63; 4 in a row. */
    int bad[64] = {0};
    bad[37] = 1;
    nb_value("ch04_ex_3_one_bad_calls", "%ld", ex04_bisect_calls(64, bad));
    nb_value("ch04_ex_3_log2", "%.0f", log2(64));
    int two[64] = {0};
    two[0] = two[63] = 1;
    nb_value("ch04_ex_3_two_apart_calls", "%ld", ex04_bisect_calls(64, two));
    int run[64] = {0};
    run[8] = run[9] = run[10] = run[11] = 1;
    nb_value("ch04_ex_3_four_adjacent_calls", "%ld", ex04_bisect_calls(64, run));
    int all[64];
    for (int i = 0; i < 64; i++)
        all[i] = 1;
    nb_value("ch04_ex_3_all_bad_calls", "%ld", ex04_bisect_calls(64, all));

    /* 4. Mean wait: lambda = 2000/s, W = 2 ms, B = 64, and B = 4. */
    nb_value("ch04_ex_4_lambda_w", "%.0f", 2000 * 0.002);
    nb_value("ch04_ex_4_mean_wait_ms", "%.2f", ex04_mean_wait(2000, 0.002, 64) * 1e3);
    nb_value("ch04_ex_4_mean_wait_b4_ms", "%.2f", ex04_mean_wait(2000, 0.002, 4) * 1e3);

    /* 5. Fill share: lambda = 8000/s, W = 2 ms (16 per window), B = 16 and 32. */
    nb_value("ch04_ex_5_lambda_w", "%.0f", 8000 * 0.002);
    nb_value("ch04_ex_5_fill_b16_pct", "%.0f", 100 * ex04_fill_share(8000, 0.002, 16));
    nb_value("ch04_ex_5_fill_b32_pct", "%.2f", 100 * ex04_fill_share(8000, 0.002, 32));

    /* 6. Serial flusher: 20 µs overhead, 8 ms fixed, 0.1 ms per item. */
    nb_value("ch04_ex_6_tput_b1", "%.0f", ex04_serial_throughput(1, 20e-6, 8e-3, 1e-4));
    nb_value("ch04_ex_6_tput_b32", "%.0f", ex04_serial_throughput(32, 20e-6, 8e-3, 1e-4));
    nb_value("ch04_ex_6_tput_limit", "%.0f", 1 / 1e-4);
    nb_value("ch04_ex_6_overhead_share_b32_pct", "%.2f",
             100 * 20e-6 / (20e-6 + 8e-3 + 32 * 1e-4));
    return 0;
}
#endif
