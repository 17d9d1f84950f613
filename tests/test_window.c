/* The batch window under Poisson arrivals: closed forms by hand, the limits
 * they must reach, and the simulation agreeing with them. */
#include "window.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

Test(window, poisson_cdf_by_hand)
{
    /* Poisson(1): P(0) = e^-1, P(<=1) = 2 e^-1 = 0.735759. */
    cr_expect_float_eq(poisson_cdf(0, 1.0), exp(-1.0), 1e-12);
    cr_expect_float_eq(poisson_cdf(1, 1.0), 2 * exp(-1.0), 1e-12);
    cr_expect_float_eq(poisson_cdf(-1, 1.0), 0, 1e-12);
    /* Mean 2000 (past e^-mean underflow): P(X <= m) ~ 1/2 + 2/(3 sqrt(2 pi m))
     * = 0.5 + 0.00595 = 0.5059 (Ramanujan's expansion of the Poisson median). */
    cr_expect(fabs(poisson_cdf(2000, 2000.0) - 0.506) < 0.002, "cdf %g", poisson_cdf(2000, 2000.0));
}

Test(window, closed_form_by_hand)
{
    /* lambda 10/s, W 0.1 s -> X ~ Poisson(1); B = 3.
     * P(X>0) = 1 - e^-1 = 0.632121, P(X>1) = 1 - 2e^-1 = 0.264241.
     * E[N] = 1 + 0.632121 + 0.264241 = 1.896362.
     * E[T] = (E[N]-1)/lambda = 0.0896362 s.
     * E[S] = (1*0.632121 + 2*0.264241)/10 = 0.1160603 s; per request 0.1160603/1.896362 = 0.0612015 s.
     * Full batches: P(X >= 2) = 0.264241.  Batch rate 1/(0.0896362 + 0.1) = 5.27325/s. */
    window_params p = {10, 0.1, 3};
    window_stats s;
    char err[128];
    cr_assert_eq(window_expected(&p, &s, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(s.mean_batch, 1.896362, 1e-6);
    cr_expect_float_eq(s.mean_close, 0.0896362, 1e-7);
    cr_expect_float_eq(s.mean_wait, 0.0612015, 1e-7);
    cr_expect_float_eq(s.full_share, 0.264241, 1e-6);
    cr_expect_float_eq(s.batch_rate, 5.27325, 1e-4);
}

Test(window, unbounded_batch_limit)
{
    /* B so large it never binds: N = 1 + Poisson(lambda W), so E[N] = 1 + lambda W = 2
     * at lambda 50, W 0.02.  The first request waits W, each other arrives uniformly
     * in the window and waits W/2 on average: total W + lambda W * W/2 = 0.03, per
     * request 0.03/2 = 0.015 s. */
    window_params p = {50, 0.02, 1000};
    window_stats s;
    char err[128];
    cr_assert_eq(window_expected(&p, &s, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(s.mean_batch, 2.0, 1e-9);
    cr_expect_float_eq(s.mean_wait, 0.015, 1e-9);
    cr_expect_float_eq(s.full_share, 0, 1e-9);
}

Test(window, no_window_or_batch_of_one_waits_nothing)
{
    window_stats s;
    char err[128];
    window_params zero_w = {100, 0, 8}, one = {100, 0.5, 1};
    cr_assert_eq(window_expected(&zero_w, &s, err, sizeof err), 0);
    cr_expect_float_eq(s.mean_batch, 1, 1e-12);
    cr_expect_float_eq(s.mean_wait, 0, 1e-12);
    cr_assert_eq(window_expected(&one, &s, err, sizeof err), 0);
    cr_expect_float_eq(s.mean_batch, 1, 1e-12);
    cr_expect_float_eq(s.mean_wait, 0, 1e-12);
    cr_expect_float_eq(s.full_share, 1, 1e-12);
}

Test(window, bad_parameters_are_named)
{
    window_stats s;
    char err[128] = "";
    window_params bad_rate = {0, 0.1, 4}, bad_w = {10, -1, 4}, bad_b = {10, 0.1, 0};
    cr_expect_eq(window_expected(&bad_rate, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "arrival rate") != NULL, "message: %s", err);
    cr_expect_eq(window_expected(&bad_w, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "window") != NULL, "message: %s", err);
    cr_expect_eq(window_expected(&bad_b, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "max batch") != NULL, "message: %s", err);
    rng_state r = rng_make(1);
    window_params ok = {10, 0.1, 4};
    cr_expect_eq(window_simulate(&ok, 0, &r, &s, err, sizeof err), -1);
}

static void agree(double lambda, double w, int b, uint64_t seed)
{
    window_params p = {lambda, w, b};
    window_stats e, s;
    char err[128];
    cr_assert_eq(window_expected(&p, &e, err, sizeof err), 0, "%s", err);
    rng_state r = rng_make(seed);
    const long n = 200000;
    cr_assert_eq(window_simulate(&p, n, &r, &s, err, sizeof err), 0, "%s", err);
    double rn = sqrt((double)n);
    /* Tolerances: 5 standard errors, each bounded from the range of the
     * per-batch quantity (a variable in [a, a+R] has sd <= R/2):
     *  N in [1, B]            -> SE <= (B-1)/(2 sqrt n)
     *  T in [0, W]            -> SE <= W/(2 sqrt n)
     *  wait = sum S / sum N, a ratio: by the delta method its SE is
     *  sd(S - r N)/(E[N] sqrt n), and |S - r N| <= B W (both in [0, B W]),
     *  so SE <= B W/(E[N] sqrt n)
     *  full share, a proportion -> SE <= 0.5/sqrt n. */
    cr_expect(fabs(s.mean_batch - e.mean_batch) < 5 * (b - 1) / (2 * rn), "E[N] sim %g vs %g", s.mean_batch,
              e.mean_batch);
    cr_expect(fabs(s.mean_close - e.mean_close) < 5 * w / (2 * rn), "E[T] sim %g vs %g", s.mean_close,
              e.mean_close);
    cr_expect(fabs(s.mean_wait - e.mean_wait) < 5 * b * w / (e.mean_batch * rn), "wait sim %g vs %g",
              s.mean_wait, e.mean_wait);
    cr_expect(fabs(s.full_share - e.full_share) < 5 * 0.5 / rn, "full sim %g vs %g", s.full_share,
              e.full_share);
    /* Every wait is at most W: the p99 cannot exceed it. */
    cr_expect_leq(s.p99_wait, w + 1e-12);
}

Test(window, simulation_agrees_light_load) { agree(200, 0.01, 4, 21); }      /* lambda W = 2 */
Test(window, simulation_agrees_size_binds) { agree(2000, 0.01, 8, 22); }     /* lambda W = 20 >> B */
Test(window, simulation_agrees_window_binds) { agree(100, 0.005, 64, 23); } /* lambda W = 0.5 */
