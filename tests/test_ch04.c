/* Chapter 4's theory line, checked through the functions its program calls
 * (window_latency: window_expected for the mean, window_simulate for the
 * quantiles).  With a batch limit that never binds (256 against a few dozen
 * arrivals a window), a batch's first request waits the whole window W and
 * the lambda W = k others arrive uniformly in it, so by hand:
 *   mean wait / W = (1 + k/2) / (1 + k) = (2 + k) / (2 (1 + k));
 *   P(wait <= x) = k/(1 + k) * x/W below W, then 1: the median is
 *   W (1 + k) / (2k) when that is below W (k > 1), else W itself. */
#include <criterion/criterion.h>
#include <math.h>

#include "window.h"

static window_stats expect(double k)
{
    window_params p = {k / 1e-3, 1e-3, 256};
    window_stats s;
    char err[128];
    cr_assert_eq(window_expected(&p, &s, err, sizeof err), 0, "%s", err);
    return s;
}

Test(ch04, mean_wait_over_the_window)
{
    const double ks[] = {0.5, 2, 8, 32};
    for (int i = 0; i < 4; i++) {
        double k = ks[i], want = (2 + k) / (2 * (1 + k));
        window_stats s = expect(k);
        cr_assert(fabs(s.mean_wait / 1e-3 - want) < 1e-9, "k %g: mean/W %.9g, hand %.9g", k, s.mean_wait / 1e-3,
                  want);
    }
    /* k = 0.5: 2.5 / 3 = 0.8333; k = 32: 34 / 66 = 0.5152, tending to a half */
    cr_assert(fabs(expect(0.5).mean_wait / 1e-3 - 0.833333) < 1e-6);
}

Test(ch04, median_wait_from_simulation)
{
    /* k = 8: median W * 9 / 16 = 0.5625 W; k = 32: W * 33 / 64 = 0.5156 W;
     * k = 0.5: the first-arrival atom holds 1/1.5 = 2/3 of the requests, so
     * the median is W.  20,000 batches give 180,000 waits at k = 8; the
     * sample median's standard error is about 0.5 / sqrt(180000) / (8/9) =
     * 0.0013 W, so 0.01 W is over seven of them. */
    const double ks[] = {0.5, 8, 32}, want[] = {1.0, 9.0 / 16, 33.0 / 64};
    rng_state r = rng_make(40);
    for (int i = 0; i < 3; i++) {
        window_params p = {ks[i] / 1e-3, 1e-3, 256};
        window_stats s;
        char err[128];
        cr_assert_eq(window_simulate(&p, 20000, &r, &s, err, sizeof err), 0, "%s", err);
        cr_assert(fabs(s.p50_wait / 1e-3 - want[i]) < 0.01, "k %g: p50/W %.4f, hand %.4f", ks[i],
                  s.p50_wait / 1e-3, want[i]);
        /* the first request of a batch waits the whole window: p99 is W */
        cr_assert(fabs(s.p99_wait / 1e-3 - 1) < 0.01, "k %g: p99/W %.4f", ks[i], s.p99_wait / 1e-3);
    }
}
