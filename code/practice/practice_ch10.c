/* Chapter 10's exercise variants: 10.1 (the missing token), 10.2 (bursty
 * output), 10.3 (how long a draft?), 10.4 (what acceptance rate do you
 * need?) and 10.5 (the hidden bill), Leviathan et al.'s capped geometric
 * model.  The printed numbers are seed 0; other seeds draw from the lists
 * below, which keep a strong draft in 10.2, in 10.3 a best draft length
 * strictly inside 1..10 (so that gamma = 10 is worse, as part (c) asks to
 * explain), in 10.4 a promise both draft lengths can keep, and in 10.6
 * batches that fit the four GPUs at short contexts (and the largest not at
 * 4096 tokens, as part (d) asks). */
#include "practice_chapters.h"
#include "practice_set.h"
#include "practice_draw.h"

#include "memory.h"
#include "rng.h"
#include "specdec.h"
#include "specs.h"

#include <math.h>

static const double ex1_alpha[] = {0.6, 0.65, 0.7, 0.75, 0.8};
static const double ex1_gamma[] = {2, 3, 4, 5};

/* The dashboard's figure, E[N] - 1, as it prints it: two decimals. */
static double dashboard(double alpha, int gamma)
{
    return round(100 * (spec_expected_tokens(alpha, gamma) - 1)) / 100;
}

static void exercise_1(practice_set *s, rng_state *r)
{
    double a = PRACTICE_DRAW(s, r, "ch10_ex1_alpha", ex1_alpha, 2, "%g");
    int g = (int)practice_pick(r, s->seed, ex1_gamma, PRACTICE_COUNT(ex1_gamma), 1);
    practice_add_input(s, "ch10_ex1_gamma", g, "%.0f", PRACTICE_RANGE_OF(ex1_gamma));
    /* E[N] grows with alpha and gamma: the dashboard's range is its corners' */
    practice_add_input(s, "ch10_ex1_dashboard", dashboard(a, g), "%.2f",
                       dashboard(practice_least(ex1_alpha, PRACTICE_COUNT(ex1_alpha)),
                                 (int)practice_least(ex1_gamma, PRACTICE_COUNT(ex1_gamma))),
                       dashboard(practice_greatest(ex1_alpha, PRACTICE_COUNT(ex1_alpha)),
                                 (int)practice_greatest(ex1_gamma, PRACTICE_COUNT(ex1_gamma))));
    double e = spec_expected_tokens(a, g);
    practice_part *p = practice_add_part(s, "10.1(a)", 1, "expected tokens per round", "tokens", JUDGE_RELATIVE, e,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, e - 1, "that is the dashboard's figure: the target always adds one token of its own");
    practice_add_slip(p, 1 / (1 - a), "that is the uncapped geometric mean; a round stops after gamma drafts");
    p = practice_add_part(s, "10.1(c)", 1, "speedup with a free draft", "x", JUDGE_RELATIVE,
                          spec_walltime_speedup(a, g, 0), JUDGE_HAND_TOL);
    practice_add_slip(p, e - 1, "that is the dashboard's figure: the target always adds one token of its own");
}

static const double ex2_alpha[] = {0.8, 0.85, 0.9, 0.95};
static const double ex2_gamma[] = {4, 5, 6, 8, 10};

static void exercise_2(practice_set *s, rng_state *r)
{
    double a = practice_pick(r, s->seed, ex2_alpha, PRACTICE_COUNT(ex2_alpha), 2);
    int g = (int)practice_pick(r, s->seed, ex2_gamma, PRACTICE_COUNT(ex2_gamma), 3);
    practice_add_input(s, "ch10_ex2_alpha", a, "%g", ex2_alpha[0], ex2_alpha[PRACTICE_COUNT(ex2_alpha) - 1]);
    practice_add_input(s, "ch10_ex2_gamma", g, "%.0f", ex2_gamma[0], ex2_gamma[PRACTICE_COUNT(ex2_gamma) - 1]);
    practice_add_input(s, "ch10_ex2_all", g + 1, "%.0f", ex2_gamma[0] + 1, ex2_gamma[PRACTICE_COUNT(ex2_gamma) - 1] + 1);
    double e = spec_expected_tokens(a, g);
    practice_part *p = practice_add_part(s, "10.2(a1)", 2, "E[N], tokens per round", "tokens", JUDGE_RELATIVE, e,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, e - 1, "the target always adds one token of its own");
    practice_add_slip(p, 1 / (1 - a), "that is the uncapped geometric mean; a round stops after gamma drafts");
    p = practice_add_part(s, "10.2(a2)", 2, "P(N = 1)", "a probability", JUDGE_RELATIVE, spec_tokens_pmf(a, g, 1),
                          JUDGE_HAND_TOL);
    practice_add_slip(p, a, "that is the first draft accepted; N = 1 is the first draft rejected");
    p = practice_add_part(s, "10.2(a3)", 2, "P(every draft accepted)", "a probability", JUDGE_RELATIVE,
                          spec_tokens_pmf(a, g, g + 1), JUDGE_HAND_TOL);
    practice_add_slip(p, pow(a, g + 1), "gamma drafts accepted is alpha to the gamma, not gamma + 1");
    practice_add_slip(p, pow(a, g - 1), "gamma drafts accepted is alpha to the gamma, not gamma - 1");
    double sd = sqrt(spec_tokens_variance(a, g));
    p = practice_add_part(s, "10.2(a4)", 2, "standard deviation of N", "tokens", JUDGE_RELATIVE, sd, JUDGE_HAND_TOL);
    practice_add_slip(p, sd * sd, "that is the variance; the standard deviation is its square root");
    double le2 = spec_tokens_cdf(a, g, 2);
    p = practice_add_part(s, "10.2(b)", 2, "share of rounds with at most two tokens", "a fraction", JUDGE_RELATIVE,
                          le2, JUDGE_HAND_TOL);
    practice_add_slip(p, spec_tokens_pmf(a, g, 2), "that is exactly two tokens; at most two adds P(N = 1)");
}

static const double ex3_cost[] = {0.05, 0.1, 0.15, 0.2};
static const double ex3_alpha[] = {0.6, 0.7, 0.75, 0.8, 0.85};
static const double ex3_gamma[] = {2, 3, 4, 5, 6};

static void exercise_3(practice_set *s, rng_state *r)
{
    double c = 0.1, a = 0.75;
    int g = 4, best = 0;
    for (int attempt = 0; attempt < 64; attempt++) {
        c = practice_pick(r, s->seed, ex3_cost, PRACTICE_COUNT(ex3_cost), 1);
        a = practice_pick(r, s->seed, ex3_alpha, PRACTICE_COUNT(ex3_alpha), 2);
        g = (int)practice_pick(r, s->seed, ex3_gamma, PRACTICE_COUNT(ex3_gamma), 2);
        best = spec_best_gamma(a, c, 10, NULL);
        if (best >= 2 && best <= 9)
            break;
        c = 0.1, a = 0.75, g = 4;
        best = spec_best_gamma(a, c, 10, NULL);
    }
    practice_add_input(s, "ch10_ex3_cost", c, "%g", ex3_cost[0], ex3_cost[PRACTICE_COUNT(ex3_cost) - 1]);
    practice_add_input(s, "ch10_ex3_alpha", a, "%g", ex3_alpha[0], ex3_alpha[PRACTICE_COUNT(ex3_alpha) - 1]);
    practice_add_input(s, "ch10_ex3_gamma", g, "%.0f", ex3_gamma[0], ex3_gamma[PRACTICE_COUNT(ex3_gamma) - 1]);
    double sp = spec_walltime_speedup(a, g, c);
    practice_part *p = practice_add_part(s, "10.3(a)", 3, "speedup at the given draft length", "x", JUDGE_RELATIVE,
                                         sp, JUDGE_HAND_TOL);
    practice_add_slip(p, spec_walltime_speedup(a, g, 0), "the draft is not free: a round costs 1 + gamma c steps");
    practice_add_slip(p, spec_walltime_speedup(a, g, c) - 1 / (1 + g * c),
                      "the target always adds one token of its own");
    p = practice_add_part(s, "10.3(b1)", 3, "the best draft length from 1 to 10", "drafts", JUDGE_EXACT, best, 0);
    if (p)
        p->judge.close_hint = "near the best: compare the speedup at the draft lengths either side";
    double best_s = spec_walltime_speedup(a, best, c);
    p = practice_add_part(s, "10.3(b2)", 3, "speedup at the best draft length", "x", JUDGE_RELATIVE, best_s,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, spec_walltime_speedup(a, best, 0), "the draft is not free: a round costs 1 + gamma c steps");
    double s10 = spec_walltime_speedup(a, 10, c);
    p = practice_add_part(s, "10.3(c)", 3, "speedup at a draft length of 10", "x", JUDGE_RELATIVE, s10,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, spec_walltime_speedup(a, 10, 0), "the draft is not free: a round costs 1 + gamma c steps");
}

/* ---- 10.4: the smallest alpha for a promised speedup */

static const double ex4_target[] = {1.5, 1.8, 2, 2.2};
static const double ex4_cost[] = {0.05, 0.1, 0.15};
static const double ex4_gamma[] = {3, 4, 5, 6};

static void exercise_4(practice_set *s, rng_state *r)
{
    const int short_g = 2; /* (b) and (c): the printed short draft */
    double t = 2, c = 0.1, g = 4;
    /* the promise must be in reach of both draft lengths, short of alpha = 1
     * and above what a hopeless draft gives */
    for (int attempt = 0; attempt < 64; attempt++) {
        t = practice_pick(r, s->seed, ex4_target, PRACTICE_COUNT(ex4_target), 2);
        c = practice_pick(r, s->seed, ex4_cost, PRACTICE_COUNT(ex4_cost), 1);
        g = practice_pick(r, s->seed, ex4_gamma, PRACTICE_COUNT(ex4_gamma), 1);
        double a1 = spec_alpha_for_speedup(t, (int)g, c), a2 = spec_alpha_for_speedup(t, short_g, c);
        if (a1 >= 0.3 && a2 <= 0.95 && spec_walltime_speedup(1, short_g, c) >= t * 1.05)
            break;
        t = 2, c = 0.1, g = 4;
    }
    practice_add_input(s, "ch10_ex4_target", t, "%g", PRACTICE_RANGE_OF(ex4_target));
    practice_add_input(s, "ch10_ex4_cost", c, "%g", PRACTICE_RANGE_OF(ex4_cost));
    practice_add_input(s, "ch10_ex4_gamma", g, "%.0f", PRACTICE_RANGE_OF(ex4_gamma));
    const char *ids[2] = {"10.4(a)", "10.4(b)"};
    const char *what[2] = {"smallest alpha at the longer draft", "smallest alpha at gamma 2"};
    const int gs[2] = {(int)g, short_g};
    for (int i = 0; i < 2; i++) {
        practice_part *p = practice_add_part(s, ids[i], 4, what[i], "a fraction", JUDGE_RELATIVE,
                                             spec_alpha_for_speedup(t, gs[i], c), JUDGE_HAND_TOL);
        double free_a = spec_alpha_for_speedup(t, gs[i], 0);
        practice_add_slip(p, free_a, "the draft is not free: E[N] must reach the speedup times 1 + gamma c");
    }
    double most = spec_walltime_speedup(1, short_g, c);
    practice_part *p = practice_add_part(s, "10.4(c)", 4, "the most gamma 2 can give", "x", JUDGE_RELATIVE, most,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, short_g + 1.0, "that is a free draft's; a round still costs 1 + gamma c steps");
}

/* ---- 10.5: walltime against arithmetic */

static const double ex5_alpha[] = {0.6, 0.7, 0.75, 0.8, 0.85, 0.9};
static const double ex5_gamma[] = {3, 4, 5, 6, 7};
static const double ex5_cost[] = {0.05, 0.1, 0.2};

static void exercise_5(practice_set *s, rng_state *r)
{
    double a = PRACTICE_DRAW(s, r, "ch10_ex5_alpha", ex5_alpha, 3, "%g");
    int g = (int)practice_pick(r, s->seed, ex5_gamma, PRACTICE_COUNT(ex5_gamma), 2);
    double c = practice_pick(r, s->seed, ex5_cost, PRACTICE_COUNT(ex5_cost), 1);
    practice_add_input(s, "ch10_ex5_gamma", g, "%.0f", PRACTICE_RANGE_OF(ex5_gamma));
    practice_add_input(s, "ch10_ex5_c", c, "%g", PRACTICE_RANGE_OF(ex5_cost));
    double e = spec_expected_tokens(a, g);
    practice_part *p = practice_add_part(s, "10.5(a)", 5, "walltime speedup in regime (i)", "x", JUDGE_RELATIVE,
                                         spec_walltime_speedup(a, g, c), JUDGE_HAND_TOL);
    practice_add_slip(p, e, "the draft is not free: a round costs 1 + gamma c steps");
    double ops = spec_operations_factor(a, g, c), ops0 = spec_operations_factor(a, g, 0);
    p = practice_add_part(s, "10.5(b1)", 5, "operations per token over plain decoding", "x", JUDGE_RELATIVE, ops,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, 1 / ops, "upside down: evaluations per round over tokens per round");
    practice_add_slip(p, ops0, "that leaves out the draft's own operations, gamma c-hat a round");
    p = practice_add_part(s, "10.5(b2)", 5, "operations factor for a free draft", "x", JUDGE_RELATIVE, ops0,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, 1 / ops0, "upside down: evaluations per round over tokens per round");
    practice_add_slip(p, g / e, "the target evaluates gamma + 1 positions a round, not gamma");
}

/* ---- 10.6: a verification step over a plain one, LLaMA-3-70B on 4 x H100 */

static const double ex6_gamma[] = {3, 4, 5};
static const double ex6_context[] = {256, 512, 1024};
static const double ex6_mid[] = {32, 48, 64};
static const double ex6_large[] = {192, 256};

/* The step model's ratio, or NAN when the batch does not fit. */
static double verify_ratio(int batch, int context, int gamma)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    spec_setup s = spec_setup_default(&m, NULL, &g, 4, batch, context);
    spec_fit f;
    spec_estimate e;
    char err[256];
    if (spec_memory_fit(&s, memory_policy_default(), gamma, &f, err, sizeof err) != 0 || !f.fits ||
        spec_estimate_compute(&s, 0.5, gamma, &e, err, sizeof err) != 0)
        return NAN;
    return e.verify_ratio;
}

static int exercise_6(practice_set *s, rng_state *r)
{
    double g = PRACTICE_DRAW(s, r, "ch10_ex6_gamma", ex6_gamma, 1, "%.0f");
    double ctx = practice_pick(r, s->seed, ex6_context, PRACTICE_COUNT(ex6_context), 1);
    /* batch 1 stays: its ratio is 1 within 1 %, the point of (b), and no box */
    const double b[2] = {practice_pick(r, s->seed, ex6_mid, PRACTICE_COUNT(ex6_mid), 2),
                         practice_pick(r, s->seed, ex6_large, PRACTICE_COUNT(ex6_large), 1)};
    practice_add_input(s, "ch10_ex6_new", g + 1, "%.0f", ex6_gamma[0] + 1, ex6_gamma[PRACTICE_COUNT(ex6_gamma) - 1] + 1);
    practice_add_input(s, "ch10_ex6_context", ctx, "%.0f", PRACTICE_RANGE_OF(ex6_context));
    practice_add_input(s, "ch10_ex6_batch2", b[0], "%.0f", PRACTICE_RANGE_OF(ex6_mid));
    practice_add_input(s, "ch10_ex6_batch3", b[1], "%.0f", PRACTICE_RANGE_OF(ex6_large));
    const char *ids[2] = {"10.6(a2)", "10.6(a3)"};
    const char *what[2] = {"verification over a plain step, the middle batch",
                           "verification over a plain step, the largest batch"};
    for (int i = 0; i < 2; i++) {
        double v = verify_ratio((int)b[i], (int)ctx, (int)g);
        if (!isfinite(v))
            return -1; /* every batch asked fits: the lists keep it so */
        practice_part *p = practice_add_part(s, ids[i], 6, what[i], "x", JUDGE_RELATIVE, v, JUDGE_HAND_TOL);
        practice_add_slip(p, g + 1, "gamma + 1 tokens cost gamma + 1 steps only past the ridge; the weights are read once");
        practice_add_slip(p, 1, "the extra tokens are not free: each costs its FLOPs, and past the ridge they decide");
    }
    return 0;
}

int practice_build_ch10(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state st[5];
    practice_streams(seed, st, 5);
    rng_state r2 = st[0], r3 = st[1], r1 = st[2], r4 = st[3], r5 = st[4];
    exercise_1(out, &r1);
    exercise_2(out, &r2);
    exercise_3(out, &r3);
    exercise_4(out, &r4);
    exercise_5(out, &r5);
    /* 10.6 came later: its stream is 10.5's after 10.5's draws, jumped (so every seed's draws stay as they were) */
    rng_state r6 = r5;
    rng_jump(&r6);
    return exercise_6(out, &r6);
}
