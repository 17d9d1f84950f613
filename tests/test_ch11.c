/* Chapter 11's argument, checked from the chapter down: the fleet of
 * code/ch11/fleet.c (LLaMA-3-70B on 4 or 8 x H100, bf16, 1024-token contexts,
 * gamma 4, a LLaMA-3.2-1B or LLaMA-3-8B draft time-sliced on the target's
 * GPUs) through the functions the program calls, against the hand
 * derivations of spec_hand.h and memory arithmetic from the GPU row. */
#include "spec_hand.h"
#include "specdec.h"

#include <criterion/criterion.h>
#include <math.h>

static model_spec target, d1, d8;
static gpu_spec h100;

static void load(void)
{
    target = model_builtin("llama3-70b");
    d1 = model_builtin("llama3.2-1b");
    d8 = model_builtin("llama3-8b");
    h100 = gpu_builtin("h100");
}

TestSuite(ch11, .init = load);

static int limit(spec_setup s)
{
    spec_fit f;
    char err[256];
    cr_assert_eq(spec_memory_fit(&s, memory_policy_default(), 4, &f, err, sizeof err), 0, "%s", err);
    return f.max_batch;
}

static int crossing(spec_setup s, double alpha)
{
    char err[256];
    int b = spec_break_even_batch(&s, alpha, 4, limit(s), err, sizeof err);
    cr_assert(b >= 0, "%s", err);
    return b;
}

/* Per GPU, after 90% of the driver's capacity (read from the row) less weights
 * and the target's reserve.  Weights: 70B 70,553,706,496 x 2 / tp; 1B
 * 1,235,814,400 x 2 / tp; 8B 8,030,261,248 x 2 / tp.  Reserve (the target's, the
 * largest): 8192 tokens x (2h + q + 2k + q + 3f) x 2 B plus 2 x 256 x vocab/tp x 4
 * B of sampled fp32 logits and probabilities; at TP 4 (q 2048, k 256, f 7168)
 * 8192 x 42,496 x 2 + 2 x 256 x 32,064 x 4 = 696,254,464 + 65,667,072 B, at TP 8
 * (q 1024, one KV head, f 3584) 8192 x 29,440 x 2 + 2 x 256 x 16,032 x 4 =
 * 482,344,960 + 32,833,536 B.  KV per token per GPU: 70B 81,920 B at
 * TP 4 and 40,960 at TP 8; 1B 8,192 and 4,096; 8B 32,768 and 16,384. */
static double kv_left(int tp, double draft_params)
{
    double reserve = tp == 4 ? 696254464.0 + 65667072.0 : 482344960.0 + 32833536.0;
    return 0.90 * h100.mem_bytes - (70553706496.0 + draft_params) * 2 / tp - reserve;
}

Test(ch11, memory_limits_with_the_draft_resident)
{
    /* 1024 + 4 + 1 tokens of KV a sequence, for both models */
    cr_assert_eq(limit(spec_setup_default(&target, &d1, &h100, 4, 1, 1024)),
                 hand_max_batch(kv_left(4, 1235814400.0), 81920.0 + 8192.0, 1029));
    cr_assert_eq(limit(spec_setup_default(&target, &d8, &h100, 4, 1, 1024)),
                 hand_max_batch(kv_left(4, 8030261248.0), 81920.0 + 32768.0, 1029));
    cr_assert_eq(limit(spec_setup_default(&target, &d1, &h100, 8, 1, 1024)),
                 hand_max_batch(kv_left(8, 1235814400.0), 40960.0 + 4096.0, 1029));
    cr_assert_eq(limit(spec_setup_default(&target, &d8, &h100, 8, 1, 1024)),
                 hand_max_batch(kv_left(8, 8030261248.0), 40960.0 + 16384.0, 1029));
}

Test(ch11, crossings_are_roots_and_lie_inside_memory)
{
    /* Where the plain steps are memory-bound (B <= 295) and verification's
     * projections compute-bound (5B > 360 at TP 4, > 437 at TP 8), the crossing is
     * the root of a line (spec_hand.h); the search must land on the first integer
     * past it, +-1 for the ops the hand model puts exactly in one regime.  These are
     * the crossings that carry the chapter: the 8B draft at alpha 0.9 (root 249.1
     * at TP 4, 218.5 at TP 8) and the 1B at 0.8 (238.2 at TP 4), each inside its
     * memory limit. */
    const struct {
        int tp;
        const model_spec *draft;
        hand_model hand;
        double alpha;
    } cases[] = {
        {4, &d8, HAND_8B, 0.9}, {8, &d8, HAND_8B, 0.9}, {4, &d1, HAND_1B, 0.8}, {4, &d8, HAND_8B, 0.8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double root = hand_break_even(hand_tokens(cases[i].alpha, 4), 4, hand_plain(&HAND_70B, cases[i].tp, 1024, 1),
                                      hand_plain(&cases[i].hand, cases[i].tp, 1024, 1),
                                      hand_verify(&HAND_70B, cases[i].tp, 1024, 5, 1));
        cr_assert(root < 295 && 5 * root > (cases[i].tp == 4 ? 360 : 437), "case %zu: root %f outside the line", i,
                  root);
        spec_setup s = spec_setup_default(&target, cases[i].draft, &h100, cases[i].tp, 1, 1024);
        int got = crossing(s, cases[i].alpha);
        cr_assert(abs(got - (int)ceil(root)) <= 1, "case %zu: search %d, root %.2f", i, got, root);
        cr_assert(got < limit(s), "case %zu: crossing %d past the memory limit %d", i, got, limit(s));
    }
    /* the numbers, as the hand model gives them */
    cr_assert(fabs(hand_break_even(hand_tokens(0.9, 4), 4, hand_plain(&HAND_70B, 4, 1024, 1),
                                   hand_plain(&HAND_8B, 4, 1024, 1), hand_verify(&HAND_70B, 4, 1024, 5, 1)) -
                   249.1) < 0.1);
}

Test(ch11, tensor_parallelism_moves_the_crossing_through_communication)
{
    /* Without the collectives, doubling the GPUs halves weights and FLOPs alike:
     * the roots at TP 4 and TP 8 (8B draft, alpha 0.8) lie within 5% of each other.
     * With them, TP 8 crosses more than 10% earlier: the per-layer latencies do not
     * shrink with the GPU count, and verification carries five tokens of all-reduce
     * bytes a sequence. */
    double r[2][2];
    for (int t = 0; t < 2; t++)
        for (int comm = 0; comm <= 1; comm++) {
            int tp = t == 0 ? 4 : 8;
            r[t][comm] = hand_break_even(hand_tokens(0.8, 4), 4, hand_plain(&HAND_70B, tp, 1024, comm),
                                         hand_plain(&HAND_8B, tp, 1024, comm), hand_verify(&HAND_70B, tp, 1024, 5, comm));
            spec_setup s = spec_setup_default(&target, &d8, &h100, tp, 1, 1024);
            s.skip_comm = !comm;
            int got = crossing(s, 0.8);
            cr_assert(abs(got - (int)ceil(r[t][comm])) <= 1, "tp %d comm %d: search %d, root %.2f", tp, comm, got,
                      r[t][comm]);
        }
    cr_assert(fabs(r[1][0] / r[0][0] - 1) < 0.05, "no comm: %f vs %f", r[0][0], r[1][0]);
    cr_assert(r[1][1] < 0.9 * r[0][1], "with comm: %f vs %f", r[0][1], r[1][1]);
}

Test(ch11, one_configuration_never_loses_within_memory)
{
    /* The 1B draft at alpha 0.9 on 4 GPUs: no crossing up to its memory limit (the
     * limit itself is checked above), and the speedup there is still above 1. */
    spec_setup s = spec_setup_default(&target, &d1, &h100, 4, 1, 1024);
    cr_assert_eq(crossing(s, 0.9), 0);
    s.batch = limit(s);
    spec_estimate e;
    char err[256];
    cr_assert_eq(spec_estimate_compute(&s, 0.9, 4, &e, err, sizeof err), 0, "%s", err);
    cr_assert(e.speedup_roofline > 1.0, "speedup %f", e.speedup_roofline);
}

Test(ch11, the_plain_step_is_memory_bound_where_memory_ends)
{
    /* The step model calls a step compute-bound when its FLOP time exceeds its byte
     * time.  Per sequence at 1024 tokens on TP 4: FLOPs 2 x 17,375,428,608 (the
     * projections, spec_hand.h) + 80 x (2 x 2 x 16 x 128 x 1025 + 5 x 16 x 1025)
     * (attention) + 161 x 4 x 8192 (norms) + 80 x (2 x 8192 + 5 x 7168) (residuals,
     * activation) = 35.4387e9 FLOP, 35.818 us at 989.4 TFLOP/s; bytes 26,834,176
     * (activations) + 84,049,920 (KV) = 110,884,096, 33.100 us at 3.35 TB/s; fixed
     * 34.753e9 B of weights and gains, 10.374 ms.  Compute passes memory at
     * B = 10.374 ms / 2.718 us = 3817: far past every memory limit (< 500 at TP 4). */
    double flop = 2 * 17375428608.0 + 80 * (2 * 2 * 16 * 128 * 1025.0 + 5 * 16 * 1025.0) + 161 * 4 * 8192.0 +
                  80 * (2 * 8192.0 + 5 * 7168.0);
    double bytes = 26834176.0 + 84049920.0, fixed = 2 * 17375428608.0 + 161 * 8192 * 2.0;
    double root = (fixed / HAND_BW) / (flop / HAND_PEAK - bytes / HAND_BW);
    cr_assert(fabs(root - 3817) < 2, "root %f", root);
    char err[256];
    step_cost c;
    step_shape sh = decode_shape((int)ceil(root) - 2, 1024, 4, precision_uniform(DT_BF16));
    cr_assert_eq(decoder_step_cost(&target, &h100, &sh, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.bound, BOUND_MEMORY);
    sh.batch = (int)ceil(root) + 1;
    cr_assert_eq(decoder_step_cost(&target, &h100, &sh, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.bound, BOUND_COMPUTE);
    /* at the largest batch any draft leaves room for at TP 4 (the 1B's), memory-bound */
    sh.batch = limit(spec_setup_default(&target, &d1, &h100, 4, 1, 1024));
    cr_assert(sh.batch < root / 5);
    cr_assert_eq(decoder_step_cost(&target, &h100, &sh, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.bound, BOUND_MEMORY);
}

Test(ch11, the_silent_regression_breaks_even_between_the_two_rates)
{
    /* TP 8, 8B draft, batch 128, 4096-token contexts: plain and draft steps
     * memory-bound (128 <= 295), verification's projections compute-bound (640 >
     * 437).  The acceptance rate at which E[N] = (4 t_draft + t_verify) / t_plain,
     * found by bisection on the written-out E[N]; the library's must agree to 0.005,
     * and lie between 0.6 and 0.8 so that the drift of the chapter crosses it.  The
     * batch fits: 128 < the limit, kv_left / ((40,960 + 16,384) x 4101). */
    double tt = hand_at(hand_plain(&HAND_70B, 8, 4096, 1), 128);
    double tv = hand_at(hand_verify(&HAND_70B, 8, 4096, 5, 1), 128);
    double td = hand_at(hand_plain(&HAND_8B, 8, 4096, 1), 128);
    double need = (4 * td + tv) / tt, lo = 0, hi = 1;
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (hand_tokens(mid, 4) < need)
            lo = mid;
        else
            hi = mid;
    }
    spec_setup s = spec_setup_default(&target, &d8, &h100, 8, 128, 4096);
    cr_assert(128 <= limit(s));
    /* the 8B draft's 8,030,261,248 parameters (test_transformer.c: LLaMA-3-8B) */
    cr_assert_eq(limit(s), hand_max_batch(kv_left(8, 8030261248.0), 40960.0 + 16384.0, 4101));
    char err[256];
    double a = spec_break_even_alpha(&s, 4, err, sizeof err);
    cr_assert(fabs(a - lo) < 0.005, "library %f, hand %f", a, lo);
    cr_assert(a > 0.6 && a < 0.8);
}
