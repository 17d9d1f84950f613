/* Chapter 4 exercises: each expected number is derived by hand below (the
 * window's two triggers, timespec arithmetic, the recursion of bisection,
 * the Poisson distribution), never from the library's output. */
#include "04-batch-window-in-c.h"

#include <criterion/criterion.h>
#include <math.h>

/* |got - want| <= tol; false for NAN, so an untouched kit fails. */
#define assert_near(got, want, tol)                                                                \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        cr_assert(fabs(g_ - w_) <= (tol), "got %.9g, want %.9g (tol. %g)", g_, w_, (double)(tol)); \
    } while (0)

Test(ex04, decide_by_hand)
{
    double dl = -1;
    /* B = 8, W = 5 ms, oldest at 1.000 s. */
    /* 3 queued at 1.002: neither full nor 5 ms old -> wait until 1.005. */
    cr_assert_eq(ex04_decide(3, 1.000, 1.002, 8, 0.005, &dl), BATCHER_WAIT);
    assert_near(dl, 1.005, 1e-12);
    /* 8 queued: full, at any time. */
    cr_expect_eq(ex04_decide(8, 1.000, 1.002, 8, 0.005, &dl), BATCHER_FLUSH_FULL);
    /* 9 queued (more than B) is full too. */
    cr_expect_eq(ex04_decide(9, 1.000, 1.000, 8, 0.005, &dl), BATCHER_FLUSH_FULL);
    /* at 1.0061 the oldest has waited 6.1 ms > 5 ms: expired. */
    cr_expect_eq(ex04_decide(3, 1.000, 1.0061, 8, 0.005, &dl), BATCHER_FLUSH_EXPIRED);
    /* empty: idle, whatever the clock. */
    cr_expect_eq(ex04_decide(0, 0, 9.0, 8, 0.005, &dl), BATCHER_IDLE);
}

Test(ex04, deadline_carries)
{
    /* 41.9997 + 0.0005 = 42.0002 s -> 42 s + 200,000 ns (not 41 s + 1,000,200,000 ns). */
    struct timespec ts = ex04_deadline(41.9997, 0.0005);
    cr_expect_eq(ts.tv_sec, 42);
    cr_expect(labs(ts.tv_nsec - 200000L) <= 1, "tv_nsec %ld", (long)ts.tv_nsec);
    /* 3.25 + 0.5 = 3.75 -> 3 s + 750,000,000 ns. */
    ts = ex04_deadline(3.25, 0.5);
    cr_expect_eq(ts.tv_sec, 3);
    cr_expect(labs(ts.tv_nsec - 750000000L) <= 1, "tv_nsec %ld", (long)ts.tv_nsec);
}

Test(ex04, bisection_counts)
{
    int bad[64] = {0};
    bad[37] = 1;
    /* One bad in 64: the failed call on 64, then per level (32, 16, 8, 4, 2, 1)
     * a failing and a passing half: 1 + 2*6 = 13. */
    cr_expect_eq(ex04_bisect_calls(64, bad), 13);
    int none[8] = {0};
    /* nothing bad: the one call passes. */
    cr_expect_eq(ex04_bisect_calls(8, none), 1);
    int all[4] = {1, 1, 1, 1};
    /* all 4 bad: every node of the tree over 4 leaves is called: 1 + 2 + 4 = 7. */
    cr_expect_eq(ex04_bisect_calls(4, all), 7);
    int odd[3] = {0, 0, 1};
    /* 3 -> [1] passes, [2] fails -> [1] passes, [1] fails: 1 + 1 + 1 + 2 = 5. */
    cr_expect_eq(ex04_bisect_calls(3, odd), 5);
}

Test(ex04, mean_wait_and_fill_by_hand)
{
    /* B = 2, lambda = 1000/s, W = 1 ms, mean m = lambda*W = 1.  A batch is
     * the opener plus at most one follower.  P(follower) = 1 - e^-1.
     * The opener waits min(W, T1) with T1 ~ Exp(lambda): E = (1 - e^-1)/lambda;
     * the follower closes the batch and waits 0.
     * E[N] = 1 + (1 - e^-1); mean wait = E[min(W,T1)] / E[N]. */
    double p = 1 - exp(-1.0);
    double want = (p / 1000.0) / (1 + p);
    assert_near(ex04_mean_wait(1000, 0.001, 2), want, 1e-9);
    /* Fill share for B = 2: P(at least one follower within W) = 1 - e^-1. */
    assert_near(ex04_fill_share(1000, 0.001, 2), p, 1e-9);
    /* No cap that matters (B = 1000, m = 4): the opener waits W, the 4
     * followers on average W/2 each: (W + 4 W/2) / 5 = 0.6 W = 1.2 ms at W = 2 ms. */
    assert_near(ex04_mean_wait(2000, 0.002, 1000), 0.0012, 1e-9);
}

Test(ex04, serial_throughput_by_hand)
{
    /* 32 / (20 µs + 8 ms + 32 * 0.1 ms) = 32 / 11.22 ms = 2852.05/s */
    assert_near(ex04_serial_throughput(32, 20e-6, 8e-3, 1e-4), 32 / 0.01122, 1e-6);
    /* batch 1: 1 / 8.12 ms = 123.15/s */
    assert_near(ex04_serial_throughput(1, 20e-6, 8e-3, 1e-4), 1 / 0.00812, 1e-6);
    cr_expect(isnan(ex04_serial_throughput(0, 0, 1, 1)), "batch 0 is not a batch");
}
