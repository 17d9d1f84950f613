/* The serving queue: closed forms by hand, and the simulation against them.
 * Simulated means are compared over K independent replications (streams
 * split with rng_jump): the tolerance is 5 standard errors of the mean of
 * the K replication means, s / sqrt(K), plus a stated allowance for the
 * start-up bias a finite run keeps after its warm-up. */
#include "queue.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

Test(queue, mm1_by_hand)
{
    /* lambda 0.5, mu 1: rho 0.5; W = 1/(mu - lambda) = 2; L = rho/(1-rho) = 1; Wq = W - 1/mu = 1. */
    queue_formula f;
    cr_assert_eq(mm1_formula(0.5, 1.0, &f), 0);
    cr_expect_float_eq(f.rho, 0.5, 1e-12);
    cr_expect_float_eq(f.time, 2.0, 1e-12);
    cr_expect_float_eq(f.in_system, 1.0, 1e-12);
    cr_expect_float_eq(f.wait, 1.0, 1e-12);
}

Test(queue, md1_by_hand)
{
    /* lambda 0.5, mu 1: Wq = rho/(2 mu (1-rho)) = 0.5/(2*0.5) = 0.5; W = 1.5; L = 0.75.
     * Half the M/M/1 queueing delay, as fixed service has no variance. */
    queue_formula f;
    cr_assert_eq(md1_formula(0.5, 1.0, &f), 0);
    cr_expect_float_eq(f.wait, 0.5, 1e-12);
    cr_expect_float_eq(f.time, 1.5, 1e-12);
    cr_expect_float_eq(f.in_system, 0.75, 1e-12);
    cr_expect_float_eq(f.in_queue, 0.25, 1e-12);
}

Test(queue, mdc_by_hand)
{
    /* c = 2 servers of 1 s, lambda 1: a = 1, rho 0.5.  Erlang B(2, 1) = (1/2) / (1 + 1 + 1/2) = 0.2;
     * Erlang C = B / (1 - rho + rho B) = 0.2 / 0.6 = 1/3; M/M/2 wait = (1/3) / (2 - 1) = 1/3 s;
     * a fixed service halves it: 1/6 s. */
    queue_formula f;
    cr_assert_eq(mdc_formula(1.0, 1.0, 2, &f), 0);
    cr_expect_float_eq(f.rho, 0.5, 1e-12);
    cr_expect_float_eq(f.wait, 1.0 / 6, 1e-12);
    cr_expect_float_eq(f.time, 1.0 + 1.0 / 6, 1e-12);
    /* one server: M/D/1's Pollaczek-Khinchine wait, 0.5 s at lambda 0.5 (md1_by_hand) */
    cr_assert_eq(mdc_formula(0.5, 1.0, 1, &f), 0);
    cr_expect_float_eq(f.wait, 0.5, 1e-12);
    cr_expect_eq(mdc_formula(2.0, 1.0, 2, &f), -1, "rho = 1 saturates");
}

Test(queue, formulas_refuse_saturation)
{
    queue_formula f;
    cr_expect_eq(mm1_formula(1.0, 1.0, &f), -1);
    cr_expect_eq(md1_formula(2.0, 1.0, &f), -1);
    cr_expect_eq(mg1_formula(0.5, 0, 1, &f), -1);
}

Test(queue, capacity_is_the_best_batch)
{
    /* Batch times 1, 1.5, 1.8, 2.0 s: rates 1, 1.333, 1.667, 2 req/s -> 2.
     * A KV cap of 2 leaves batches of at most 2: 2/1.5 = 1.333. */
    double t[] = {1, 1.5, 1.8, 2.0};
    queue_config c = {.arrival_rate = 1, .max_batch = 4, .batch_time = t, .requests = 1};
    cr_expect_float_eq(queue_capacity(&c), 2.0, 1e-12);
    c.kv_cap = 2;
    cr_expect_eq(queue_batch_limit(&c), 2);
    cr_expect_float_eq(queue_capacity(&c), 4.0 / 3, 1e-12);
}

Test(queue, bad_configuration_is_named)
{
    queue_stats s;
    char err[160] = "";
    rng_state r = rng_make(1);
    queue_config c = {.arrival_rate = 1, .max_batch = 2, .batch_time = NULL, .requests = 10};
    cr_expect_eq(queue_simulate(&c, &r, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "batch service times") != NULL, "%s", err);
    double t[] = {1, 0};
    c.batch_time = t;
    cr_expect_eq(queue_simulate(&c, &r, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "batch_time[1]") != NULL, "%s", err);
    c.arrival_rate = -1;
    cr_expect_eq(queue_simulate(&c, &r, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "arrival rate") != NULL, "%s", err);
}

typedef struct {
    double time, wait, in_system, lambda_time;
} rep_means;

/* Mean and standard error over K replications of one configuration. */
static void replicate(const queue_config *c, int k, uint64_t seed, double *mean, double *se, double *little_gap)
{
    rng_state r = rng_make(seed);
    double s1 = 0, s2 = 0, gap = 0;
    for (int i = 0; i < k; i++) {
        queue_stats s;
        char err[160];
        cr_assert_eq(queue_simulate(c, &r, &s, err, sizeof err), 0, "%s", err);
        s1 += s.mean_time;
        s2 += s.mean_time * s.mean_time;
        /* Little's law, L = lambda W, from two different measurements:
         * a time average of the count and a per-request average of times. */
        double g = fabs(s.in_system - c->arrival_rate * s.mean_time) / (c->arrival_rate * s.mean_time);
        gap = g > gap ? g : gap;
        rng_jump(&r);
    }
    *mean = s1 / k;
    *se = sqrt((s2 / k - *mean * *mean) / (k - 1));
    *little_gap = gap;
}

Test(queue, simulation_is_mm1)
{
    /* M/M/1 at rho 0.5: W = 2 s (mm1_by_hand).  20 replications of 20000
     * requests after 2000 of warm-up; start-up bias allowance 1%. */
    double t[] = {1.0};
    queue_config c = {.arrival_rate = 0.5, .max_batch = 1, .batch_time = t, .dist = SERVICE_EXPONENTIAL,
                      .requests = 20000, .warmup = 2000};
    double mean, se, gap;
    replicate(&c, 20, 31, &mean, &se, &gap);
    cr_expect(fabs(mean - 2.0) < 5 * se + 0.02, "W sim %g +- %g vs 2", mean, se);
    cr_expect_lt(se, 0.05, "the replications should pin W to a few percent (se %g)", se);
    cr_expect_lt(gap, 0.05, "Little's law within 5%% in every run (worst %g)", gap);
}

Test(queue, simulation_is_md1)
{
    /* M/D/1 at rho 0.8: Wq = 0.8/(2*0.2) = 2, W = 3 s.  Heavier load, so longer
     * runs: 20 x 40000 after 4000 warm-up; bias allowance 1% (0.03 s). */
    double t[] = {1.0};
    queue_config c = {.arrival_rate = 0.8, .max_batch = 1, .batch_time = t, .dist = SERVICE_FIXED,
                      .requests = 40000, .warmup = 4000};
    double mean, se, gap;
    replicate(&c, 20, 32, &mean, &se, &gap);
    cr_expect(fabs(mean - 3.0) < 5 * se + 0.03, "W sim %g +- %g vs 3", mean, se);
    cr_expect_lt(gap, 0.05, "Little's law (worst %g)", gap);
}

Test(queue, saturated_batches_run_full)
{
    /* Arrivals at 100/s against batches of 8 that take 0.5 s whatever their size:
     * capacity 8/0.5 = 16 req/s, so the queue never empties: every batch is full,
     * the server always busy, and completions come at 16/s. */
    double t[8];
    for (int i = 0; i < 8; i++)
        t[i] = 0.5;
    queue_config c = {.arrival_rate = 100, .max_batch = 8, .batch_time = t, .requests = 20000, .warmup = 100};
    queue_stats s;
    char err[160];
    rng_state r = rng_make(33);
    cr_assert_eq(queue_simulate(&c, &r, &s, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(s.mean_batch, 8, 1e-9);
    cr_expect(fabs(s.utilization - 1) < 0.01, "busy %g", s.utilization);
    cr_expect(fabs(s.throughput - 16) < 0.2, "throughput %g", s.throughput);
    /* A KV cap of 5 sequences: batches of 5, 10 req/s. */
    c.kv_cap = 5;
    cr_assert_eq(queue_simulate(&c, &r, &s, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(s.mean_batch, 5, 1e-9);
    cr_expect(fabs(s.throughput - 10) < 0.2, "throughput %g", s.throughput);
}

Test(queue, window_at_light_load_costs_the_window)
{
    /* lambda 0.01/s, window 1 s, service 0.1 s, batches up to 64: a batch almost
     * always holds one request, which waits the whole window.  With the batch
     * unbounded, N = 1 + Poisson(0.01): per-request wait W(2 + lW)/(2(1 + lW))
     * = 2.01/2.02 = 0.995 s.  Waits lie in [0, 1]: SE <= 0.5/sqrt(20000) =
     * 0.0035, 5 SE = 0.018; a request arriving during a 0.1 s service (p ~ 0.001)
     * shifts the mean by far less. */
    double t[64];
    for (int i = 0; i < 64; i++)
        t[i] = 0.1;
    queue_config c = {.arrival_rate = 0.01, .max_batch = 64, .window = 1.0, .batch_time = t,
                      .requests = 20000, .warmup = 10};
    queue_stats s;
    char err[160];
    rng_state r = rng_make(34);
    cr_assert_eq(queue_simulate(&c, &r, &s, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(s.mean_wait - 0.995) < 0.018, "wait %g", s.mean_wait);
    cr_expect(fabs(s.mean_time - 1.095) < 0.018, "time %g", s.mean_time);
}

Test(queue, window_under_load_dispatches_when_the_batch_fills)
{
    /* lambda 1000/s, batches of up to 4, a 1 s window and a 1 us service:
     * four arrivals come long before the window closes (P(4 gaps > 1 s) is
     * nil) and the server is free, so each batch goes at its fourth arrival
     * and holds four.  The k-th request of a batch (k = 1..4) waits for the
     * 4 - k arrivals after it, each gap 1/lambda on average: mean wait
     * (3 + 2 + 1 + 0) / 4 / 1000 = 1.5 ms, time 1.501 ms.  A batch's summed
     * wait 3 X1 + 2 X2 + X3 has variance 14 / lambda^2, so the per-request
     * mean over N / 4 batches has SE sqrt(3.5 / N) / lambda = 9.4 us at N =
     * 40,000; 5 SE = 47 us.  A trigger one arrival late waits 2.5 ms. */
    double t[4] = {1e-6, 1e-6, 1e-6, 1e-6};
    queue_config c = {.arrival_rate = 1000, .max_batch = 4, .window = 1.0, .batch_time = t,
                      .requests = 40000, .warmup = 100};
    queue_stats s;
    char err[160];
    rng_state r = rng_make(36);
    cr_assert_eq(queue_simulate(&c, &r, &s, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(s.mean_batch, 4, 1e-9);
    cr_expect(fabs(s.mean_wait - 1.5e-3) < 47e-6, "wait %g", s.mean_wait);
    cr_expect(fabs(s.mean_time - 1.501e-3) < 47e-6, "time %g", s.mean_time);
}

Test(queue, same_seed_same_answer)
{
    double t[] = {0.2, 0.3};
    queue_config c = {.arrival_rate = 5, .max_batch = 2, .window = 0.05, .batch_time = t,
                      .dist = SERVICE_EXPONENTIAL, .requests = 5000, .warmup = 100};
    queue_stats a, b;
    char err[160];
    rng_state r1 = rng_make(35), r2 = rng_make(35);
    cr_assert_eq(queue_simulate(&c, &r1, &a, err, sizeof err), 0);
    cr_assert_eq(queue_simulate(&c, &r2, &b, err, sizeof err), 0);
    cr_expect_eq(a.mean_time, b.mean_time);
    cr_expect_eq(a.p99_time, b.p99_time);
}

Test(queue, max_rate_inverts_the_formula)
{
    /* M/D/1 with S = 1 s: W = 1 + rho/(2(1-rho)).  W = 2 needs rho/(2(1-rho)) = 1,
     * rho = 2/3; W = 5 needs 4, rho = 8/9.  M/M/1, S = 1: W = 1/(1-rho) = 2 at rho = 1/2. */
    cr_expect_float_eq(mg1_max_rate(1.0, 0.0, 2.0), 2.0 / 3, 1e-12);
    cr_expect_float_eq(mg1_max_rate(1.0, 0.0, 5.0), 8.0 / 9, 1e-12);
    cr_expect_float_eq(mg1_max_rate(1.0, 1.0, 2.0), 0.5, 1e-12);
    /* S = 0.2 s (mu = 5/s), M/M/1, W = 1 s: 1/(5 - lambda) = 1 -> lambda = 4. */
    cr_expect_float_eq(mg1_max_rate(0.2, 1.0, 1.0), 4.0, 1e-12);
    cr_expect_float_eq(mg1_max_rate(1.0, 0.0, 0.5), 0, 1e-12, "a target below the service time: no load");
    cr_expect_float_eq(mg1_max_rate(-1.0, 0.0, 2.0), -1, 1e-12);
}
