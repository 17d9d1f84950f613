/* Chapter 3's exercise variants: 3.1 (offsets by hand), 3.2 (buckets for a
 * long tail), 3.3 and 3.4 (a quiet and a busy endpoint), 3.5 (a window for a
 * latency budget), 3.6 (sequential against one batch) and 3.7 (the memory
 * cap).  The printed numbers are seed 0; other seeds draw from the lists
 * below, which keep each question in its printed regime: one prompt per
 * bucket range and the longest in the last, a quiet endpoint whose window
 * holds one arrival on average (so (c)'s three quarters stays true), a busy
 * one whose batches always fill, a window the budget bounds, a batch that
 * fits the GPU. */
#include "practice_chapters.h"
#include "practice_set.h"
#include "practice_draw.h"

#include "memory.h"
#include "packing.h"
#include "rng.h"
#include "batch_vs_sequential.h"
#include "specs.h"
#include "window.h"

#include <math.h>

/* A whole number from lo to hi in steps of step, the printed one at seed 0. */
static int draw_step(rng_state *r, uint64_t seed, int lo, int hi, int step, int printed)
{
    return seed == 0 ? printed : lo + step * (int)rng_below(r, (uint64_t)((hi - lo) / step + 1));
}

static int windowed(double lambda, double w, int cap, window_stats *out)
{
    window_params p = {lambda, w, cap};
    char err[128];
    return window_expected(&p, out, err, sizeof err);
}

static void exercise_1(practice_set *s, rng_state *r)
{
    static const int printed[4] = {5, 3, 8, 1};
    static const char *const names[4] = {"ch03_ex1_len1", "ch03_ex1_len2", "ch03_ex1_len3", "ch03_ex1_len4"};
    int len[4] = {5, 3, 8, 1}, token = 2;
    padding_cost c = padding_cost_padded(len, 4);
    for (int attempt = 0; attempt < 64; attempt++) {
        for (int i = 0; i < 4; i++)
            len[i] = draw_step(r, s->seed, i == 2 ? 2 : 1, 9, 1, printed[i]);
        token = draw_step(r, s->seed, 1, len[2] - 1, 1, 2);
        c = padding_cost_padded(len, 4);
        if (c.waste > 0) /* lengths that differ: some padding to count */
            break;
    }
    for (int i = 0; i < 4; i++)
        practice_add_input(s, names[i], len[i], "%g", i == 2 ? 2 : 1, 9);
    practice_add_input(s, "ch03_ex1_token", token, "%g", 1, 8);
    long cu[5];
    pack_offsets(len, 4, cu);
    practice_part *p = practice_add_part(s, "3.1(a)", 1, "cu[3], where the last sequence starts", "tokens",
                                         JUDGE_EXACT, (double)cu[3], 0);
    practice_add_slip(p, (double)cu[4], "that is cu[4], where the last sequence ends");
    practice_add_slip(p, (double)cu[2], "that is cu[2]; cu[0] is 0 and cu[i+1] adds sequence i");
    p = practice_add_part(s, "3.1(b)", 1, "row of the token in the packed buffer", "row", JUDGE_EXACT,
                          (double)(cu[2] + token), 0);
    practice_add_slip(p, (double)(cu[2] + token + 1), "rows count from 0, as the tokens do");
    practice_add_slip(p, (double)(cu[3] + token), "that starts at sequence 3; sequences count from 0 too");
    p = practice_add_part(s, "3.1(c1)", 1, "token slots padded to the longest", "slots", JUDGE_EXACT, (double)c.slots, 0);
    practice_add_slip(p, (double)c.tokens, "that is the packed count; padding gives every row the longest length");
    p = practice_add_part(s, "3.1(c2)", 1, "share of those slots that is padding", "a fraction", JUDGE_RELATIVE, c.waste,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, 1 - c.waste, "that is the share of real tokens; padding is the rest");
    practice_add_slip(p, (double)(c.slots - c.tokens) / (double)c.tokens, "that divides by the real tokens; the share is of all slots");
}

/* 3.2: three short prompts, two medium, two long and one very long, one
 * bucket range each (edges 128, 512, 2048, 8192), rounded. */
static const struct {
    const char *name;
    int lo, hi, step, printed;
} ex2_len[8] = {{"ch03_ex2_len1", 10, 120, 10, 40},     {"ch03_ex2_len2", 10, 120, 10, 60},
                {"ch03_ex2_len3", 10, 120, 10, 100},    {"ch03_ex2_len4", 150, 500, 50, 250},
                {"ch03_ex2_len5", 150, 500, 50, 300},   {"ch03_ex2_len6", 600, 2000, 100, 900},
                {"ch03_ex2_len7", 600, 2000, 100, 1000}, {"ch03_ex2_len8", 2500, 8000, 500, 4000}};

static void exercise_2(practice_set *s, rng_state *r)
{
    int len[8];
    for (int i = 0; i < 8; i++)
        len[i] = draw_step(r, s->seed, ex2_len[i].lo, ex2_len[i].hi, ex2_len[i].step, ex2_len[i].printed);
    /* ascending within each range, as the prose lists them */
    for (int i = 0; i < 8; i++)
        for (int j = i + 1; j < 8 && ex2_len[j].lo == ex2_len[i].lo; j++)
            if (len[j] < len[i]) {
                int t = len[i];
                len[i] = len[j];
                len[j] = t;
            }
    for (int i = 0; i < 8; i++)
        practice_add_input(s, ex2_len[i].name, len[i], PRACTICE_GROUPED, ex2_len[i].lo, ex2_len[i].hi);
    static const int edges[4] = {128, 512, 2048, 8192};
    padding_cost pad = padding_cost_padded(len, 8), buck;
    if (padding_cost_bucketed(len, 8, edges, 4, &buck) != 0)
        return;
    practice_part *p = practice_add_part(s, "3.2(a1)", 2, "slots padded to the longest", "slots", JUDGE_EXACT,
                                         (double)pad.slots, 0);
    practice_add_slip(p, (double)pad.tokens, "that is the real tokens; padding gives all eight the longest length");
    p = practice_add_part(s, "3.2(a2)", 2, "share of padding, padded to the longest", "a fraction", JUDGE_RELATIVE,
                          pad.waste, JUDGE_HAND_TOL);
    practice_add_slip(p, 1 - pad.waste, "that is the share of real tokens; padding is the rest");
    p = practice_add_part(s, "3.2(b1)", 2, "slots, bucketed", "slots", JUDGE_EXACT, (double)buck.slots, 0);
    practice_add_slip(p, (double)buck.tokens, "that is the real tokens; each bucket pads to its own longest");
    p = practice_add_part(s, "3.2(b2)", 2, "share of padding, bucketed", "a fraction", JUDGE_RELATIVE, buck.waste,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, pad.waste, "that is the waste padded to the longest; bucketing pads each bucket to its own");
    p = practice_add_part(s, "3.2(b3)", 2, "batches the buckets launch", "batches", JUDGE_EXACT, (double)buck.batches, 0);
    p = practice_add_part(s, "3.2(c)", 2, "factor bucketing cuts the causal attention work by", "x", JUDGE_RELATIVE,
                          pad.attn_pairs / buck.attn_pairs, JUDGE_HAND_TOL);
    practice_add_slip(p, (double)pad.slots / (double)buck.slots,
                      "that is the ratio of slots; causal attention grows with the square of each row's length");
}

static const double ex3_window_ms[] = {20, 25, 40, 50, 100};
static const double ex3_cap[] = {8, 16, 32};

static void exercise_3(practice_set *s, rng_state *r, double *window_ms, double *cap)
{
    *window_ms = practice_pick(r, s->seed, ex3_window_ms, PRACTICE_COUNT(ex3_window_ms), 3);
    *cap = practice_pick(r, s->seed, ex3_cap, PRACTICE_COUNT(ex3_cap), 1);
    /* one arrival per window on average: the regime in which (c) holds */
    double lambda = 1000 / *window_ms;
    practice_add_input(s, "ch03_ex3_rate", lambda, "%g", 1000 / practice_greatest(ex3_window_ms, PRACTICE_COUNT(ex3_window_ms)),
                       1000 / practice_least(ex3_window_ms, PRACTICE_COUNT(ex3_window_ms)));
    practice_add_input(s, "ch03_ex3_window_ms", *window_ms, "%g", PRACTICE_RANGE_OF(ex3_window_ms));
    practice_add_input(s, "ch03_ex3_cap", *cap, "%g", PRACTICE_RANGE_OF(ex3_cap));
    window_stats w;
    if (windowed(lambda, *window_ms / 1e3, (int)*cap, &w) != 0)
        return;
    practice_part *p = practice_add_part(s, "3.3(a)", 3, "mean batch size", "requests", JUDGE_RELATIVE, w.mean_batch,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, lambda * *window_ms / 1e3, "that counts only the arrivals after the first; the first opens the batch");
    p = practice_add_part(s, "3.3(b)", 3, "mean wait in the window", "ms", JUDGE_RELATIVE, w.mean_wait * 1e3,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, *window_ms / 2, "that is the wait of the requests after the first; the first waits the whole window");
    practice_add_slip(p, *window_ms, "that is the first request's wait; the others arrive later and wait less");
}

static const double ex4_rate[] = {1000, 2000, 5000};

static void exercise_4(practice_set *s, rng_state *r, double window_ms, double cap)
{
    window_stats w = {0};
    double lambda = 2000;
    for (int attempt = 0; attempt < 64; attempt++) {
        lambda = practice_pick(r, s->seed, ex4_rate, PRACTICE_COUNT(ex4_rate), 1);
        /* the busy regime: the window (almost) never fires */
        if (windowed(lambda, window_ms / 1e3, (int)cap, &w) == 0 && w.full_share > 0.999)
            break;
        lambda = 5000;
        windowed(lambda, window_ms / 1e3, (int)cap, &w);
    }
    practice_add_input(s, "ch03_ex4_rate", lambda, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex4_rate));
    practice_part *p = practice_add_part(s, "3.4(a1)", 4, "mean batch size", "requests", JUDGE_RELATIVE, w.mean_batch,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, lambda * window_ms / 1e3, "that is the arrivals a whole window would hold; the cap sends the batch first");
    p = practice_add_part(s, "3.4(a2)", 4, "time from a batch's first request to its dispatch", "ms", JUDGE_RELATIVE,
                          w.mean_close * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, window_ms, "the window never fires: the batch fills first");
    practice_add_slip(p, cap / lambda * 1e3, "that counts the first request's arrival gap too; it opens the batch");
    p = practice_add_part(s, "3.4(b)", 4, "mean wait", "ms", JUDGE_RELATIVE, w.mean_wait * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, window_ms * 0.75, "three quarters of the window holds at one arrival per window, not here");
    practice_add_slip(p, w.mean_close * 1e3, "that is the first request's wait; the last one waits nothing");
}

static const double ex5_rate[] = {50, 100, 200};
static const double ex5_budget_ms[] = {10, 20, 30};
static const double ex5_cap[] = {32, 64};

/* The longest window whose mean wait is at most budget: the mean wait
 * grows with the window, so bisect the library's closed form. */
static double window_for_wait(double lambda, int cap, double budget)
{
    window_stats w;
    double lo = 0, hi = budget;
    while (windowed(lambda, hi, cap, &w) == 0 && w.mean_wait <= budget) {
        lo = hi;
        hi *= 2;
        if (hi > 1e6)
            return INFINITY;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
        double mid = 0.5 * (lo + hi);
        if (windowed(lambda, mid, cap, &w) == 0 && w.mean_wait <= budget)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void exercise_5(practice_set *s, rng_state *r)
{
    double lambda = PRACTICE_DRAW(s, r, "ch03_ex5_rate", ex5_rate, 1, "%g");
    double budget = PRACTICE_DRAW(s, r, "ch03_ex5_budget_ms", ex5_budget_ms, 1, "%g");
    double cap = PRACTICE_DRAW(s, r, "ch03_ex5_cap", ex5_cap, 0, "%g");
    double w = window_for_wait(lambda, (int)cap, budget / 1e3);
    window_stats st;
    if (!isfinite(w) || windowed(lambda, w, (int)cap, &st) != 0)
        return;
    practice_part *p = practice_add_part(s, "3.5(a1)", 5, "longest window for the budget", "ms", JUDGE_RELATIVE, w * 1e3,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, budget * 4 / 3, "three quarters of the window holds at one arrival per window only");
    p = practice_add_part(s, "3.5(a2)", 5, "mean batch that window buys", "requests", JUDGE_RELATIVE, st.mean_batch,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, lambda * w, "that counts only the arrivals after the first; the first opens the batch");
}

static const double ex6_n[] = {8, 16, 32};
static const double ex6_prompt[] = {128, 256, 512};
static const double ex6_output[] = {64, 128, 256};

/* Sequential over one batch on the step model; NAN when the batch does not
 * fit under the library's default policy. */
static double seq_over_batch(const model_spec *m, const gpu_spec *g, int n, int prompt, int output)
{
    serve_workload w = {n, prompt, output, 1, precision_uniform(DT_BF16)};
    resident_model rm = {m, w.prec, 1};
    fit_check f;
    serve_result seq, one;
    char err[256];
    if (memory_fit(g, memory_policy_default(), &rm, 1, 0, n, prompt + output, &f, err, sizeof err) != 0 || !f.fits)
        return NAN;
    if (serve_sequential(m, g, &w, &seq, err, sizeof err) != 0 || serve_one_batch(m, g, &w, &one, err, sizeof err) != 0)
        return NAN;
    return seq.total / one.total;
}

static int exercise_6(practice_set *s, rng_state *r)
{
    model_spec m;
    if (model_lookup("llama3-8b", &m) != 0)
        return -1;
    gpu_spec h100 = gpu_builtin("h100");
    double n = PRACTICE_DRAW(s, r, "ch03_ex6_n", ex6_n, 1, "%g");
    double prompt = PRACTICE_DRAW(s, r, "ch03_ex6_prompt", ex6_prompt, 1, "%g");
    double output = PRACTICE_DRAW(s, r, "ch03_ex6_output", ex6_output, 1, "%g");
    double short_ratio = seq_over_batch(&m, &h100, (int)n, (int)prompt, (int)output);
    double long_ratio = seq_over_batch(&m, &h100, (int)n, 4096, (int)output);
    if (!isfinite(short_ratio) || !isfinite(long_ratio))
        return -1;
    /* a hand estimate leaves out activations and norms: 5 % */
    practice_part *p = practice_add_part(s, "3.6(a)", 6, "sequential time over one batch's", "x", JUDGE_RELATIVE,
                                         short_ratio, 0.05);
    practice_add_slip(p, n, "the batch is not free: its steps read every sequence's cache, and its prefill is compute-bound");
    if (p)
        p->judge.rule_note = "to 5% (activations and norms left out)";
    p = practice_add_part(s, "3.6(b)", 6, "the same with 4,096-token prompts", "x", JUDGE_RELATIVE, long_ratio, 0.05);
    practice_add_slip(p, short_ratio, "that is the short prompts' ratio; long prefills are compute-bound alone too");
    if (p)
        p->judge.rule_note = "to 5% (activations and norms left out)";
    return 0;
}

static const double ex7_short[] = {512, 768, 1024, 1536};
static const double ex7_long[] = {4096, 8192, 16384};
static const double ex7_reserve_gb[] = {2, 4, 5, 8};

/* Sequences of `context` tokens the KV budget holds: `usable` of the
 * driver's memory less the bf16 weights and `reserve` bytes. */
static int kv_cap(const model_spec *m, const char *gpu, int context, double usable, double reserve)
{
    gpu_spec g = gpu_builtin(gpu);
    memory_policy pol = {usable, 0, 0, 0};
    resident_model rm = {m, precision_uniform(DT_BF16), 1};
    fit_check f;
    char err[256];
    return memory_fit(&g, pol, &rm, 1, reserve, 1, context, &f, err, sizeof err) == 0 ? f.max_batch : -1;
}

static int exercise_7(practice_set *s, rng_state *r)
{
    model_spec m;
    if (model_lookup("llama3-8b", &m) != 0)
        return -1;
    double shortc = PRACTICE_DRAW(s, r, "ch03_ex7_short", ex7_short, 1, PRACTICE_GROUPED);
    double longc = PRACTICE_DRAW(s, r, "ch03_ex7_long", ex7_long, 1, PRACTICE_GROUPED);
    double reserve = PRACTICE_DRAW(s, r, "ch03_ex7_reserve_gb", ex7_reserve_gb, 2, "%g");
    static const struct {
        const char *id, *gpu, *what;
        int use_long;
    } parts[3] = {{"3.7(a)", "h100", "short sequences that fit on the H100", 0},
                  {"3.7(b)", "h100", "long sequences that fit on the H100", 1},
                  {"3.7(c)", "l40s", "long sequences that fit on the L40S", 1}};
    for (int i = 0; i < 3; i++) {
        double context = parts[i].use_long ? longc : shortc;
        int n = kv_cap(&m, parts[i].gpu, (int)context, 0.9, reserve * 1e9);
        if (n < 1)
            return -1;
        gpu_spec g = gpu_builtin(parts[i].gpu);
        double seq = kv_bytes_per_sequence(&m, DT_BF16, (int)context), w = weight_bytes(&m, DT_BF16);
        practice_part *p = practice_add_part(s, parts[i].id, 7, parts[i].what, "sequences", JUDGE_EXACT, n, 0);
        practice_add_slip(p, floor((0.9 * g.mem_bytes_datasheet - w - reserve * 1e9) / seq),
                          "that plans with the datasheet's GB; a server has what the driver reports");
        practice_add_slip(p, floor((g.mem_bytes - w - reserve * 1e9) / seq),
                          "that uses all of the memory; the server may use 90% of it");
    }
    return 0;
}

int practice_build_ch03(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state r[7];
    practice_streams(seed, r, 7);
    double window_ms, cap;
    exercise_1(out, &r[0]);
    exercise_2(out, &r[1]);
    exercise_3(out, &r[2], &window_ms, &cap);
    exercise_4(out, &r[3], window_ms, cap);
    exercise_5(out, &r[4]);
    if (exercise_6(out, &r[5]) != 0 || exercise_7(out, &r[6]) != 0)
        return -1;
    return 0;
}
