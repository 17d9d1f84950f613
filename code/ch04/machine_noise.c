/* How quiet was the machine that built the book?  A timing figure means
 * little without it.  This program sleeps 1 ms, REPEATS x SLEEPS times, on
 * CLOCK_MONOTONIC (so the build runs it alone, in the timed phase) and
 * records how late each wake-up came: the median and p99 lateness of each
 * repeat, and their spread across repeats.  A quiet machine wakes within tens
 * of microseconds every time; a busy one (a parallel build, other tenants)
 * shows large and unequal p99s.
 *
 * Values: ch04_noise_late_p50_us, ch04_noise_late_p99_us (medians over the
 * repeats), ch04_noise_late_p99_min_us / _max_us (spread of the repeats),
 * ch04_noise_repeats, ch04_noise_sleeps; data: 04-noise.tsv. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "notebook.h"

#define REPEATS 5
#define SLEEPS 200
#define SLEEP_NS 1000000L

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of n sorted values, by the nearest rank. */
static double quantile(const double *sorted, int n, double q)
{
    int i = (int)(q * n + 0.5) - 1;
    if (i < 0)
        i = 0;
    if (i >= n)
        i = n - 1;
    return sorted[i];
}

int main(void)
{
    double p50[REPEATS], p99[REPEATS], late[SLEEPS];
    FILE *data = nb_data_open("04-noise.tsv");
    if (!data)
        return 1;
    fprintf(data, "# 1 ms sleeps on CLOCK_MONOTONIC: lateness of the wake-up per repeat\nrepeat\tp50_us\tp99_us\n");
    for (int r = 0; r < REPEATS; r++) {
        for (int i = 0; i < SLEEPS; i++) {
            struct timespec d = { 0, SLEEP_NS };
            double t0 = now_s();
            nanosleep(&d, NULL);
            late[i] = (now_s() - t0) * 1e6 - SLEEP_NS / 1e3;
        }
        qsort(late, SLEEPS, sizeof late[0], by_value);
        p50[r] = quantile(late, SLEEPS, 0.50);
        p99[r] = quantile(late, SLEEPS, 0.99);
        fprintf(data, "%d\t%.1f\t%.1f\n", r + 1, p50[r], p99[r]);
        printf("repeat %d: wake-up late by p50 %.1f us, p99 %.1f us\n", r + 1, p50[r], p99[r]);
    }
    fclose(data);
    qsort(p50, REPEATS, sizeof p50[0], by_value);
    qsort(p99, REPEATS, sizeof p99[0], by_value);
    nb_value("ch04_noise_repeats", "%d", REPEATS);
    nb_value("ch04_noise_sleeps", "%d", SLEEPS);
    nb_value("ch04_noise_late_p50_us", "%.0f", p50[REPEATS / 2]);
    nb_value("ch04_noise_late_p99_us", "%.0f", p99[REPEATS / 2]);
    nb_value("ch04_noise_late_p99_min_us", "%.0f", p99[0]);
    nb_value("ch04_noise_late_p99_max_us", "%.0f", p99[REPEATS - 1]);
    return 0;
}
