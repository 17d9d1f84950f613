/* Chapter 11's exercise variants: 11.1 (the launch review), 11.2 (the
 * draft's rent), 11.3 (choosing a threshold), 11.4
 * (reading the increments), 11.5 (how fast does it notice? the same
 * detector at 11.3's rates) and 11.6 (two acceptance rates).  The printed
 * numbers are seed 0; other seeds draw from the lists below: false-alarm
 * rates a fleet would ask for, a drop from a strong to a weaker draft (the
 * increments kept clear of 0, so that a relative tolerance means
 * something), and counters a server could have written (every round
 * without a rejection accepted all gamma drafts); in 11.1 an acceptance
 * rate and context at which batch 128 fits, gamma = 4 loses before memory
 * ends and gamma = 2 does not; in 11.2 a batch and
 * context at which the larger draft still fits beside the target, and in
 * 11.7 predictions on either side of the switch's band. */
#include "practice_chapters.h"
#include "practice_set.h"

#include "memory.h"
#include "practice_draw.h"
#include "rollout.h"
#include "specdec.h"
#include "specmon.h"
#include "specs.h"

#include <math.h>

/* ---- 11.3: h for one false alarm per 10^k rounds */

/* the first rate's exponent (printed 6); the second is a thousandfold
 * rarer alarm (printed 9), as 11.3(c) asks about */
static const double ex3_exp_a[] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
enum { EX3_THOUSANDFOLD = 3 };

static void threshold_part(practice_set *s, const char *id, const char *what, double exponent)
{
    double h = cusum_threshold_for_arl0(pow(10, exponent));
    practice_part *p = practice_add_part(s, id, 3, what, "nats", JUDGE_RELATIVE, h, JUDGE_HAND_TOL);
    practice_add_slip(p, exponent, "h is in nats: the natural log of ARL0, not its base-10 exponent");
    practice_add_slip(p, log2(pow(10, exponent)), "h is in nats: the natural log of ARL0, not log2");
}

static void exercise_3(practice_set *s, rng_state *r)
{
    double a = PRACTICE_DRAW(s, r, "ch11_ex3_exp_a", ex3_exp_a, 3, "%.0f");
    double b = a + EX3_THOUSANDFOLD;
    const int n = PRACTICE_COUNT(ex3_exp_a);
    practice_add_input(s, "ch11_ex3_exp_b", b, "%.0f", practice_least(ex3_exp_a, n) + EX3_THOUSANDFOLD,
                       practice_greatest(ex3_exp_a, n) + EX3_THOUSANDFOLD);
    threshold_part(s, "11.3(a)", "threshold for the first false-alarm rate", a);
    threshold_part(s, "11.3(b)", "threshold for the second false-alarm rate", b);
}

/* ---- 11.4: the increment of a round with k of gamma drafts accepted */

static const double ex4_alpha0[] = {0.75, 0.8, 0.85, 0.9};
static const double ex4_alpha1[] = {0.5, 0.6, 0.65};
static const double ex4_gamma[] = {3, 4, 5, 6};

/* The smallest |increment| of the four rounds the exercise asks about. */
static double smallest_increment(const cusum_design *d)
{
    const int k[4] = {0, 1, d->gamma - 1, d->gamma};
    double m = INFINITY;
    for (int i = 0; i < 4; i++)
        m = fmin(m, fabs(cusum_llr(d, k[i])));
    return m;
}

static int exercise_4(practice_set *s, rng_state *r)
{
    cusum_design d;
    double a0 = 0.8, a1 = 0.6, g = 4;
    for (int attempt = 0; attempt < 64; attempt++) {
        a0 = practice_pick(r, s->seed, ex4_alpha0, PRACTICE_COUNT(ex4_alpha0), 1);
        a1 = practice_pick(r, s->seed, ex4_alpha1, PRACTICE_COUNT(ex4_alpha1), 1);
        g = practice_pick(r, s->seed, ex4_gamma, PRACTICE_COUNT(ex4_gamma), 1);
        if (cusum_design_make(a0, a1, (int)g, 1e6, &d) == 0 && smallest_increment(&d) >= 0.05)
            break;
        a0 = 0.8, a1 = 0.6, g = 4;
    }
    if (cusum_design_make(a0, a1, (int)g, 1e6, &d) != 0)
        return -1;
    practice_add_input(s, "ch11_ex4_alpha0", a0, "%g", PRACTICE_RANGE_OF(ex4_alpha0));
    practice_add_input(s, "ch11_ex4_alpha1", a1, "%g", PRACTICE_RANGE_OF(ex4_alpha1));
    practice_add_input(s, "ch11_ex4_gamma", g, "%.0f", PRACTICE_RANGE_OF(ex4_gamma));
    practice_add_input(s, "ch11_ex4_most", g - 1, "%.0f", ex4_gamma[0] - 1, ex4_gamma[PRACTICE_COUNT(ex4_gamma) - 1] - 1);
    const int gamma = (int)g, k[4] = {0, 1, gamma - 1, gamma};
    const char *ids[4] = {"11.4(a1)", "11.4(a2)", "11.4(a3)", "11.4(a4)"};
    const char *what[4] = {"increment of a round with no draft accepted", "increment of a round with one accepted",
                           "increment of a round with all but one accepted", "increment of a round with all accepted"};
    for (int i = 0; i < 4; i++) {
        double v = cusum_llr(&d, k[i]);
        practice_part *p = practice_add_part(s, ids[i], 4, what[i], "nats", JUDGE_RELATIVE, v, JUDGE_HAND_TOL);
        practice_add_slip(p, -v, "the statistic adds ln(P1 / P0): the drop's likelihood over the baseline's");
        practice_add_slip(p, v / log(10), "the increments are natural logs");
        if (k[i] == gamma) /* the capped round has no rejection factor */
            practice_add_slip(p, v + log((1 - a1) / (1 - a0)),
                              "a round with every draft accepted ends without a rejection: alpha^gamma, no (1 - alpha)");
    }
    return 0;
}

/* ---- 11.5: the delay bound of 11.4's detector at 11.3's false-alarm rates */

static int delay_part(practice_set *s, const char *id, const char *what, double a0, double a1, int gamma,
                      double exponent)
{
    cusum_design d;
    if (cusum_design_make(a0, a1, gamma, pow(10, exponent), &d) != 0)
        return -1;
    double bound = cusum_delay_bound(&d, a1), mu = cusum_drift(&d, a1);
    if (!isfinite(bound))
        return -1;
    practice_part *p = practice_add_part(s, id, 5, what, "rounds", JUDGE_RELATIVE, bound, JUDGE_HAND_TOL);
    practice_add_slip(p, d.threshold / mu, "the crossing overshoots h by up to one increment: (h + l_max) / I1");
    practice_add_slip(p, (d.threshold + cusum_llr_max(&d)) / -cusum_drift(&d, a0),
                      "the drift that counts is after the drop: the expected increment at alpha1");
    return 0;
}

static int exercise_5(practice_set *s)
{
    const practice_input *a0 = practice_input_named(s, "ch11_ex4_alpha0"), *a1 = practice_input_named(s, "ch11_ex4_alpha1");
    const practice_input *g = practice_input_named(s, "ch11_ex4_gamma");
    const practice_input *ea = practice_input_named(s, "ch11_ex3_exp_a"), *eb = practice_input_named(s, "ch11_ex3_exp_b");
    if (!a0 || !a1 || !g || !ea || !eb)
        return -1;
    const int long_draft = 8; /* 11.5(c): a draft twice the printed 4 */
    if (delay_part(s, "11.5(a)", "delay bound at the first false-alarm rate", a0->value, a1->value, (int)g->value,
                   ea->value) != 0 ||
        delay_part(s, "11.5(b)", "delay bound at the second false-alarm rate", a0->value, a1->value, (int)g->value,
                   eb->value) != 0 ||
        delay_part(s, "11.5(c)", "delay bound with 8 drafts a round, first rate", a0->value, a1->value, long_draft,
                   ea->value) != 0)
        return -1;
    return 0;
}

/* ---- 11.6: the MLE against the dashboard's accepted over proposed */

static const double ex6_rounds[] = {400, 500, 600, 750, 800, 1000, 1200, 1500, 2000, 2500, 3000};
static const double ex6_rejected_share[] = {0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7};
/* below 3 accepted before a rejection, so the dashboard reads lower */
static const double ex6_extra[] = {0.5, 1, 1.5, 2, 2.5};

static void exercise_6(practice_set *s, rng_state *r)
{
    const int gamma = 4;
    double n = practice_pick(r, s->seed, ex6_rounds, PRACTICE_COUNT(ex6_rounds), 5);
    double share = practice_pick(r, s->seed, ex6_rejected_share, PRACTICE_COUNT(ex6_rejected_share), 6);
    double extra = practice_pick(r, s->seed, ex6_extra, PRACTICE_COUNT(ex6_extra), 2);
    /* a round ends on a rejection (it accepted `extra` drafts on average
     * before it) or accepts all gamma */
    double rejections = round(share * n), accepted = round((n - rejections) * gamma + rejections * extra);
    /* the ranges: the fewest rounds with the most rejections and the least
     * accepted before them, and the other way round */
    double n_lo = practice_least(ex6_rounds, PRACTICE_COUNT(ex6_rounds)), n_hi = practice_greatest(ex6_rounds, PRACTICE_COUNT(ex6_rounds));
    double r_lo = n_lo * practice_greatest(ex6_rejected_share, PRACTICE_COUNT(ex6_rejected_share));
    double r_hi = n_hi * practice_least(ex6_rejected_share, PRACTICE_COUNT(ex6_rejected_share));
    double acc_lo = (n_lo - r_lo) * gamma + r_lo * practice_least(ex6_extra, PRACTICE_COUNT(ex6_extra));
    double acc_hi = (n_hi - r_hi) * gamma + r_hi * practice_greatest(ex6_extra, PRACTICE_COUNT(ex6_extra));
    practice_add_input(s, "ch11_ex6_rounds", n, PRACTICE_GROUPED, n_lo, n_hi);
    practice_add_input(s, "ch11_ex6_accepted", accepted, PRACTICE_GROUPED, acc_lo, acc_hi);
    practice_add_input(s, "ch11_ex6_rejections", rejections, PRACTICE_GROUPED,
                       n_lo * practice_least(ex6_rejected_share, PRACTICE_COUNT(ex6_rejected_share)),
                       n_hi * practice_greatest(ex6_rejected_share, PRACTICE_COUNT(ex6_rejected_share)));
    double mle = spec_alpha_mle((long)accepted, (long)rejections), shown = accepted / (n * gamma);
    practice_part *p = practice_add_part(s, "11.6(a)", 6, "the maximum-likelihood alpha", "a fraction", JUDGE_RELATIVE,
                                         mle, JUDGE_HAND_TOL);
    practice_add_slip(p, shown, "that is accepted over proposed; a round stops at its first rejection");
    practice_add_slip(p, 1 - rejections / n, "that is the share of rounds without a rejection");
    p = practice_add_part(s, "11.6(b)", 6, "what the dashboard shows", "a fraction", JUDGE_RELATIVE, shown,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, mle, "the dashboard divides by every proposed draft, gamma a round");
}

/* ---- 11.1: LLaMA-3-70B on 4 x H100 with a LLaMA-3.2-1B draft */

static const double ex1_alpha[] = {0.55, 0.6, 0.62, 0.65, 0.68, 0.7, 0.72, 0.75, 0.78, 0.8, 0.85};
static const double ex1_context[] = {768, 1024, 1280, 1408, 1536, 1664, 1792, 1920, 2048, 2304, 2560, 2816, 3072};

typedef struct {
    int fit, fit2;         /* the largest batch with the draft resident, at gamma 4 and 2 */
    int cross, cross2;     /* the first batch that loses, at gamma 4 and 2 (0: none within memory) */
    double s1, s128;       /* the speedups at batch 1 and 128, gamma 4 */
} launch_review;

static int review(const model_spec *t, const model_spec *d, const gpu_spec *g, double alpha, int ctx,
                  launch_review *out)
{
    const int tp = 4;
    spec_setup s = spec_setup_default(t, d, g, tp, 1, ctx);
    spec_fit f4, f2;
    spec_estimate e;
    char err[256];
    if (spec_memory_fit(&s, memory_policy_default(), 4, &f4, err, sizeof err) != 0 ||
        spec_memory_fit(&s, memory_policy_default(), 2, &f2, err, sizeof err) != 0 || f4.max_batch < 128)
        return -1;
    out->fit = f4.max_batch, out->fit2 = f2.max_batch;
    out->cross = spec_break_even_batch(&s, alpha, 4, out->fit, err, sizeof err);
    out->cross2 = spec_break_even_batch(&s, alpha, 2, out->fit2, err, sizeof err);
    if (spec_estimate_compute(&s, alpha, 4, &e, err, sizeof err) != 0)
        return -1;
    out->s1 = e.speedup_roofline;
    s.batch = 128;
    if (spec_estimate_compute(&s, alpha, 4, &e, err, sizeof err) != 0)
        return -1;
    out->s128 = e.speedup_roofline;
    return 0;
}

static int exercise_1(practice_set *s, rng_state *r)
{
    model_spec t = model_builtin("llama3-70b"), d = model_builtin("llama3.2-1b");
    gpu_spec g = gpu_builtin("h100");
    double a = 0.7, ctx = 2048;
    launch_review v;
    /* the printed story: a loss inside memory at gamma 4, none at gamma 2 */
    for (int attempt = 0; attempt < 64; attempt++) {
        a = practice_pick(r, s->seed, ex1_alpha, PRACTICE_COUNT(ex1_alpha), 5);
        ctx = practice_pick(r, s->seed, ex1_context, PRACTICE_COUNT(ex1_context), 8);
        if (review(&t, &d, &g, a, (int)ctx, &v) == 0 && v.cross > 1 && v.cross2 == 0)
            break;
        a = 0.7, ctx = 2048;
    }
    if (review(&t, &d, &g, a, (int)ctx, &v) != 0)
        return -1;
    practice_add_input(s, "ch11_ex1_alpha", a, "%g", PRACTICE_RANGE_OF(ex1_alpha));
    practice_add_input(s, "ch11_ex1_context", ctx, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex1_context));
    /* E[N] over 1 + gamma c with the draft's c: what regime (i) would promise */
    double e = spec_expected_tokens(a, 4);
    practice_part *p = practice_add_part(s, "11.1(a1)", 1, "speedup at batch 1", "x", JUDGE_RELATIVE, v.s1,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, e, "the draft is not free: a round costs gamma draft steps and a verification step");
    p = practice_add_part(s, "11.1(a2)", 1, "speedup at batch 128", "x", JUDGE_RELATIVE, v.s128, JUDGE_HAND_TOL);
    practice_add_slip(p, v.s1, "at batch 128 verifying five tokens a sequence is no longer free: price the step");
    p = practice_add_part(s, "11.1(b1)", 1, "largest batch with the draft resident", "sequences", JUDGE_EXACT, v.fit, 0);
    if (p)
        p->judge.close_hint = "near: every sequence holds context + gamma + 1 tokens, of the target and the draft";
    spec_setup alone = spec_setup_default(&t, NULL, &g, 4, 1, (int)ctx);
    spec_fit fa;
    char err[256];
    if (spec_memory_fit(&alone, memory_policy_default(), 4, &fa, err, sizeof err) == 0 && fa.max_batch != v.fit)
        practice_add_slip(p, fa.max_batch, "that is the target alone; the draft's weights and KV share the GPUs");
    p = practice_add_part(s, "11.1(b2)", 1, "first batch at which speculation loses", "sequences", JUDGE_EXACT,
                          v.cross, 0);
    if (p)
        p->judge.close_hint = "near the crossing: evaluate the speedup one batch either side";
    return 0;
}

/* ---- 11.2: the draft's weights and KV on each of the target's GPUs */

static const double ex2_batch[] = {16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 192};
static const double ex2_context[] = {512, 1024, 1536, 2048, 3072, 4096};

/* A draft's bytes on each of tp GPUs: its bf16 weights and the KV of batch
 * sequences of context tokens (as 11.2 asks: no speculated tokens). */
static double draft_bytes(const model_spec *d, int tp, double batch, double context)
{
    return weight_bytes_per_gpu(d, DT_BF16, tp) + kv_bytes_per_token_per_gpu(d, DT_BF16, tp) * batch * context;
}

static int exercise_2(practice_set *s, rng_state *r)
{
    const int tp = 4, gamma = 4; /* 11.1's replica */
    model_spec t = model_builtin("llama3-70b"), small = model_builtin("llama3.2-1b"), big = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    double b = 128, ctx = 2048;
    /* the replica must hold the larger draft too, at its batch and context */
    for (int attempt = 0; attempt < 64; attempt++) {
        b = practice_pick(r, s->seed, ex2_batch, PRACTICE_COUNT(ex2_batch), 8);
        ctx = practice_pick(r, s->seed, ex2_context, PRACTICE_COUNT(ex2_context), 3);
        spec_setup su = spec_setup_default(&t, &big, &g, tp, (int)b, (int)ctx);
        spec_fit f;
        char err[256];
        if (spec_memory_fit(&su, memory_policy_default(), gamma, &f, err, sizeof err) == 0 && f.fits)
            break;
        b = 128, ctx = 2048;
    }
    practice_add_input(s, "ch11_ex2_batch", b, "%.0f", PRACTICE_RANGE_OF(ex2_batch));
    practice_add_input(s, "ch11_ex2_context", ctx, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex2_context));
    const model_spec *drafts[2] = {&small, &big};
    const char *ids[2] = {"11.2(a)", "11.2(b)"};
    const char *what[2] = {"LLaMA-3.2-1B draft's memory per GPU", "LLaMA-3-8B draft's memory per GPU"};
    for (int i = 0; i < 2; i++) {
        double gb = draft_bytes(drafts[i], tp, b, ctx) / 1e9;
        practice_part *p = practice_add_part(s, ids[i], 2, what[i], "GB", JUDGE_RELATIVE, gb, JUDGE_HAND_TOL);
        practice_add_slip(p, weight_bytes_per_gpu(drafts[i], DT_BF16, tp) / 1e9,
                          "those are the weights alone; the draft keeps a KV cache of its own");
        practice_add_slip(p, gb * tp, "that is the whole draft; the question asks per GPU, a quarter of it");
    }
    /* the 8B draft's footprint in the target's sequences, each sequence's KV per GPU */
    double seq = kv_bytes_per_token_per_gpu(&t, DT_BF16, tp) * ctx;
    double lost = draft_bytes(&big, tp, b, ctx) / seq;
    practice_part *p = practice_add_part(s, "11.2(c)", 2, "target sequences the 8B draft displaces", "sequences",
                                         JUDGE_RANGE, lost, 1);
    if (p)
        p->judge.rule_note = "to a whole sequence either way";
    practice_add_slip(p, lost / tp, "compare per GPU: a target sequence's KV is split over the 4 GPUs as well");
    practice_add_slip(p, weight_bytes_per_gpu(&big, DT_BF16, tp) / seq,
                      "the draft's footprint includes its own KV cache, not only its weights");
    return 0;
}

/* ---- 11.7: the switch's next state, 1 on and 0 off */

static const double ex7_band[] = {0.95, 1.02, 1.05, 1.08, 1.12, 1.2};
static const double ex7_rounds_ab[] = {500, 2000, 5000};
static const double ex7_high[] = {1.05, 1.2, 1.5};
static const double ex7_rounds_c[] = {200, 500, 1500, 3000};
static const double ex7_low[] = {0.9, 0.97, 1.03};
static const double ex7_rounds_d[] = {200, 5000};

static void switch_part(practice_set *s, const char *id, const char *what, int on, double predicted, double rounds)
{
    rollout_policy pol = rollout_policy_default();
    int next = rollout_next_state(&pol, on, predicted, (long)rounds);
    practice_part *p = practice_add_part(s, id, 7, what, "1 on, 0 off", JUDGE_EXACT, next, 0);
    /* the wrong state, said with the rule it misses */
    if (!on && predicted >= pol.on_above && rounds < pol.min_rounds)
        practice_add_slip(p, 1, "not enough evidence yet: an off class switches on only after the rounds required");
    else if (!on && predicted >= pol.off_below && predicted < pol.on_above)
        practice_add_slip(p, 1, "inside the band an off class stays off: it switches on only at the upper threshold");
    else if (on && predicted >= pol.off_below && predicted < pol.on_above)
        practice_add_slip(p, 0, "inside the band an on class stays on: it switches off only below the lower threshold");
    else if (on && predicted < pol.off_below)
        practice_add_slip(p, 1, "a predicted loss switches an on class off at once, whatever the evidence");
}

static void exercise_7(practice_set *s, rng_state *r)
{
    double ab = PRACTICE_DRAW(s, r, "ch11_ex7_pred_ab", ex7_band, 3, "%.2f");
    double n_ab = PRACTICE_DRAW(s, r, "ch11_ex7_rounds_ab", ex7_rounds_ab, 2, PRACTICE_GROUPED);
    double c = PRACTICE_DRAW(s, r, "ch11_ex7_pred_c", ex7_high, 2, "%.2f");
    double n_c = PRACTICE_DRAW(s, r, "ch11_ex7_rounds_c", ex7_rounds_c, 0, PRACTICE_GROUPED);
    double d = PRACTICE_DRAW(s, r, "ch11_ex7_pred_d", ex7_low, 1, "%.2f");
    double n_d = PRACTICE_DRAW(s, r, "ch11_ex7_rounds_d", ex7_rounds_d, 0, PRACTICE_GROUPED);
    switch_part(s, "11.7(a)", "next state: off, the first prediction", 0, ab, n_ab);
    switch_part(s, "11.7(b)", "next state: on, the same prediction", 1, ab, n_ab);
    switch_part(s, "11.7(c)", "next state: off, the second prediction", 0, c, n_c);
    switch_part(s, "11.7(d)", "next state: on, the third prediction", 1, d, n_d);
}

int practice_build_ch11(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state st[6];
    practice_streams(seed, st, 6);
    rng_state r3 = st[0], r4 = st[1], r6 = st[2], r2 = st[3], r7 = st[4], r1 = st[5];
    if (exercise_1(out, &r1) != 0 || exercise_2(out, &r2) != 0)
        return -1;
    exercise_3(out, &r3);
    if (exercise_4(out, &r4) != 0 || exercise_5(out) != 0) /* 11.5 reads 11.3's and 11.4's numbers */
        return -1;
    exercise_6(out, &r6);
    exercise_7(out, &r7);
    return 0;
}
