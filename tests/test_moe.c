/* Experts touched by a batch (code/napkin/moe.c): the expected-coverage
 * formula against a seeded simulation of top-k routing, uniform and
 * Zipf-skewed, and against the uniform closed form by hand. */
#include <criterion/criterion.h>

#include <math.h>

#include "moe.h"
#include "specs.h"
#include "transformer.h"

#define E 256
#define K 8

/* Uniform routing: pi = k/E, and the sum is E (1 - (1 - k/E)^T): by hand,
 * T = 1 touches exactly k = 8; T = 16 touches 256 (1 - (31/32)^16) = 256 (1 - 0.60171) = 101.96. */
Test(moe, uniform_matches_the_closed_form)
{
    double pi[E];
    cr_assert_eq(moe_zipf_inclusion(E, K, 0, pi), 0);
    for (int i = 0; i < E; i++)
        cr_expect_eq(pi[i], 8.0 / 256);
    cr_expect(fabs(moe_expected_touched(pi, E, 1) - 8) < 1e-9);
    cr_expect(fabs(moe_expected_touched(pi, E, 16) - 101.96) < 0.01, "%f", moe_expected_touched(pi, E, 16));
    model_spec m = model_builtin("deepseek-v3");
    for (int t = 1; t <= 4096; t *= 4)
        cr_expect(fabs(moe_expected_touched(pi, E, t) - moe_experts_touched(&m, t)) < 1e-9, "T=%d", t);
}

Test(moe, zipf_inclusion_sums_to_k_and_caps_at_one)
{
    double pi[E];
    cr_assert_eq(moe_zipf_inclusion(E, K, 1.2, pi), 0);
    double sum = 0;
    for (int i = 0; i < E; i++) {
        cr_expect(pi[i] > 0 && pi[i] <= 1, "pi[%d] = %g", i, pi[i]);
        sum += pi[i];
    }
    cr_expect(fabs(sum - K) < 1e-9, "sum %g", sum);
    cr_expect_eq(pi[0], 1, "the hottest expert is in every top-8 at s = 1.2");
    cr_expect_eq(moe_zipf_inclusion(E, 0, 1, pi), -1);
    cr_expect_eq(moe_zipf_inclusion(4, 5, 1, pi), -1);
}

/* The simulation draws top-k with exactly the pi, so its mean lies within a
 * few standard errors of the formula, at every batch and both skews. */
Test(moe, formula_matches_a_seeded_simulation)
{
    static const double skews[] = {0, 0.8};
    static const int tokens[] = {1, 4, 32, 256};
    for (int a = 0; a < 2; a++) {
        double pi[E];
        cr_assert_eq(moe_zipf_inclusion(E, K, skews[a], pi), 0);
        for (int b = 0; b < 4; b++) {
            double mean, se;
            cr_assert_eq(moe_simulate_touched(pi, E, K, tokens[b], 1500, 1234 + b, &mean, &se), 0);
            double want = moe_expected_touched(pi, E, tokens[b]);
            cr_expect(fabs(mean - want) <= 4 * se + 1e-9, "s=%g T=%d: simulated %.3f +- %.3f, formula %.3f",
                      skews[a], tokens[b], mean, se, want);
        }
    }
}

/* A skewed router touches fewer experts than a uniform one, so a decode
 * reads fewer bytes; the simulation tells the two apart (this check would
 * fail if the skew did nothing). */
Test(moe, skew_touches_fewer_experts)
{
    double flat[E], skew[E], mean, se;
    moe_zipf_inclusion(E, K, 0, flat);
    moe_zipf_inclusion(E, K, 0.8, skew);
    cr_assert_eq(moe_simulate_touched(skew, E, K, 32, 1500, 99, &mean, &se), 0);
    double uniform = moe_expected_touched(flat, E, 32);
    cr_expect(uniform - mean > 10 * se, "skewed %.2f vs uniform %.2f (se %.3f)", mean, uniform, se);
}

/* Every draw is k distinct experts. */
Test(moe, a_token_routes_to_k_distinct_experts)
{
    double pi[E];
    moe_zipf_inclusion(E, K, 1.2, pi);
    rng_state r = rng_make(7);
    for (int t = 0; t < 1000; t++) {
        int out[K];
        moe_route_token(pi, E, K, &r, out);
        for (int i = 0; i < K; i++) {
            cr_assert(out[i] >= 0 && out[i] < E);
            for (int j = 0; j < i; j++)
                cr_assert_neq(out[i], out[j]);
        }
    }
}
