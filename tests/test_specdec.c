/* Speculative decoding arithmetic: the capped geometric process, Leviathan
 * et al.'s Table 1, and the two verification cost regimes. */
#include "rng.h"
#include "spec_hand.h"
#include "specdec.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- the process */

Test(specdec, distribution_by_hand)
{
    /* alpha 0.5, gamma 2: P(N=1) = 0.5 (first draft rejected), P(N=2) = 0.5*0.5
     * = 0.25, P(N=3) = 0.5^2 = 0.25 (both accepted, plus the bonus token).
     * E = 0.5 + 0.5 + 0.75 = 1.75; E[N^2] = 0.5 + 1 + 2.25 = 3.75;
     * Var = 3.75 - 1.75^2 = 0.6875. */
    cr_assert_float_eq(spec_tokens_pmf(0.5, 2, 1), 0.5, 1e-12);
    cr_assert_float_eq(spec_tokens_pmf(0.5, 2, 2), 0.25, 1e-12);
    cr_assert_float_eq(spec_tokens_pmf(0.5, 2, 3), 0.25, 1e-12);
    cr_assert_float_eq(spec_tokens_pmf(0.5, 2, 4), 0.0, 1e-12);
    cr_assert_float_eq(spec_tokens_pmf(0.5, 2, 0), 0.0, 1e-12);
    cr_assert_float_eq(spec_expected_tokens(0.5, 2), 1.75, 1e-12);
    cr_assert_float_eq(spec_tokens_variance(0.5, 2), 0.6875, 1e-12);
    cr_assert_float_eq(spec_tokens_cdf(0.5, 2, 2), 0.75, 1e-12);
    /* trials: draft 1 always examined, draft 2 when draft 1 passed: 1 + 0.5 */
    cr_assert_float_eq(spec_expected_trials(0.5, 2), 1.5, 1e-12);
}

Test(specdec, bonus_token_counted)
{
    /* alpha 0.8, gamma 4: 1 + .8 + .64 + .512 + .4096 = 3.3616 tokens.
     * Leaving out the bonus token would give 2.3616: the known pitfall. */
    cr_assert_float_eq(spec_expected_tokens(0.8, 4), 3.3616, 1e-12);
    /* edges: nothing accepted gives the target's token alone; everything
     * accepted gives gamma + 1 */
    cr_assert_float_eq(spec_expected_tokens(0.0, 4), 1.0, 1e-12);
    cr_assert_float_eq(spec_expected_tokens(1.0, 4), 5.0, 1e-12);
    cr_assert_float_eq(spec_tokens_variance(1.0, 4), 0.0, 1e-12);
    cr_assert(isnan(spec_expected_tokens(0.5, -1)));
}

Test(specdec, variance_by_hand)
{
    /* alpha 0.8, gamma 4: P = .2, .16, .128, .1024, .4096 for N = 1..5.
     * E[N^2] = .2 + .64 + 1.152 + 1.6384 + 10.24 = 13.8704;
     * Var = 13.8704 - 3.3616^2 = 13.8704 - 11.30035456 = 2.57004544. */
    cr_assert_float_eq(spec_tokens_variance(0.8, 4), 2.57004544, 1e-9);
    double sum = 0.0;
    for (int k = 1; k <= 5; k++)
        sum += spec_tokens_pmf(0.8, 4, k);
    cr_assert_float_eq(sum, 1.0, 1e-12);
}

Test(specdec, simulation_agrees_within_sampling_error)
{
    /* Draw each draft token's acceptance with probability alpha; count tokens
     * until the first rejection or gamma acceptances, plus the target's one.
     * Mean of n rounds has standard error sqrt(Var/n) = sqrt(2.57004544/2e5)
     * = 0.003585; allow 4 standard errors (two-sided 6e-5 chance of a false
     * failure; the seed is fixed, so the outcome is too). */
    rng_state r = rng_make(20230518);
    const int n = 200000, gamma = 4;
    const double alpha = 0.8;
    double sum = 0.0, sumsq = 0.0;
    for (int i = 0; i < n; i++) {
        int tokens = 1;
        for (int j = 0; j < gamma && rng_uniform(&r) < alpha; j++)
            tokens++;
        sum += tokens;
        sumsq += (double)tokens * tokens;
    }
    double mean = sum / n;
    double se = sqrt(2.57004544 / n);
    cr_assert(fabs(mean - spec_expected_tokens(alpha, gamma)) < 4 * se, "mean %f vs %f (se %f)", mean,
              spec_expected_tokens(alpha, gamma), se);
    /* sample variance: its standard error for this bounded variable is about
     * sqrt((mu4 - sigma^4)/n) < 5 * sigma^2 / sqrt(n) = 0.029; allow 0.06 */
    double var = sumsq / n - mean * mean;
    cr_assert(fabs(var - spec_tokens_variance(alpha, gamma)) < 0.06, "variance %f", var);
}

/* ---------------------------------------------------------------- Leviathan Table 1 */

/* Leviathan, Kalman, Matias (2023), "Fast Inference from Transformers via
 * Speculative Decoding", Table 1 (c = 0): walltime improvement and the
 * operations increase, to two decimals, as published. */
static const struct {
    double alpha;
    int gamma;
    double speed, ops;
} leviathan_table1[] = {
    {0.6, 2, 1.96, 1.53}, {0.7, 3, 2.53, 1.58}, {0.8, 2, 2.44, 1.23},
    {0.8, 5, 3.69, 1.63}, {0.9, 2, 2.71, 1.11}, {0.9, 10, 6.86, 1.60},
};

Test(specdec, leviathan_table1_exactly)
{
    for (size_t i = 0; i < sizeof leviathan_table1 / sizeof leviathan_table1[0]; i++) {
        double a = leviathan_table1[i].alpha;
        int g = leviathan_table1[i].gamma;
        /* rounded to the published two decimals, the numbers must be equal */
        long speed = lround(100.0 * spec_walltime_speedup(a, g, 0.0));
        long ops = lround(100.0 * spec_operations_factor(a, g, 0.0));
        cr_assert_eq(speed, lround(100.0 * leviathan_table1[i].speed), "alpha %.1f gamma %d: speed %ld", a, g,
                     speed);
        cr_assert_eq(ops, lround(100.0 * leviathan_table1[i].ops), "alpha %.1f gamma %d: ops %ld", a, g, ops);
    }
}

Test(specdec, walltime_with_draft_cost)
{
    /* alpha 0.8, gamma 4, c 0.05: 3.3616 / (4*0.05 + 1) = 3.3616 / 1.2 = 2.801333 */
    cr_assert_float_eq(spec_walltime_speedup(0.8, 4, 0.05), 2.8013333333, 1e-9);
    /* operations with c_hat = 0.1: (1-0.8)(0.4+5)/(1-0.8^5) = 1.08/0.67232 = 1.606378 */
    cr_assert_float_eq(spec_operations_factor(0.8, 4, 0.1), 1.08 / 0.67232, 1e-9);
}

Test(specdec, best_gamma_by_hand)
{
    /* alpha 0.8, c 0.1: speedup(g) = 5 (1 - 0.8^(g+1)) / (1 + 0.1 g):
     * g=5: 3.68928/1.5 = 2.45952; g=6: 3.951424/1.6 = 2.46964;
     * g=7: 4.1611392/1.7 = 2.44773.  Best is 6. */
    double s;
    cr_assert_eq(spec_best_gamma(0.8, 0.1, 10, &s), 6);
    cr_assert_float_eq(s, 3.951424 / 1.6, 1e-9);
    /* with a free draft the speedup only grows with gamma */
    cr_assert_eq(spec_best_gamma(0.8, 0.0, 10, NULL), 10);
    /* with a poor draft one token is best: alpha 0.5, c 0.3:
     * g=1: 1.5/1.3 = 1.1538; g=2: 1.75/1.6 = 1.0938 */
    cr_assert_eq(spec_best_gamma(0.5, 0.3, 10, NULL), 1);
}

/* ---------------------------------------------------------------- regime (ii) */

static model_spec target, draft1b, draft8b;
static gpu_spec h100;

static void load_specs(void)
{
    target = model_builtin("llama3-70b");
    draft1b = model_builtin("llama3.2-1b");
    draft8b = model_builtin("llama3-8b");
    h100 = gpu_builtin("h100");
}

TestSuite(regime, .init = load_specs);

Test(regime, batch_one_is_memory_bound)
{
    /* At batch 1 a step reads all weights (70.55e9 params * 2 B / 4 GPUs =
     * 35.3 GB per GPU, 10.5 ms at 3.35 TB/s) and does 2*70.55e9*5/4 = 176
     * GFLOP for five tokens (0.18 ms at 989 TFLOP/s): verifying five tokens
     * costs about one step, so regime (ii) is regime (i) within 1%. */
    spec_setup s = spec_setup_default(&target, &draft1b, &h100, 4, 1, 4096);
    spec_estimate e;
    char err[256];
    cr_assert_eq(spec_estimate_compute(&s, 0.8, 4, &e, err, sizeof err), 0, "%s", err);
    cr_assert(e.verify_ratio >= 1.0 && e.verify_ratio < 1.01, "verify ratio %f", e.verify_ratio);
    cr_assert(fabs(e.speedup_roofline / e.speedup_free - 1.0) < 0.01);
    cr_assert_float_eq(e.tokens, 3.3616, 1e-12);
    /* The draft/target cost ratio is the ratio of bytes read, per GPU of 4.
     * LLaMA-3-70B: the weights streamed, (70,553,706,496 - 1,050,673,152 of the
     * embedding, of which one row is gathered) x 2 / 4 = 34.75 GB, KV 2 x 80 layers x
     * (4097 + 1) x 2 KV heads x 128 x 2 B = 0.336 GB, activations 0.027 GB: 35.11 GB,
     * 10.482 ms at 3.35 TB/s.  LLaMA-3.2-1B (tied embeddings: the logits read the
     * table once): 1,235,814,400 x 2 / 4 = 0.618 GB, KV 2 x 16 x 4098 x 2 x 64 x 2 =
     * 0.034 GB, activations 0.0015 GB: 0.195 ms.  c = 0.01860 (spec_hand.h writes the
     * same sums out).  Allow 1%.  That is the pure roofline: the collectives
     * (below) are left out. */
    s.skip_comm = 1;
    cr_assert_eq(spec_estimate_compute(&s, 0.8, 4, &e, err, sizeof err), 0, "%s", err);
    cr_assert(fabs(e.c / 0.01860 - 1.0) < 0.01, "c %f", e.c);
    cr_assert(fabs(e.c / (hand_at(hand_plain(&HAND_1B, 4, 4096, 0), 1) / hand_at(hand_plain(&HAND_70B, 4, 4096, 0), 1)) -
                   1.0) < 0.01);
    /* With them, each model pays 2 all-reduces per layer, one after the embedding and
     * the logits gather, each about the 4.8 us latency (the messages are 4-16 kB):
     * the 1B draft 34 x 4.8 us + 1.3 us of bytes = 0.1645 ms on top of its 0.195 ms,
     * the target 162 x 4.8 us + 9.6 us = 0.787 ms on top of 10.482 ms.  c = 0.3595 /
     * 11.270 = 0.03190; allow 1%.  A small draft at TP 4 pays the same latency per
     * layer as the target. */
    s.skip_comm = 0;
    cr_assert_eq(spec_estimate_compute(&s, 0.8, 4, &e, err, sizeof err), 0, "%s", err);
    cr_assert(fabs(e.c / 0.03190 - 1.0) < 0.01, "c with communication %f", e.c);
}

Test(regime, compute_bound_verification_costs_gamma_plus_one_steps)
{
    /* At batch 4096 with a 1-token context every projection is far past the
     * ridge (4096*5 tokens >> 295 FLOP/B), so verifying 5 tokens per
     * sequence costs close to 5 plain steps: between 4.5 and 5. */
    spec_setup s = spec_setup_default(&target, &draft1b, &h100, 8, 4096, 1);
    spec_estimate e;
    char err[256];
    cr_assert_eq(spec_estimate_compute(&s, 0.8, 4, &e, err, sizeof err), 0, "%s", err);
    cr_assert(e.verify_ratio > 4.5 && e.verify_ratio <= 5.0 + 1e-9, "verify ratio %f", e.verify_ratio);
    /* then the speedup is at most E[N]/(gamma+1)*(5/ratio) < 3.3616/4.5 = 0.747: a loss */
    cr_assert(e.speedup_roofline < 3.3616 / 4.5);
}

Test(regime, given_draft_cost_matches_closed_form_at_batch_one)
{
    /* --c mode: a draft step is c target steps; at batch 1 verification is
     * ~free, so regime (ii) is within 1% of E[N]/(gamma c + 1) = 2.801333 */
    spec_setup s = spec_setup_default(&target, NULL, &h100, 4, 1, 4096);
    s.draft_c = 0.05;
    spec_estimate e;
    char err[256];
    cr_assert_eq(spec_estimate_compute(&s, 0.8, 4, &e, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(e.c, 0.05, 1e-12);
    cr_assert_float_eq(e.speedup_free, 2.8013333333, 1e-9);
    cr_assert(fabs(e.speedup_roofline / 2.8013333333 - 1.0) < 0.01);
}

Test(regime, break_even_alpha_by_hand)
{
    /* gamma 1, c 0.5: (1 + alpha) / 1.5 = 1 at alpha = 0.5 when verification
     * is free; at batch 1 it nearly is (ratio < 1.01), so alpha in [0.5, 0.52). */
    spec_setup s = spec_setup_default(&target, NULL, &h100, 4, 1, 4096);
    s.draft_c = 0.5;
    char err[256];
    double a = spec_break_even_alpha(&s, 1, err, sizeof err);
    cr_assert(a >= 0.5 && a < 0.52, "alpha %f", a);
    /* c 1.0, gamma 1: (1 + alpha)/2 <= 1 for every alpha <= 1: it never wins */
    s.draft_c = 1.0;
    s.batch = 64;
    cr_assert(isnan(spec_break_even_alpha(&s, 1, err, sizeof err)), "no alpha breaks even: NAN");
}

Test(regime, break_even_batch_is_a_crossing)
{
    /* LLaMA-3-70B with a LLaMA-3-8B draft on 4 x H100, 256-token contexts: up to
     * 1233 sequences fit with both resident (test_ch10.c derives the limit), so the
     * search is capped there.  Where the plain steps are memory-bound (B <= 295) and
     * verification's projections compute-bound (5B > 360), E[N] t_plain = 4 t_draft +
     * t_verify is a line in B (tests/spec_hand.h): its root is 84.1 at alpha 0.6 and
     * 112.5 at 0.7.  The search must return the first integer past the root; the
     * hand lines put every op exactly in one regime, which moves the root by well
     * under a batch: allow +-1. */
    spec_setup s = spec_setup_default(&target, &draft8b, &h100, 4, 1, 256);
    char err[256];
    const double alphas[2] = {0.6, 0.7}, roots[2] = {84.1, 112.5};
    for (int i = 0; i < 2; i++) {
        double root = hand_break_even(hand_tokens(alphas[i], 4), 4, hand_plain(&HAND_70B, 4, 256, 1),
                                      hand_plain(&HAND_8B, 4, 256, 1), hand_verify(&HAND_70B, 4, 256, 5, 1));
        cr_assert(fabs(root - roots[i]) < 0.1, "hand root %f", root);
        int b = spec_break_even_batch(&s, alphas[i], 4, 1233, err, sizeof err);
        cr_assert(abs(b - (int)ceil(root)) <= 1, "alpha %.1f: search %d, root %.2f", alphas[i], b, root);
        /* and it is a crossing: below 1 there, not below 1 one batch earlier */
        spec_estimate e;
        s.batch = b;
        cr_assert_eq(spec_estimate_compute(&s, alphas[i], 4, &e, err, sizeof err), 0, "%s", err);
        cr_assert(e.speedup_roofline < 1.0);
        s.batch = b - 1;
        cr_assert_eq(spec_estimate_compute(&s, alphas[i], 4, &e, err, sizeof err), 0, "%s", err);
        cr_assert(e.speedup_roofline >= 1.0);
    }
    /* A free draft (--c 0), pure roofline, alpha 0.8: E[N] t_plain = t_verify, root
     * 218.3 (3.3616 x 34.75 GB / (588.3 + 108.1 - 3.3616 x 48.0) MB of bytes-equivalent
     * per sequence); with the collectives 209.1. */
    spec_setup f = spec_setup_default(&target, NULL, &h100, 4, 1, 256);
    hand_line none = {0, 0};
    for (int comm = 0; comm <= 1; comm++) {
        f.skip_comm = !comm;
        double root = hand_break_even(3.3616, 4, hand_plain(&HAND_70B, 4, 256, comm), none,
                                      hand_verify(&HAND_70B, 4, 256, 5, comm));
        cr_assert(fabs(root - (comm ? 209.1 : 218.3)) < 0.1, "hand root %f", root);
        int b = spec_break_even_batch(&f, 0.8, 4, 1233, err, sizeof err);
        cr_assert(abs(b - (int)ceil(root)) <= 1, "comm %d: search %d, root %.2f", comm, b, root);
    }
    /* a free draft with alpha 0.99 never loses within batch 64 (verification
     * is at most gamma+1 = 5 steps, E[N] = 4.90) */
    f.skip_comm = 0;
    cr_assert_eq(spec_break_even_batch(&f, 0.99, 4, 64, err, sizeof err), 0);
}

Test(regime, bad_input_is_an_error)
{
    spec_setup s = spec_setup_default(&target, &draft1b, &h100, 4, 1, 4096);
    spec_estimate e;
    char err[256] = "";
    cr_assert_eq(spec_estimate_compute(&s, 1.5, 4, &e, err, sizeof err), -1);
    cr_assert(strstr(err, "alpha") != NULL);
    cr_assert_eq(spec_estimate_compute(&s, 0.8, 0, &e, err, sizeof err), -1);
    cr_assert(strstr(err, "gamma") != NULL);
    s.tp = 3; /* 64 heads do not split over 3 GPUs */
    cr_assert_eq(spec_estimate_compute(&s, 0.8, 4, &e, err, sizeof err), -1);
    cr_assert_eq(spec_break_even_batch(&s, 0.8, 4, 16, err, sizeof err), -1);
}

Test(regime, draft_heads_by_hand)
{
    /* LLaMA-3-70B, hidden 8192, vocab 128256.  One head: 8192^2 + 8192 =
     * 67,117,056 parameters; with its own vocabulary projection another
     * 8192 * 128256 = 1,050,673,152.  Four heads: 268,468,224 shared,
     * 4,471,160,832 with their own projections. */
    cr_assert_float_eq(spec_heads_params(&target, 4, 0), 268468224.0, 0.5);
    cr_assert_float_eq(spec_heads_params(&target, 4, 1), 4471160832.0, 0.5);
    /* Batch 1 on 4 x H100: memory-bound, 4,471,160,832 * 2 B / 4 = 2.2356 GB
     * per GPU at 3.35 TB/s = 0.66734 ms. */
    double t = spec_heads_time(&target, &h100, 4, 1, 4, 1, precision_uniform(DT_BF16));
    cr_assert_float_eq(t, 4471160832.0 * 2 / 4 / 3.35e12, 1e-9);
    cr_assert(isnan(spec_heads_time(&target, &h100, 4, 1, 0, 1, precision_uniform(DT_BF16))));
}

/* The acceptance rate a promised speedup needs.  2x at gamma 4, c 0.1 needs
 * E[N] = 2 x 1.4 = 2.8: 1 + a + a^2 + a^3 + a^4 is 2.79946 at a = 0.705 and
 * 2.80423 at 0.706, so the answer lies between.  Gamma 2 with c 0.1 gives at
 * most 3 / 1.2 = 2.5x: 3x is out of reach, and 2.49x needs E[N] = 2.988,
 * 1 + a + a^2 = 2.988016 at a = 0.996 (2.9865 at 0.9955, 2.9910 at 0.997).
 * With nothing accepted a round yields 1 token for 1 + 4 x 0.1 = 1.4 steps:
 * 1 / 1.4 = 0.714x, so a target of 0.7x (a tolerated slowdown) needs alpha 0
 * exactly, and 0.72x a little more than 0. */
Test(specdec, alpha_for_a_promised_speedup)
{
    double a = spec_alpha_for_speedup(2.0, 4, 0.1);
    cr_expect(a > 0.705 && a < 0.706, "alpha %.9f", a);
    cr_expect(fabs((1 + a + a * a + a * a * a + a * a * a * a) / 1.4 - 2.0) < 1e-9, "the speedup at %.12f", a);
    cr_expect(isnan(spec_alpha_for_speedup(3.0, 2, 0.1)), "3x at gamma 2 is out of reach");
    double near_all = spec_alpha_for_speedup(2.49, 2, 0.1);
    cr_expect(near_all > 0.9955 && near_all < 0.997, "2.49x at gamma 2: alpha %.9f", near_all);
    cr_expect_eq(spec_alpha_for_speedup(0.7, 4, 0.1), 0.0, "0.7x is reached at alpha 0");
    double small = spec_alpha_for_speedup(0.72, 4, 0.1);
    cr_expect(small > 0 && small < 0.01, "0.72x at gamma 4: alpha %.9f", small);
}
