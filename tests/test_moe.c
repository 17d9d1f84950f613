/* Experts touched by a batch (code/napkin/model/moe.c): the expected-coverage
 * formula against a seeded simulation of top-k routing, uniform and
 * Zipf-skewed, and against the uniform closed form by hand. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

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

/* A skewed router in the step cost: Mixtral (8 experts, top 2, ffn 14336,
 * hidden 4096, bf16) decoding 2 sequences under Zipf(1).  Inclusion
 * pi_i = 2 / (i H_8) with H_8 = 1 + 1/2 + ... + 1/8 (each below 1), so two
 * tokens touch sum 1 - (1 - pi_i)^2 = 2 sum pi_i - sum pi_i^2
 * = 4 - 4 S_8 / H_8^2 experts, S_8 = sum 1/i^2 (3.1729 against the uniform
 * 8 (1 - (3/4)^2) = 3.5); down_proj reads that many 14336 x 4096 matrices. */
Test(moe, skewed_routing_in_the_decode_step)
{
    double H = 0, S2 = 0;
    for (int i = 1; i <= 8; i++) {
        H += 1.0 / i;
        S2 += 1.0 / ((double)i * i);
    }
    const double touched = 4 - 4 * S2 / (H * H);
    cr_expect(fabs(touched - 3.1729) < 1e-3, "%f", touched);
    model_spec m = model_builtin("mixtral-8x7b");
    step_shape s = decode_shape(2, 1024, 1, precision_uniform(DT_BF16));
    s.routing_skew = 1;
    cr_expect(fabs(moe_step_experts_touched(&m, &s, 2) - touched) < 1e-12);
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    cr_assert_gt(n, 0);
    const op_cost *down = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(ops[i].name, "routed_experts") == 0)
            down = &ops[i];
    cr_assert(down);
    cr_expect(fabs(down->weight_bytes - touched * 3 * 14336.0 * 4096 * 2) < 1, "%f", down->weight_bytes);
    cr_expect(fabs(down->items - touched) < 1e-12);
    /* uniform: 3.5 experts */
    s.routing_skew = 0;
    cr_expect(fabs(moe_step_experts_touched(&m, &s, 2) - 3.5) < 1e-12);
    s.routing_skew = -1;
    char err[128];
    cr_expect_eq(step_shape_check(&m, &s, err, sizeof err), -1, "a negative skew is refused");
}

/* A skew so large that (i + 1)^-s underflows past the first expert: the
 * limit router always picks the hottest k, so any number of tokens touches
 * exactly k = 8 experts. */
Test(moe, an_extreme_skew_is_the_top_k_limit)
{
    double pi[E];
    cr_assert_eq(moe_zipf_inclusion(E, K, 1e15, pi), 0);
    double sum = 0;
    for (int i = 0; i < E; i++)
        sum += pi[i];
    cr_expect(fabs(sum - K) < 1e-12, "sum %f", sum);
    for (int i = 0; i < K; i++)
        cr_expect_eq(pi[i], 1.0);
    cr_expect(fabs(moe_expected_touched(pi, E, 1000) - K) < 1e-12);
}

Test(moe, gpus_reached_matches_a_hand_count)
{
    /* E = 4 experts on ep = 2 GPUs (experts 0,1 on GPU 0; 2,3 on GPU 1), top-2:
     * the 6 pairs {01} {23} reach one GPU, {02} {03} {12} {13} reach two:
     * (1 + 1 + 4 x 2) / 6 = 10/6 GPUs a token. */
    cr_expect_float_eq(moe_expected_gpus_reached(4, 2, 2), 10.0 / 6, 1e-12);
    /* top-1 always reaches one GPU; top-k with k > E - E/ep reaches every GPU:
     * E = 4, ep = 2, k = 3 cannot avoid either pair. */
    cr_expect_float_eq(moe_expected_gpus_reached(256, 8, 1), 1.0, 1e-12);
    cr_expect_float_eq(moe_expected_gpus_reached(4, 2, 3), 2.0, 1e-12);
    /* E = 6 on ep = 3 (pairs {01} {23} {45}), top-2: of the C(6,2) = 15 pairs,
     * 3 sit on one GPU and 12 span two: (3 + 24) / 15 = 1.8. */
    cr_expect_float_eq(moe_expected_gpus_reached(6, 3, 2), 1.8, 1e-12);
    /* ep = 1: everything on the one GPU */
    cr_expect_float_eq(moe_expected_gpus_reached(256, 1, 8), 1.0, 1e-12);
    cr_expect(isnan(moe_expected_gpus_reached(256, 3, 8)), "3 does not divide 256");
    cr_expect(isnan(moe_expected_gpus_reached(4, 2, 5)), "k above E");
}

Test(moe, gpus_reached_matches_a_seeded_count)
{
    /* DeepSeek-V3's router, 256 experts top-8 on EP 8 (32 a GPU): draw
     * top-8s uniformly over the C(256, 8) sets (a partial Fisher-Yates
     * shuffle; moe_route_token's systematic sampler keeps the marginals but
     * not the joint law, one expert per block of 32) and count GPUs */
    int deck[256];
    rng_state r = rng_make(7);
    double sum = 0;
    const int trials = 20000;
    for (int t = 0; t < trials; t++) {
        for (int i = 0; i < 256; i++)
            deck[i] = i;
        int seen[8] = {0}, d = 0;
        for (int q = 0; q < 8; q++) {
            int j = q + (int)(rng_uniform(&r) * (256 - q));
            int e = deck[j];
            deck[j] = deck[q];
            deck[q] = e;
            if (!seen[e / 32]++)
                d++;
        }
        sum += d;
    }
    /* the mean of 20000 counts in 1..8 with standard deviation under 1: within 0.03 (4 sigma) */
    cr_expect(fabs(sum / trials - moe_expected_gpus_reached(256, 8, 8)) < 0.03, "simulated %g, formula %g",
              sum / trials, moe_expected_gpus_reached(256, 8, 8));
}
