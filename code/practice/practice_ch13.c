/* Chapter 13's exercise variants: 13.1 (whose cache is smaller?), 13.2 (how
 * many H200s to serve DeepSeek-V3?), 13.3
 * (experts a batch touches), 13.4 (the all-to-all), 13.5 (when does
 * disaggregation beat one pool?) and 13.6 (a shared system prompt).  The
 * printed numbers are seed 0; other seeds draw from the lists below, which
 * keep contexts inside every model's trained length, batches of decode
 * size, groups of whole eight-GPU nodes, prefill and decode times of a
 * 4-GPU replica of a large model, and prefixes shorter than the prompt; in
 * 13.2 loads at which tensor parallelism fits the first and no degree of it
 * the second, while spread experts serve both and need more GPUs for the
 * third. */
#include "practice_chapters.h"
#include "practice_set.h"

#include "comm.h"
#include "disagg.h"
#include "expert_parallel.h"
#include "memory.h"
#include "moe.h"
#include "practice_draw.h"
#include "request.h"
#include "specs.h"

#include <math.h>

/* ---- 13.1: bf16 cache of one sequence */

/* up to Qwen3-235B-A22B's trained 40,960 tokens */
static const double ex1_context[] = {1024,  1536,  2048,  3072,  4096,  6144,  8192,
                                     12288, 14336, 16384, 20480, 24576, 32768, 40960};

static int exercise_1(practice_set *s, rng_state *r)
{
    double ctx = PRACTICE_DRAW(s, r, "ch13_ex1_context", ex1_context, 6, PRACTICE_GROUPED);
    model_spec ds, qw, oss;
    if (model_lookup("deepseek-v3", &ds) != 0 || model_lookup("qwen3-235b-a22b", &qw) != 0 ||
        model_lookup("gpt-oss-120b", &oss) != 0)
        return -1;
    int c = (int)ctx;
    double a = kv_bytes_per_sequence(&ds, DT_BF16, c) / 1e6;
    practice_part *p = practice_add_part(s, "13.1(a)", 1, "DeepSeek-V3's cache of one sequence", "MB",
                                         JUDGE_RELATIVE, a, JUDGE_HAND_TOL);
    practice_add_slip(p, a * 512 / 576, "the decoupled RoPE key adds 64 to the 512 of the latent");
    double b = kv_bytes_per_sequence(&qw, DT_BF16, c) / 1e6;
    p = practice_add_part(s, "13.1(b)", 1, "Qwen3-235B-A22B's cache of one sequence", "MB", JUDGE_RELATIVE, b,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, b * qw.heads / qw.kv_heads, "the cache holds the 4 KV heads, not the 64 query heads");
    double cc = kv_bytes_per_sequence(&oss, DT_BF16, c) / 1e6;
    double windowed = kv_window_bytes_per_token_per_gpu(&oss, DT_BF16, 1); /* a token of the sliding layers */
    p = practice_add_part(s, "13.1(c)", 1, "gpt-oss-120b's cache of one sequence", "MB", JUDGE_RELATIVE, cc,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, kv_bytes_per_token(&oss, DT_BF16) * ctx / 1e6,
                      "the sliding layers keep at most their 128-token window");
    practice_add_slip(p, cc - windowed * fmin(ctx, oss.window) / 1e6,
                      "the sliding layers still keep their last 128 tokens");
    return 0;
}

/* ---- 13.3: uniform top-8 routing */

static const double ex3_tokens[] = {8, 12, 16, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256};
static const double ex3_share[] = {50, 55, 60, 65, 70, 75, 80, 85, 88, 90, 92, 95, 97, 98, 99};

/* The slips of a count of tokens that covers a share: linear growth, and
 * the last count below the share. */
static void cover_slips(practice_part *p, int experts, int k, double share, int tokens)
{
    practice_add_slip(p, ceil(share * experts / k), "tokens share experts: the touched share grows as 1 - (1 - k/E)^T");
    practice_add_slip(p, tokens - 1, "round up: the fewest tokens whose expected share reaches the target");
}

static int exercise_3(practice_set *s, rng_state *r)
{
    double tokens = PRACTICE_DRAW(s, r, "ch13_ex3_tokens", ex3_tokens, 7, "%.0f");
    double pct = PRACTICE_DRAW(s, r, "ch13_ex3_share", ex3_share, 9, "%.0f");
    model_spec ds, qw;
    if (model_lookup("deepseek-v3", &ds) != 0 || model_lookup("qwen3-235b-a22b", &qw) != 0)
        return -1;
    double pi[256];
    if (ds.experts > 256 || moe_zipf_inclusion(ds.experts, ds.experts_active, 0, pi) != 0)
        return -1;
    double touched = moe_expected_touched(pi, ds.experts, tokens);
    practice_part *p = practice_add_part(s, "13.3(a)", 3, "experts the tokens touch", "experts", JUDGE_RELATIVE,
                                         touched, JUDGE_HAND_TOL);
    practice_add_slip(p, fmin(tokens * ds.experts_active, ds.experts),
                      "tokens share experts: each expert is missed with probability (1 - k/E)^T");
    int n_ds = moe_tokens_to_cover(ds.experts, ds.experts_active, pct / 100);
    int n_qw = moe_tokens_to_cover(qw.experts, qw.experts_active, pct / 100);
    if (n_ds < 1 || n_qw < 1)
        return -1;
    p = practice_add_part(s, "13.3(b)", 3, "tokens that touch the share of DeepSeek-V3's experts", "tokens",
                          JUDGE_EXACT, n_ds, 0);
    cover_slips(p, ds.experts, ds.experts_active, pct / 100, n_ds);
    p = practice_add_part(s, "13.3(c)", 3, "tokens that touch the share of Qwen3-235B-A22B's experts", "tokens",
                          JUDGE_EXACT, n_qw, 0);
    cover_slips(p, qw.experts, qw.experts_active, pct / 100, n_qw);
    return 0;
}

/* ---- 13.4: one fp8 dispatch of DeepSeek-V3 from one GPU */

static const double ex4_tokens[] = {8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256};
static const double ex4_nodes[] = {2, 4, 8};

static int exercise_4(practice_set *s, rng_state *r)
{
    double tokens = PRACTICE_DRAW(s, r, "ch13_ex4_tokens", ex4_tokens, 7, "%.0f");
    double nodes = PRACTICE_DRAW(s, r, "ch13_ex4_nodes", ex4_nodes, 1, "%.0f");
    practice_add_input(s, "ch13_ex4_gpus", 8 * nodes, "%.0f", 8 * ex4_nodes[0], 8 * ex4_nodes[PRACTICE_COUNT(ex4_nodes) - 1]);
    model_spec ds;
    gpu_spec h200 = gpu_builtin("h200");
    if (model_lookup("deepseek-v3", &ds) != 0)
        return -1;
    int k = ds.experts_active, ep = 8 * (int)nodes;
    double one = moe_alltoall_bytes(tokens, ds.experts, k, ds.hidden, 8, 1);
    double many = moe_alltoall_bytes(tokens, ds.experts, k, ds.hidden, ep, 1);
    const char *merged = "the kernels send a token once to each GPU its top-8 reaches, not once an expert";
    const char *home = "a token's own GPU needs no transfer: (ep - 1)/ep of the GPUs reached are others";
    practice_part *p = practice_add_part(s, "13.4(a)", 4, "bytes one GPU sends, one node", "MB", JUDGE_RELATIVE,
                                         one / 1e6, JUDGE_HAND_TOL);
    practice_add_slip(p, ep_alltoall_bytes(tokens, k, ds.hidden, 8, 1.0, 1) / 1e6, merged);
    practice_add_slip(p, one * 8.0 / 7 / 1e6, home);
    p = practice_add_part(s, "13.4(b)", 4, "bytes one GPU sends, the group over the nodes", "MB", JUDGE_RELATIVE,
                          many / 1e6, JUDGE_HAND_TOL);
    practice_add_slip(p, ep_alltoall_bytes(tokens, k, ds.hidden, ep, 1.0, 1) / 1e6, merged);
    practice_add_slip(p, one / 1e6, "more GPUs in the group: a token's top-8 reaches more of them");
    double us = alltoall_time(&h200, one, 1.0, 50e9) * 1e6;
    p = practice_add_part(s, "13.4(c)", 4, "time of the one-node dispatch", "us", JUDGE_RELATIVE, us, JUDGE_HAND_TOL);
    practice_add_slip(p, one / h200.link_bw * 1e6, "the all-to-all also pays its 4.8 us latency");
    practice_add_slip(p, h200.allreduce_latency * 1e6, "the bytes take time too: bytes / 450 GB/s");
    return 0;
}

/* ---- 13.5: 16 GPUs as four aggregated replicas of 4, or 8 + 8 */

static const double ex5_prefill[] = {0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5};
static const double ex5_decode_ms[] = {15, 20, 25, 30, 35, 40, 50};
static const double ex5_output[] = {128, 256, 384, 512, 768, 1024, 2048};

static void exercise_5(practice_set *s, rng_state *r)
{
    double p_s = PRACTICE_DRAW(s, r, "ch13_ex5_prefill", ex5_prefill, 3, "%g");
    double d_ms = PRACTICE_DRAW(s, r, "ch13_ex5_decode_ms", ex5_decode_ms, 2, "%g");
    double out = PRACTICE_DRAW(s, r, "ch13_ex5_output", ex5_output, 3, "%.0f");
    const int c = 100, tp = 4;
    double d = d_ms / 1e3;
    int o = (int)out;
    double tpot = closed_loop_tpot(p_s, d, c, o);
    practice_part *p = practice_add_part(s, "13.5(a)", 5, "TPOT of the aggregated replica", "ms", JUDGE_RELATIVE,
                                         tpot * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, d_ms, "the other requests' prefills stall the decode steps: (C - 1) p over the output");
    practice_add_slip(p, (d + c * p_s / (o - 1)) * 1e3, "a request's own prefill comes before its first token: C - 1");
    double pre = disagg_prefill_rate(p_s, 8, tp), dec = disagg_decode_rate(d, c, o, 8, tp);
    p = practice_add_part(s, "13.5(b)", 5, "requests a second of the 8 + 8 split", "requests/s", JUDGE_RELATIVE,
                          fmin(pre, dec), JUDGE_HAND_TOL);
    practice_add_slip(p, fmax(pre, dec), "a split serves what the slower of its two pools serves");
    practice_add_slip(p, pre + dec, "a split serves what the slower of its two pools serves");
    double agg = 4 * c / closed_loop_e2e(p_s, d, c, o);
    p = practice_add_part(s, "13.5(c)", 5, "requests a second of four aggregated replicas", "requests/s",
                          JUDGE_RELATIVE, agg, JUDGE_HAND_TOL);
    practice_add_slip(p, agg / 4, "16 GPUs hold four replicas of 4");
    practice_add_slip(p, 4 * c / (o * d), "each replica's prefills take time from its decode: C p + (output - 1) d");
}

/* ---- 13.6: 60 GB of LLaMA-3-8B cache and a shared system prompt */

static const double ex6_prompt[] = {1536, 2048, 3072, 4096, 6144, 8192};
static const double ex6_output[] = {64, 128, 192, 256, 384, 512};
static const double ex6_prefix[] = {512, 1024, 1536, 2048, 3072, 4096};
static const double ex6_hit[] = {30, 40, 50, 60, 70, 75, 80, 85, 90, 95};

/* Sequences a budget holds: the cached prefix once (when any request
 * finds it), each slot its own prompt + output - floor(hit x prefix). */
static double held(double budget, double per_token, int prompt, int output, int prefix, double hit)
{
    double shared = hit > 0 ? prefix * per_token : 0;
    int own = hit > 0 ? prefix_own_tokens(prompt, output, prefix, hit) : prompt + output;
    return fmax(0, floor((budget - shared) / (own * per_token)));
}

static int exercise_6(practice_set *s, rng_state *r)
{
    double prompt = 4096, prefix = 3072;
    for (int attempt = 0; attempt < 64; attempt++) {
        prompt = practice_pick(r, s->seed, ex6_prompt, PRACTICE_COUNT(ex6_prompt), 3);
        prefix = practice_pick(r, s->seed, ex6_prefix, PRACTICE_COUNT(ex6_prefix), 4);
        if (prefix < prompt) /* a system prompt shorter than the prompt */
            break;
        prompt = 4096, prefix = 3072;
    }
    double out = practice_pick(r, s->seed, ex6_output, PRACTICE_COUNT(ex6_output), 3);
    double pct = practice_pick(r, s->seed, ex6_hit, PRACTICE_COUNT(ex6_hit), 8);
    practice_add_input(s, "ch13_ex6_prompt", prompt, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex6_prompt));
    practice_add_input(s, "ch13_ex6_output", out, "%.0f", PRACTICE_RANGE_OF(ex6_output));
    practice_add_input(s, "ch13_ex6_prefix", prefix, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex6_prefix));
    practice_add_input(s, "ch13_ex6_hit", pct, "%.0f", PRACTICE_RANGE_OF(ex6_hit));
    model_spec m;
    if (model_lookup("llama3-8b", &m) != 0)
        return -1;
    const double budget = 60e9, kv = kv_bytes_per_token(&m, DT_BF16);
    int pr = (int)prompt, o = (int)out, pf = (int)prefix;
    double none = held(budget, kv, pr, o, pf, 0), all = held(budget, kv, pr, o, pf, 1);
    double some = held(budget, kv, pr, o, pf, pct / 100);
    const char *gb = "the budget is 60 GB, 60 x 10^9 bytes, not 60 GiB";
    practice_part *p = practice_add_part(s, "13.6(a)", 6, "requests without prefix caching", "requests", JUDGE_EXACT,
                                         none, 0);
    practice_add_slip(p, floor(budget * 1.073741824 / ((pr + o) * kv)), gb);
    practice_add_slip(p, floor(budget / (pr * kv)), "each request also holds its output tokens' KV");
    p = practice_add_part(s, "13.6(b)", 6, "requests when every one finds the prefix", "requests", JUDGE_EXACT, all, 0);
    practice_add_slip(p, floor(budget / ((pr + o - pf) * kv)), "the cached prefix is held once, and takes its share of the budget");
    p = practice_add_part(s, "13.6(c)", 6, "requests when the share finds the prefix", "requests", JUDGE_EXACT, some,
                          0);
    practice_add_slip(p, all, "only that share finds the prefix; the others hold their own copy");
    practice_add_slip(p, held(budget, kv, pr, o, pf, 1 - pct / 100), "the share given is the hits, not the misses");
    return 0;
}

/* ---- 13.2: H200s for DeepSeek-V3 in fp8, experts spread or tensor parallel */

static const double ex2_context[] = {4096, 8192, 16384, 32768};
/* the loads at 8,192 tokens; at another context they scale to the same cache */
static const double ex2_low[] = {64, 128, 192, 256, 320, 384};
static const double ex2_mid[] = {384, 512, 768, 1024, 1536, 2048, 3072};
static const double ex2_high[] = {1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288};

/* The fewest GPUs, a power of two up to 64, that hold the model and
 * `concurrency` sequences of `context` tokens: experts spread over them with
 * each GPU attending to its own share (ep), or the whole model split 1/n
 * with every sequence's latent on every GPU (tp).  0 when none does. */
static int h200s(const model_spec *m, const gpu_spec *g, dtype d, int concurrency, int context, int ep)
{
    precision p = precision_uniform(d);
    char err[256];
    for (int n = 1; n <= 64; n *= 2) {
        fit_check f;
        int bad;
        if (ep)
            bad = ep_memory_fit(m, g, p, memory_policy_default(), n, (concurrency + n - 1) / n, context, &f, err,
                                sizeof err);
        else {
            resident_model rm = {m, p, n};
            bad = memory_fit(g, memory_policy_default(), &rm, 1, 0, concurrency, context, &f, err, sizeof err);
        }
        if (bad == 0 && f.fits)
            return n;
    }
    return 0;
}

static void gpus_part(practice_set *s, const char *id, const char *what, const model_spec *m, const gpu_spec *g,
                      int concurrency, int context, int ep)
{
    int n = h200s(m, g, DT_FP8, concurrency, context, ep);
    practice_part *p = practice_add_part(s, id, 2, what, "H200s", JUDGE_EXACT, n, 0);
    if (p)
        p->judge.rule_note = "exactly; 0 when no degree up to 64 fits";
    int bf16 = h200s(m, g, DT_BF16, concurrency, context, ep);
    if (bf16 > 0 && bf16 != n)
        practice_add_slip(p, bf16, "in fp8 a weight and a latent entry are one byte each, not two");
    if (ep && n > 0) /* the tp layout's count where it exists */
        practice_add_slip(p, h200s(m, g, DT_FP8, concurrency, context, 0),
                          "with the experts spread, each GPU holds its own sequences' latents only");
}

static int exercise_2(practice_set *s, rng_state *r)
{
    model_spec m;
    gpu_spec g;
    if (model_lookup("deepseek-v3", &m) != 0 || gpu_lookup("h200", &g) != 0)
        return -1;
    double ctx = 8192, lo = 128, mid = 512, hi = 1024;
    for (int attempt = 0; attempt < 64; attempt++) {
        ctx = practice_pick(r, s->seed, ex2_context, PRACTICE_COUNT(ex2_context), 1);
        double scale = 8192 / ctx;
        lo = scale * practice_pick(r, s->seed, ex2_low, PRACTICE_COUNT(ex2_low), 1);
        mid = scale * practice_pick(r, s->seed, ex2_mid, PRACTICE_COUNT(ex2_mid), 1);
        hi = scale * practice_pick(r, s->seed, ex2_high, PRACTICE_COUNT(ex2_high), 0);
        int c = (int)ctx;
        int ep_mid = h200s(&m, &g, DT_FP8, (int)mid, c, 1);
        if (h200s(&m, &g, DT_FP8, (int)lo, c, 0) > 0 && h200s(&m, &g, DT_FP8, (int)mid, c, 0) == 0 && ep_mid > 0 &&
            h200s(&m, &g, DT_FP8, (int)hi, c, 1) > ep_mid)
            break;
        ctx = 8192, lo = 128, mid = 512, hi = 1024;
    }
    /* the loads' ranges: the least at the longest context, the most at the shortest */
    double least = 8192 / practice_greatest(ex2_context, PRACTICE_COUNT(ex2_context));
    double most = 8192 / practice_least(ex2_context, PRACTICE_COUNT(ex2_context));
    practice_add_input(s, "ch13_ex2_context", ctx, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex2_context));
    practice_add_input(s, "ch13_ex2_low", lo, PRACTICE_GROUPED, least * practice_least(ex2_low, PRACTICE_COUNT(ex2_low)),
                       most * practice_greatest(ex2_low, PRACTICE_COUNT(ex2_low)));
    practice_add_input(s, "ch13_ex2_mid", mid, PRACTICE_GROUPED, least * practice_least(ex2_mid, PRACTICE_COUNT(ex2_mid)),
                       most * practice_greatest(ex2_mid, PRACTICE_COUNT(ex2_mid)));
    practice_add_input(s, "ch13_ex2_high", hi, PRACTICE_GROUPED,
                       least * practice_least(ex2_high, PRACTICE_COUNT(ex2_high)),
                       most * practice_greatest(ex2_high, PRACTICE_COUNT(ex2_high)));
    int c = (int)ctx;
    gpus_part(s, "13.2(a1)", "H200s, experts spread, the first load", &m, &g, (int)lo, c, 1);
    gpus_part(s, "13.2(a2)", "H200s, tensor parallel, the first load", &m, &g, (int)lo, c, 0);
    gpus_part(s, "13.2(b1)", "H200s, experts spread, the second load", &m, &g, (int)mid, c, 1);
    gpus_part(s, "13.2(b2)", "H200s, tensor parallel, the second load", &m, &g, (int)mid, c, 0);
    gpus_part(s, "13.2(c)", "H200s, experts spread, the third load", &m, &g, (int)hi, c, 1);
    return 0;
}

int practice_build_ch13(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state st[6];
    practice_streams(seed, st, 6);
    rng_state r1 = st[0], r3 = st[1], r4 = st[2], r5 = st[3], r6 = st[4], r2 = st[5];
    if (exercise_1(out, &r1) != 0 || exercise_2(out, &r2) != 0 || exercise_3(out, &r3) != 0 ||
        exercise_4(out, &r4) != 0)
        return -1;
    exercise_5(out, &r5);
    return exercise_6(out, &r6);
}
