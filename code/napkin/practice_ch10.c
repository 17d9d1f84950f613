/* Chapter 10's exercise variants: 10.2 (bursty output) and 10.3 (how long a
 * draft?), Leviathan et al.'s capped geometric model.  The printed numbers
 * are seed 0; other seeds draw from the lists below, which keep a strong
 * draft in 10.2 and, in 10.3, a best draft length strictly inside 1..10 (so
 * that gamma = 10 is worse, as part (c) asks to explain). */
#include "practice.h"
#include "practice_draw.h"

#include "rng.h"
#include "specdec.h"

#include <math.h>

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

int practice_build_ch10(uint64_t seed, practice_set *out)
{
    rng_state r2 = rng_make(seed), r3 = r2;
    rng_jump(&r3);
    exercise_2(out, &r2);
    exercise_3(out, &r3);
    return 0;
}
