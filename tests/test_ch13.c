/* napkin: instructor (the student kit leaves it out: it derives 13.3's answer)
 *
 * Chapter 13's argument, checked from the chapter down: the values
 * code/ch13/today.c records, through the functions it calls, against hand
 * derivations from the configs (DeepSeek-V3: 61 layers, hidden 7168, 128
 * heads, kv_lora 512, rope 64, nope 128, v 128, 256 experts of 2048 top 8,
 * one shared, three dense layers) and the GPU rows. */
#include <criterion/criterion.h>

#include <math.h>

#include "disagg.h"
#include "expert_parallel.h"
#include "memory.h"
#include "moe.h"
#include "request.h"

#include "chapter_values.h"

static model_spec ds;
static gpu_spec h200;

static void load(void)
{
    ds = model_builtin("deepseek-v3");
    h200 = gpu_builtin("h200");
}

TestSuite(ch13, .init = load);

/* 512 + 64 = 576 values a token a layer; the heads it replaces hold
 * 128 x (192 + 128) = 40,960; bf16 over 61 layers: 70,272 B against
 * 4,997,120 B, 71 times more. */
Test(ch13, latent_against_the_heads)
{
    cr_expect_eq(kv_bytes_per_token(&ds, DT_BF16), 70272);
    cr_expect_eq(61.0 * 40960 * 2, 4997120);
    cr_expect_eq(lround(4997120.0 / 70272), 71);
}

/* Eight H200s, fp8 weights, bf16 latents, experts over the eight: weights
 * 671,026,404,352 less 7/8 of the 653,908,770,816 routed; one 8k sequence
 * 70,272 x 8192 = 575,668,224 B. */
Test(ch13, sequences_a_gpu_holds)
{
    precision p = precision_uniform(DT_FP8);
    p.kv = DT_BF16;
    memory_policy pol = memory_policy_default();
    fit_check f;
    char err[256];
    cr_assert_eq(ep_memory_fit(&ds, &h200, p, pol, 8, 1, 8192, &f, err, sizeof err), 0, "%s", err);
    const double weights = 671026404352.0 - 653908770816.0 * 7 / 8;
    cr_expect(fabs(f.weights - weights) < 1, "%f", f.weights);
    const double act = activation_bytes(&ds, pol.activation_tokens, pol.sampled_tokens, DT_FP8, 1);
    const double budget = 0.9 * h200.mem_bytes - weights - act;
    cr_expect_eq(f.max_batch, (int)floor(budget / 575668224.0));
    /* the 8-head GQA cache of the same layers: 61 x 2048 x 2 x 8192 B a sequence */
    cr_expect(floor(budget / (61.0 * 2048 * 2 * 8192)) < f.max_batch / 3);
    /* with TP 8 every GPU keeps every sequence's latent: 671,026,404,352 / 8 of weights */
    resident_model rm = {&ds, p, 8};
    fit_check t;
    cr_assert_eq(memory_fit(&h200, pol, &rm, 1, 0, 1, 8192, &t, err, sizeof err), 0, "%s", err);
    const double act8 = activation_bytes(&ds, pol.activation_tokens, pol.sampled_tokens, DT_FP8, 8);
    cr_expect_eq(t.max_batch, (int)floor((0.9 * h200.mem_bytes - 671026404352.0 / 8 - act8) / 575668224.0));
    cr_expect(t.max_batch < 8 * f.max_batch, "data-parallel attention holds more");
}

/* 256 (1 - (31/32)^64) = 256 (1 - 0.131084) = 222.44; (31/32)^T = 0.1 at
 * T = ln 0.1 / ln(31/32) = 72.52, so 73 tokens. */
Test(ch13, experts_touched)
{
    double pi[256];
    cr_assert_eq(moe_zipf_inclusion(256, 8, 0, pi), 0);
    cr_expect(fabs(moe_expected_touched(pi, 256, 64) - 222.44) < 0.01);
    cr_expect_eq(ceil(log(0.1) / log(31.0 / 32)), 73);
    cr_expect(moe_expected_touched(pi, 256, 72) < 0.9 * 256 && moe_expected_touched(pi, 256, 73) >= 0.9 * 256);
}

/* 64 sequences a GPU, a token's copies to one GPU merged: inside a node a
 * top-8 misses a GPU's 32 experts with probability prod_{i<8} (224-i)/(256-i)
 * = 0.33816850, so 64 x 8 (1 - 0.33816850) x 7/8 x 7168 = 2,125,315.67 B;
 * over 32 GPUs (8 experts each) prod_{i<8} (248-i)/(256-i) = 0.77291250 and
 * 64 x 32 (1 - 0.77291250) x 31/32 x 7168 = 3,229,482.15 B. */
Test(ch13, all_to_all_bytes)
{
    ep_layout l8 = {8, 8, 50e9, 1, 1, 2, 0, 0, MOE_EXCHANGE_ALLTOALL}, l32 = {32, 8, 50e9, 1, 1, 2, 0, 0, MOE_EXCHANGE_ALLTOALL};
    ep_cost a, b;
    char err[256];
    cr_assert_eq(ep_step_cost(&ds, &h200, &l8, 64, &a, err, sizeof err), 0);
    cr_assert_eq(ep_step_cost(&ds, &h200, &l32, 64, &b, err, sizeof err), 0);
    cr_expect(fabs(a.dispatch_bytes / 2125315.67017 - 1) < 1e-9, "%.3f", a.dispatch_bytes);
    cr_expect(fabs(b.dispatch_bytes / 3229482.15207 - 1) < 1e-9, "%.3f", b.dispatch_bytes);
}

/* LLaMA-3-70B, 16 H100s in TP-4 instances: the split the search picks
 * serves min(P/4/p, D/4 C/(511 d)) requests/s, no split of whole
 * instances serves more at the same C, and at a 30 ms TPOT it beats the
 * aggregated replicas. */
Test(ch13, disaggregated_split)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    request_setup b = {&m, &g, precision_uniform(DT_BF16), 4, 4096, 512, 1, 0, 0, memory_policy_default(), 0, 1};
    disagg_setup s = {b, 4, 4, g.link_bw, 0};
    disagg_setup best;
    disagg_result r;
    int found;
    char err[256];
    cr_assert_eq(disagg_search(&s, 16, 0, 0.03, &best, &r, &found, err, sizeof err), 0, "%s", err);
    cr_assert(found);
    const double p = r.prefill_time, d = r.decode_step, C = best.base.concurrency;
    cr_expect(fabs(r.requests_per_s - fmin(best.prefill_gpus / 4 / p, best.decode_gpus / 4 * C / (511 * d))) <
              1e-9 * r.requests_per_s);
    for (int P = 4; P <= 12; P += 4)
        cr_expect(fmin(P / 4 / p, (16 - P) / 4 * C / (511 * d)) <= r.requests_per_s * (1 + 1e-12), "P=%d", P);
    cr_expect(r.tpot <= 0.03 && r.agg_tpot <= 0.03);
    cr_expect(r.requests_per_s > r.agg_requests_per_s, "%g vs %g", r.requests_per_s, r.agg_requests_per_s);
}

/* LLaMA-3-8B, 4096-token prompts, 3072 shared, 90% hits: a slot holds
 * 4352 - floor(0.9 x 3072) = 1588 tokens of its own, the replica the 3072
 * once, at 131,072 B a token. */
Test(ch13, prefix_capacity)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    request_setup s = {&m, &g, precision_uniform(DT_BF16), 1, 4096, 256, 16, 0, 0, memory_policy_default(), 2.0, 1};
    request_estimate none, hit;
    char err[256];
    cr_assert_eq(request_estimate_compute(&s, &none, err, sizeof err), 0);
    cr_assert_eq(request_estimate_cached(&s, 3072, 0.9, &hit, err, sizeof err), 0);
    const double budget = none.fit.kv_budget;
    cr_expect_eq(hit.fit.max_batch, (int)floor((budget - 3072 * 131072.0) / (1588 * 131072.0)));
    cr_expect(hit.ttft < none.ttft);
}

/* The chapter's count of DeepSeek-V3 (tests/test_models_today.c derives
 * each term): 37,552,282,624 with the embedding, 36,625,603,584 without,
 * 13,463,426,048 in the MTP module as released (671.03 + 13.46 = 684.49B,
 * the card's 685B), 688,100,352 of it used per token: 37,313,703,936 per
 * training token without the embedding, +0.85 % from the report's 37B. */
Test(ch13, deepseek_v3_parameter_count)
{
    cr_expect_eq(chapter_value("ch13/today", "ch13_ds_active_b"), 37.55);
    cr_expect_eq(chapter_value("ch13/today", "ch13_ds_active_ne_b"), 36.63);
    cr_expect_eq(chapter_value("ch13/today", "ch13_ds_mtp_b"), 13.46);
    cr_expect_eq(chapter_value("ch13/today", "ch13_ds_active_mtp_b"), 37.31);
    cr_expect_eq(chapter_value("ch13/today", "ch13_ds_active_mtp_pct"), 0.8);
    cr_expect_eq(chapter_value("ch13/today", "ch13_ds_released_b"), 684.5);
    cr_expect(fabs(37313703936.0 / 37e9 - 1) < 0.01, "within 1 % of the report");
}

/* The busiest GPU of EP 8 under the chapter's Zipf 0.8 router, by hand in
 * this test: weights (i + 1)^-0.8 scaled to sum 8, those above 1 capped and
 * the rest rescaled; GPU 0 holds experts 0, 8, 16, ...; its load is
 * 8 x (its inclusion sum) / 8. */
Test(ch13, the_busiest_gpu_of_a_skewed_router)
{
    double pi[256], sum = 0;
    for (int i = 0; i < 256; i++)
        sum += pi[i] = pow(i + 1.0, -0.8);
    for (int i = 0; i < 256; i++)
        pi[i] *= 8 / sum;
    for (int round = 0; round < 256; round++) {
        double capped = 0, rest = 0;
        int over = 0;
        for (int i = 0; i < 256; i++) {
            if (pi[i] >= 1) {
                over += pi[i] > 1;
                pi[i] = 1;
                capped++;
            } else
                rest += pi[i];
        }
        if (!over)
            break;
        for (int i = 0; i < 256; i++)
            if (pi[i] < 1)
                pi[i] *= (8 - capped) / rest;
    }
    double share = 0;
    for (int i = 0; i < 256; i += 8)
        share += pi[i];
    cr_expect(fabs(chapter_value("ch13/today", "ch13_skew_load") - share) < 0.005, "load %f", share);
    cr_expect_gt(chapter_value("ch13/today", "ch13_skew_comm_ms"), chapter_value("ch13/today", "ch13_flat_comm_ms"));
}

/* Sixteen H200s, DeepSeek-V3 in fp8, TPOT <= 50 ms: the chapter's
 * concurrencies are the largest that meet the target (one more does not),
 * and two EP 8 groups (16 attention replicas of one GPU) serve more than
 * two TP 8 replicas: each GPU reads only its own sequences' latents. */
Test(ch13, expert_parallel_layout_in_the_search)
{
    const int ca = (int)chapter_value("ch13/today", "ch13_srch_tp8_c"), cb = (int)chapter_value("ch13/today", "ch13_srch_ep8_c");
    request_setup s = {&ds, &h200, precision_uniform(DT_FP8), 8, 4096, 512, ca, 0, 0, memory_policy_default(), 0, 1};
    ep_layout l = {8, 8, 50e9, 1, 1, 2, 0, 0, MOE_EXCHANGE_ALLTOALL};
    request_options none = {.prefix_tokens = 0}, ep = {.ep = l};
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_with(&s, &none, &e, err, sizeof err), 0, "%s", err);
    cr_expect(e.tpot <= 0.05 && e.fit.fits);
    s.concurrency = ca + 1;
    cr_assert_eq(request_estimate_with(&s, &none, &e, err, sizeof err), 0, "%s", err);
    cr_expect(e.tpot > 0.05 || !e.fit.fits);
    s.tp = 1;
    s.concurrency = cb;
    cr_assert_eq(request_estimate_with(&s, &ep, &e, err, sizeof err), 0, "%s", err);
    cr_expect(e.tpot <= 0.05 && e.fit.fits);
    const double tps = 16 * e.tokens_per_s; /* 16 attention replicas */
    s.concurrency = cb + 1;
    cr_assert_eq(request_estimate_with(&s, &ep, &e, err, sizeof err), 0, "%s", err);
    cr_expect(e.tpot > 0.05 || !e.fit.fits);
    cr_expect(fabs(chapter_value("ch13/today", "ch13_srch_ep8_ktps") - tps / 1e3) < 0.05);
    cr_expect_gt(chapter_value("ch13/today", "ch13_srch_gain"), 1.5);
}
