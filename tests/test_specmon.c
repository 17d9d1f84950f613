/* napkin: instructor (the student kit leaves it out: its hand derivations are
 * 11.4's and 11.6's answers)
 *
 * The acceptance-rate CUSUM: its increments by hand, its design formulas, and
 * its behaviour on synthetic streams with fixed seeds. */
#include "rng.h"
#include "specmon.h"

#include <criterion/criterion.h>
#include <math.h>

/* Accepted drafts in one round: Bernoulli(alpha) trials until the first
 * failure or gamma successes. */
static int draw_round(rng_state *r, double alpha, int gamma)
{
    int k = 0;
    while (k < gamma && rng_uniform(r) < alpha)
        k++;
    return k;
}

Test(specmon, llr_by_hand)
{
    cusum_design d;
    cr_assert_eq(cusum_design_make(0.8, 0.6, 4, 1e8, &d), 0);
    /* a = 0: one failure: ln(0.4/0.2) = ln 2 = 0.693147 */
    cr_assert_float_eq(cusum_llr(&d, 0), 0.69314718, 1e-8);
    cr_assert_float_eq(cusum_llr_max(&d), 0.69314718, 1e-8);
    /* a = 2: 2 ln(0.6/0.8) + ln 2 = -0.575364 + 0.693147 = 0.117783 */
    cr_assert_float_eq(cusum_llr(&d, 2), 0.11778304, 1e-8);
    /* a = 4 = gamma: four successes, no failure: 4 ln 0.75 = -1.150728 */
    cr_assert_float_eq(cusum_llr(&d, 4), -1.15072829, 1e-8);
}

Test(specmon, design_by_hand)
{
    cusum_design d;
    cr_assert_eq(cusum_design_make(0.8, 0.6, 4, 1e8, &d), 0);
    /* h = ln 1e8 = 8 ln 10 = 18.420681 */
    cr_assert_float_eq(d.threshold, 18.42068074, 1e-7);
    cr_assert_float_eq(cusum_arl0_bound(d.threshold), 1e8, 1e-1);
    /* I1 at alpha 0.6, gamma 4: E[successes] = 0.6 (1 - 0.6^4)/0.4 = 1.3056,
     * P(failure) = 1 - 0.1296 = 0.8704;
     * I1 = 1.3056 ln 0.75 + 0.8704 ln 2 = -0.375598 + 0.603315 = 0.227717 */
    cr_assert_float_eq(cusum_drift(&d, 0.6), 0.227717, 1e-5);
    /* in control (alpha 0.8): E[successes] = 0.8 (1 - 0.4096)/0.2 = 2.3616,
     * P(failure) = 0.5904: 2.3616 ln 0.75 + 0.5904 ln 2 = -0.679395 + 0.409234 = -0.270161 */
    cr_assert_float_eq(cusum_drift(&d, 0.8), -0.270161, 1e-5);
    /* delay bound (h + ln 2) / I1 = 19.113828 / 0.227717 = 83.937 rounds */
    cr_assert_float_eq(cusum_delay_bound(&d, 0.6), 83.937, 2e-2);
    /* no drift towards the alarm in control: no finite delay */
    cr_assert(isinf(cusum_delay_bound(&d, 0.8)));
    /* rates out of order are refused */
    cr_assert_eq(cusum_design_make(0.6, 0.8, 4, 1e8, &d), -1);
    cr_assert_eq(cusum_design_make(0.8, 0.6, 0, 1e8, &d), -1);
    cr_assert_eq(cusum_design_make(0.8, 0.6, 4, 0.5, &d), -1);
}

Test(specmon, steady_stream_of_a_million_rounds_raises_no_alarm)
{
    /* Designed ARL0 1e8 rounds: a false alarm at most once per 1e8 rounds on
     * average, so P(any alarm in 1e6 rounds) <= 1e6/1e8 = 1%; the seed is fixed. */
    cusum_design d;
    cusum_design_make(0.8, 0.6, 4, 1e8, &d);
    cusum_state st;
    cusum_init(&st);
    rng_state r = rng_make(7);
    for (long i = 0; i < 1000000; i++)
        cr_assert_eq(cusum_update(&d, &st, draw_round(&r, 0.8, 4)), 0, "false alarm at round %ld", i + 1);
    cr_assert_eq(st.alarms, 0);
    cr_assert_eq(st.rounds, 1000000);
}

Test(specmon, false_alarm_rate_within_design)
{
    /* A small ARL0 (1000 rounds) to see alarms at all: over 1e6 in-control
     * rounds the count must stay below 1e6/1000 = 1000 plus three Poisson
     * standard deviations (3 sqrt(1000) = 95), since ARL0 >= e^h = 1000. */
    cusum_design d;
    cusum_design_make(0.8, 0.6, 4, 1000.0, &d);
    cusum_state st;
    cusum_init(&st);
    rng_state r = rng_make(11);
    for (long i = 0; i < 1000000; i++)
        cusum_update(&d, &st, draw_round(&r, 0.8, 4));
    cr_assert(st.alarms <= 1095, "%ld alarms", st.alarms);
    /* and the detector is not dead: the same threshold alarms within a
     * thousand rounds once alpha is 0.6 (delay bound (6.908 + 0.693)/0.2277 = 33) */
    long before = st.alarms;
    for (int i = 0; i < 1000; i++)
        cusum_update(&d, &st, draw_round(&r, 0.6, 4));
    cr_assert(st.alarms > before);
}

Test(specmon, drop_from_08_to_06_is_caught_within_the_bound)
{
    /* 1000 regressions, each after 5000 in-control rounds.  Designed ARL0 1e8;
     * the mean delay must not exceed the Wald bound of 83.94 rounds (the
     * statistic at the change is >= 0, which only shortens the wait), and
     * no single regression may take more than three times that. */
    cusum_design d;
    cusum_design_make(0.8, 0.6, 4, 1e8, &d);
    double bound = cusum_delay_bound(&d, 0.6);
    rng_state r = rng_make(12345);
    double total = 0.0;
    long worst = 0;
    const int trials = 1000;
    for (int t = 0; t < trials; t++) {
        cusum_state st;
        cusum_init(&st);
        for (int i = 0; i < 5000; i++)
            cusum_update(&d, &st, draw_round(&r, 0.8, 4));
        cr_assert_eq(st.alarms, 0);
        long delay = 0;
        while (st.alarms == 0) {
            cusum_update(&d, &st, draw_round(&r, 0.6, 4));
            delay++;
        }
        total += delay;
        if (delay > worst)
            worst = delay;
    }
    cr_assert(total / trials <= bound, "mean delay %.1f > bound %.1f", total / trials, bound);
    cr_assert(worst <= 3 * bound, "worst delay %ld", worst);
}

Test(specmon, rejects_impossible_counts)
{
    cusum_design d;
    cusum_design_make(0.8, 0.6, 4, 1e8, &d);
    cusum_state st;
    cusum_init(&st);
    cr_assert_eq(cusum_update(&d, &st, 5), -1);
    cr_assert_eq(cusum_update(&d, &st, -1), -1);
    cr_assert_eq(st.rounds, 0);
}

Test(specmon, metrics_by_hand)
{
    /* 100 rounds of gamma 4: 400 drafted, 250 accepted, 60 rounds ended on a
     * rejection.  alpha MLE = 250 / (250 + 60) = 0.806452;
     * accepted per drafted = 250/400 = 0.625; mean length = 350/100 = 3.5
     * tokens; 350 tokens over 7 user-seconds = 50 tok/s per user;
     * 2 s over 100 steps = 20 ms per step. */
    spec_counters c = {.rounds = 100, .drafted = 400, .accepted = 250, .rejections = 60, .emitted = 350,
                       .busy_seconds = 2.0, .steps = 100, .user_seconds = 7.0};
    spec_metrics m;
    cr_assert_eq(spec_metrics_compute(&c, &m), 0);
    cr_assert_float_eq(m.acceptance_rate, 250.0 / 310.0, 1e-12);
    cr_assert_float_eq(m.accepted_per_drafted, 0.625, 1e-12);
    cr_assert_float_eq(m.mean_accepted_length, 3.5, 1e-12);
    cr_assert_float_eq(m.tokens_per_s_per_user, 50.0, 1e-12);
    cr_assert_float_eq(m.step_time, 0.02, 1e-12);
    /* emitted must be accepted + one per round */
    c.emitted = 250;
    cr_assert_eq(spec_metrics_compute(&c, &m), -1);
    spec_counters empty = {0};
    cr_assert_eq(spec_metrics_compute(&empty, &m), -1);
}

Test(specmon, alpha_mle_by_hand)
{
    /* 2500 accepted, 600 rounds ended on a rejection: 2500/3100 = 0.806452 */
    cr_assert_float_eq(spec_alpha_mle(2500, 600), 2500.0 / 3100.0, 1e-12);
    cr_assert(isnan(spec_alpha_mle(0, 0)));
    cr_assert(isnan(spec_alpha_mle(-1, 3)));
}

Test(specmon, alpha_mle_recovers_the_simulated_rate)
{
    /* 1e5 rounds at alpha 0.7, gamma 4: about 2.2e5 Bernoulli trials, so the
     * MLE's standard error is sqrt(0.7*0.3/2.2e5) = 0.00098; allow 4 of them.
     * accepted/drafted instead estimates E[accepted]/gamma, well below 0.7. */
    rng_state r = rng_make(99);
    long accepted = 0, rejections = 0, drafted = 0;
    for (int i = 0; i < 100000; i++) {
        int a = draw_round(&r, 0.7, 4);
        accepted += a;
        rejections += a < 4;
        drafted += 4;
    }
    cr_assert(fabs(spec_alpha_mle(accepted, rejections) - 0.7) < 4 * 0.00098);
    /* E[accepted] = 0.7 + 0.49 + 0.343 + 0.2401 = 1.7731; / 4 = 0.443275 */
    cr_assert(fabs((double)accepted / drafted - 0.443275) < 0.01);
}
