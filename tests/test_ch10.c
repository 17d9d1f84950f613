/* Chapter 10's argument, checked from the chapter down: the configuration of
 * code/ch10/regimes.c (LLaMA-3-70B on 4 x H100, bf16, a LLaMA-3-8B draft
 * time-sliced on the same GPUs, alpha 0.8, gamma 4) through the functions the
 * program calls, against the hand derivations of spec_hand.h and memory
 * arithmetic from the GPU row's capacity. */
#include "spec_hand.h"
#include "specdec.h"

#include <criterion/criterion.h>
#include <math.h>

static model_spec target, draft;
static gpu_spec h100;

static void load(void)
{
    target = model_builtin("llama3-70b");
    draft = model_builtin("llama3-8b");
    h100 = gpu_builtin("h100");
}

TestSuite(ch10, .init = load);

static spec_setup pair(int batch, int context, int comm)
{
    spec_setup s = spec_setup_default(&target, &draft, &h100, 4, batch, context);
    s.skip_comm = !comm;
    return s;
}

static spec_estimate run(spec_setup s)
{
    spec_estimate e;
    char err[256];
    cr_assert_eq(spec_estimate_compute(&s, 0.8, 4, &e, err, sizeof err), 0, "%s", err);
    return e;
}

static int limit(spec_setup s)
{
    spec_fit f;
    char err[256];
    cr_assert_eq(spec_memory_fit(&s, memory_policy_default(), 4, &f, err, sizeof err), 0, "%s", err);
    return f.max_batch;
}

#define assert_rel(got, want, tol)                                                                         \
    cr_assert(fabs((got) / (want) - 1.0) < (tol), "got %.6g, want %.6g (%.1f%%)", (double)(got), (double)(want), \
              100.0 * (tol))

/* Bytes left for KV on one GPU: 90% of the driver-reported capacity (read from the
 * row, so the test follows a corrected table) less both models' weights and the
 * reserve.  Weights: 70,553,706,496 x 2 / 4 = 35,276,853,248 B and 8,030,261,248 x 2
 * / 4 = 4,015,130,624 B.  Reserve (the larger of the two, the target's): 8192
 * tokens x (2 x 8192 + 2048 + 2 x 2 x 128 + 2048 + 3 x 7168) x 2 B = 696,254,464 B,
 * plus fp32 logits and probabilities for 256 sampled tokens, 2 x 256 x 32,064 x 4 =
 * 65,667,072 B.  KV per token per GPU: 80 x 2 x 2 x 128 x 2 = 81,920 B (target) +
 * 32 x 2 x 2 x 128 x 2 = 32,768 B (draft). */
static double kv_left(int with_draft)
{
    return 0.90 * h100.mem_bytes - 35276853248.0 - (with_draft ? 4015130624.0 : 0) - 696254464.0 -
           65667072.0;
}
#define KV_PAIR (81920.0 + 32768.0)

Test(ch10, the_pair_fits_and_memory_ends_far_past_the_crossing)
{
    /* 256-token contexts: each sequence holds 256 + 4 + 1 tokens of KV */
    int want = hand_max_batch(kv_left(1), KV_PAIR, 256 + 5);
    cr_assert_eq(limit(pair(256, 256, 1)), want);
    cr_assert(want >= 256, "the busy batch must fit: limit %d", want);
    /* the crossing (checked below) lies well inside it */
    char err[256];
    spec_setup s = pair(1, 256, 1);
    int even = spec_break_even_batch(&s, 0.8, 4, want, err, sizeof err);
    cr_assert(even > 0 && 5 * even < want, "crossing %d, limit %d", even, want);
}

Test(ch10, draft_cost_at_batch_one)
{
    /* Batch 1, 256 tokens: every op memory-bound.  Target 10.39 ms of reads plus
     * 162 x 4.8 us of collectives; 8B draft 1.124 ms plus 66 x 4.8 us.  c = 0.129 with
     * the collectives, 0.108 without.  Allow 1%. */
    for (int comm = 0; comm <= 1; comm++) {
        double tt = hand_at(hand_plain(&HAND_70B, 4, 256, comm), 1);
        double td = hand_at(hand_plain(&HAND_8B, 4, 256, comm), 1);
        spec_estimate e = run(pair(1, 256, comm));
        assert_rel(e.t_target, tt, 0.01);
        assert_rel(e.t_draft, td, 0.01);
        assert_rel(e.c, td / tt, 0.01);
        /* regime (i): E[N] / (1 + 4c) with E[N] = 3.3616 */
        assert_rel(e.speedup_free, 3.3616 / (1 + 4 * td / tt), 0.01);
    }
    /* the two numbers the chapter quotes, as hand arithmetic: 11.18 ms and 1.444 ms */
    assert_rel(hand_at(hand_plain(&HAND_70B, 4, 256, 1), 1), 11.18e-3, 0.005);
    assert_rel(hand_at(hand_plain(&HAND_8B, 4, 256, 1), 1), 1.444e-3, 0.005);
}

Test(ch10, the_win_becomes_a_loss_at_batch_256)
{
    /* Batch 256: the plain step is memory-bound (256 < 295), 17.29 ms with the
     * collectives (10.37 ms of weights, 3.67 of activations and KV, 3.25 of
     * collectives); verification of 5 x 256 = 1280 tokens is compute-bound in its
     * projections, 2 x 17.375e9 x 1280 / 989.4e12 = 44.96 ms, plus 8.26 ms of other
     * reads and 13.1 ms of collectives: 66.35 ms.  The 8B draft step 3.18 ms.
     * Regime (ii): 3.3616 x 17.29 / (4 x 3.18 + 66.35) = 0.735.  Allow 1%. */
    for (int comm = 0; comm <= 1; comm++) {
        double tt = hand_at(hand_plain(&HAND_70B, 4, 256, comm), 256);
        double tv = hand_at(hand_verify(&HAND_70B, 4, 256, 5, comm), 256);
        double td = hand_at(hand_plain(&HAND_8B, 4, 256, comm), 256);
        spec_estimate e = run(pair(256, 256, comm));
        assert_rel(e.t_target, tt, 0.01);
        assert_rel(e.t_verify, tv, 0.01);
        assert_rel(e.t_draft, td, 0.01);
        double loss = 3.3616 * tt / (4 * td + tv);
        assert_rel(e.speedup_roofline, loss, 0.01);
        cr_assert(loss < 0.8 && e.speedup_roofline < 1.0, "a loss: %f", e.speedup_roofline);
        /* while regime (i) still promises a win */
        cr_assert(e.speedup_free > 1.9);
    }
    assert_rel(hand_at(hand_plain(&HAND_70B, 4, 256, 1), 256), 17.29e-3, 0.005);
    assert_rel(hand_at(hand_verify(&HAND_70B, 4, 256, 5, 1), 256), 66.35e-3, 0.005);
}

Test(ch10, break_even_batch_is_the_root_of_the_round_cost)
{
    /* Between batch 80 and 295 the plain steps are memory-bound and verification's
     * projections compute-bound, so E[N] t_plain(B) = 4 t_draft(B) + t_verify(B) is
     * linear in B: with the collectives B* = 30.96 ms / 202.8 us = 152.7, without
     * them 30.39 ms / 176.4 us = 172.2.  The search must return the first integer
     * batch past the root; the neglected terms (every op exactly in its regime) move
     * the root by well under one batch, so allow +-1. */
    char err[256];
    for (int comm = 0; comm <= 1; comm++) {
        double root = hand_break_even(hand_tokens(0.8, 4), 4, hand_plain(&HAND_70B, 4, 256, comm),
                                      hand_plain(&HAND_8B, 4, 256, comm), hand_verify(&HAND_70B, 4, 256, 5, comm));
        cr_assert(root > 80 && root < 295, "root %f outside the linear range", root);
        spec_setup s = pair(1, 256, comm);
        int got = spec_break_even_batch(&s, 0.8, 4, limit(s), err, sizeof err);
        cr_assert(abs(got - (int)ceil(root)) <= 1, "comm %d: search %d, root %.2f", comm, got, root);
    }
    /* the two roots as numbers */
    cr_assert(fabs(hand_break_even(3.3616, 4, hand_plain(&HAND_70B, 4, 256, 1), hand_plain(&HAND_8B, 4, 256, 1),
                                   hand_verify(&HAND_70B, 4, 256, 5, 1)) - 152.7) < 0.5);
    cr_assert(fabs(hand_break_even(3.3616, 4, hand_plain(&HAND_70B, 4, 256, 0), hand_plain(&HAND_8B, 4, 256, 0),
                                   hand_verify(&HAND_70B, 4, 256, 5, 0)) - 172.2) < 0.5);
}

Test(ch10, long_contexts_never_lose_within_memory)
{
    /* 4096-token contexts: the limit is (kv_left) / (114,688 x 4101), 78 with the
     * capacity the table carries; the target alone holds kv_left / (81,920 x 4101). */
    int want = hand_max_batch(kv_left(1), KV_PAIR, 4096 + 5);
    spec_setup s = pair(1, 4096, 1);
    cr_assert_eq(limit(s), want);
    {
        resident_model rm = {&target, precision_uniform(DT_BF16), 4};
        fit_check f;
        char err[256];
        cr_assert_eq(memory_fit(&h100, memory_policy_default(), &rm, 1, 0, 1, 4096, &f, err, sizeof err), 0);
        cr_assert_eq(f.max_batch, hand_max_batch(kv_left(0), 81920.0, 4096));
    }
    /* At the limit verification has 5 x 78 = 390 tokens, past the 360 at which
     * every projection is compute-bound at TP 4: plain 20.34 ms, verification 28.08 ms, draft 4.90 ms; speedup 3.3616 x 20.34 /
     * (4 x 4.90 + 28.08) = 1.43.  Allow 2%. */
    double tt = hand_at(hand_plain(&HAND_70B, 4, 4096, 1), want);
    double tv = hand_at(hand_verify(&HAND_70B, 4, 4096, 5, 1), want);
    double td = hand_at(hand_plain(&HAND_8B, 4, 4096, 1), want);
    s.batch = want;
    spec_estimate e = run(s);
    assert_rel(e.speedup_roofline, 3.3616 * tt / (4 * td + tv), 0.02);
    cr_assert(e.speedup_roofline > 1.3);
    /* and no loss anywhere inside memory */
    char err[256];
    cr_assert_eq(spec_break_even_batch(&s, 0.8, 4, want, err, sizeof err), 0);
    /* the crossing the step model alone would find lies past the limit: the root of
     * the same line, 236 by the hand model */
    double root = hand_break_even(3.3616, 4, hand_plain(&HAND_70B, 4, 4096, 1), hand_plain(&HAND_8B, 4, 4096, 1),
                                  hand_verify(&HAND_70B, 4, 4096, 5, 1));
    cr_assert(root > 2 * want, "root %f, limit %d", root, want);
    int beyond = spec_break_even_batch(&s, 0.8, 4, 1 << 20, err, sizeof err);
    cr_assert(abs(beyond - (int)ceil(root)) <= 1, "search %d, root %.2f", beyond, root);
}

Test(ch10, a_batch_that_does_not_fit_is_refused)
{
    /* 256 sequences of 4096 tokens need 256 x 4101 x 114,688 = 120.4e9 B of KV per
     * GPU, more than a whole H100: spec_memory_fit says so */
    spec_fit f;
    char err[256];
    spec_setup s = pair(256, 4096, 1);
    cr_assert(256.0 * 4101 * KV_PAIR > h100.mem_bytes);
    cr_assert_eq(spec_memory_fit(&s, memory_policy_default(), 4, &f, err, sizeof err), 0);
    cr_assert(!f.fits);
}
