/* Disaggregated prefill and decode (code/napkin/serving/disagg.c) on a case worked
 * by hand: LLaMA-3-8B on H100s, 2048-token prompts, 256 output tokens, 32
 * requests in flight per decode GPU, the KV crossing a 50 GB/s link.  The
 * two step times p and d come from request.h (tested in test_request.c);
 * everything the split adds is checked here against hand arithmetic. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "disagg.h"
#include "memory.h"
#include "request.h"

#define near(got, want) \
    cr_expect(fabs((got) - (want)) <= 1e-9 * fabs(want), #got " = %.9g, expected %.9g", (double)(got), (double)(want))

static model_spec M;
static gpu_spec G;

static disagg_setup setup(int prefill, int decode)
{
    M = model_builtin("llama3-8b");
    G = gpu_builtin("h100");
    request_setup b = {&M, &G, precision_uniform(DT_BF16), 1, 2048, 256, 32, 0, 0, memory_policy_default(), 0, 1};
    disagg_setup s = {b, prefill, decode, 50e9, 0};
    return s;
}

Test(disagg, one_split_by_hand)
{
    disagg_setup s = setup(2, 6);
    disagg_result d;
    char err[256];
    cr_assert_eq(disagg_estimate(&s, &d, err, sizeof err), 0, "%s", err);
    request_estimate e;
    cr_assert_eq(request_estimate_compute(&s.base, &e, err, sizeof err), 0, "%s", err);
    const double p = e.prefill_time, dd = e.decode_step;
    /* KV per token: 2 * 32 layers * 8 KV heads * 128 * 2 B = 131,072 B; 2048 tokens = 268,435,456 B */
    near(d.kv_bytes, 268435456.0);
    near(d.kv_time, 268435456.0 / 50e9);
    near(d.ttft, p + 268435456.0 / 50e9);
    near(d.tpot, dd);
    near(d.prefill_rate, 2 / p);
    near(d.decode_rate, 6 * 32 / (255 * dd));
    near(d.requests_per_s, fmin(2 / p, 6 * 32 / (255 * dd)));
    near(d.balanced_ratio, 32 * p / (255 * dd));
    /* the aggregated server: 8 replicas, every other request's prefill stalls each decode */
    near(d.agg_requests_per_s, 8 * e.requests_per_s);
    near(d.agg_tpot, dd + 31 * p / 255);
    cr_expect(d.tpot < d.agg_tpot, "splitting removes the prefill stalls from TPOT");
}

/* A tensor-parallel instance: LLaMA-3-70B at TP 4.  The whole prompt's KV
 * is 2 * 80 layers * 8 KV heads * 128 * 2 B = 327,680 B a token, x 2048 =
 * 671,088,640 B; each of the 4 GPUs holds 2 of the KV heads and sends its
 * quarter, 167,772,160 B, over its own 50 GB/s link at the same time. */
Test(disagg, a_tp_group_moves_the_whole_kv)
{
    disagg_setup s = setup(4, 8);
    M = model_builtin("llama3-70b");
    s.base.tp = 4;
    disagg_result d;
    char err[256];
    cr_assert_eq(disagg_estimate(&s, &d, err, sizeof err), 0, "%s", err);
    near(d.kv_bytes, 671088640.0);
    near(d.kv_time, 167772160.0 / 50e9);
    near(d.ttft, d.prefill_time + 167772160.0 / 50e9);
}

/* With C fixed by the TPOT target, requests/s = min(P / p, (8 - P) C / (255 d))
 * peaks at the P next to 8 r / (1 + r), r the balanced ratio: the search
 * must pick the better of its two neighbours. */
Test(disagg, search_picks_the_balanced_split)
{
    disagg_setup s = setup(1, 1);
    disagg_setup best;
    disagg_result r;
    int found;
    char err[256];
    disagg_result at32;
    s.prefill_gpus = 1;
    s.decode_gpus = 7;
    cr_assert_eq(disagg_estimate(&s, &at32, err, sizeof err), 0, "%s", err);
    /* a TPOT target just above d(32) and below d(33) picks C = 32 */
    disagg_setup s33 = s;
    s33.base.concurrency = 33;
    disagg_result at33;
    cr_assert_eq(disagg_estimate(&s33, &at33, err, sizeof err), 0, "%s", err);
    cr_assert(at33.tpot > at32.tpot);
    double target = (at32.tpot + at33.tpot) / 2;
    cr_assert_eq(disagg_search(&s, 8, 0, target, &best, &r, &found, err, sizeof err), 0, "%s", err);
    cr_assert(found);
    cr_expect_eq(best.base.concurrency, 32);
    const double p = at32.prefill_time, d = at32.decode_step, ratio = 32 * p / (255 * d);
    double x = 8 * ratio / (1 + ratio);
    int lo = (int)floor(x), hi = lo + 1;
    if (lo < 1)
        lo = 1;
    if (hi > 7)
        hi = 7;
    double rate_lo = fmin(lo / p, (8 - lo) * 32 / (255 * d)), rate_hi = fmin(hi / p, (8 - hi) * 32 / (255 * d));
    int want = rate_hi > rate_lo ? hi : lo;
    cr_expect_eq(best.prefill_gpus, want, "balanced at %.3f prefill GPUs", x);
    cr_expect_eq(best.decode_gpus, 8 - want);
    near(r.requests_per_s, fmax(rate_lo, rate_hi));
}

Test(disagg, refusals)
{
    disagg_setup s = setup(0, 4);
    disagg_result d;
    char err[256];
    cr_expect_eq(disagg_estimate(&s, &d, err, sizeof err), -1);
    s = setup(2, 2);
    s.kv_link_bw = 0;
    cr_expect_eq(disagg_estimate(&s, &d, err, sizeof err), -1);
    s = setup(2, 2);
    disagg_setup best;
    int found;
    cr_expect_eq(disagg_search(&s, 1, 0, 0, &best, &d, &found, err, sizeof err), -1);
}

/* Open-loop arrivals on the 2 + 6 split: requests/s at decode concurrency C
 * is min(2 / p, 6 C / (255 d(C))), p and d(C) from request.h; the answer is
 * the smallest C whose rate reaches R (checked at C and C - 1 by that
 * formula).  A rate above the prefill pool's 2 / p is served by no C.  The
 * aggregated server beside it: 8 replicas, each at the smallest C serving
 * R / 8. */
Test(disagg, a_rate_on_one_split)
{
    disagg_setup s = setup(2, 6);
    char err[256];
    const double R = 20;
    int c;
    disagg_result x;
    cr_assert_eq(disagg_for_rate(&s, R, &c, &x, err, sizeof err), 0, "%s", err);
    cr_assert_gt(c, 1);
    request_setup b = s.base;
    request_estimate at, below;
    b.concurrency = c;
    cr_assert_eq(request_estimate_compute(&b, &at, err, sizeof err), 0, "%s", err);
    b.concurrency = c - 1;
    cr_assert_eq(request_estimate_compute(&b, &below, err, sizeof err), 0, "%s", err);
    const double p = at.prefill_time;
    cr_expect_geq(fmin(2 / p, 6.0 * c / (255 * at.decode_step)), R);
    cr_expect_lt(fmin(2 / p, 6.0 * (c - 1) / (255 * below.decode_step)), R);
    near(x.requests_per_s, fmin(2 / p, 6.0 * c / (255 * at.decode_step)));
    near(x.tpot, at.decode_step);
    /* the aggregated server */
    cr_assert_gt(x.agg_concurrency, 0);
    b.concurrency = x.agg_concurrency;
    request_estimate agg;
    cr_assert_eq(request_estimate_compute(&b, &agg, err, sizeof err), 0, "%s", err);
    cr_expect_geq(8 * agg.requests_per_s, R);
    near(x.agg_requests_per_s, 8 * agg.requests_per_s);
    /* more than the prefill pool serves */
    cr_assert_eq(disagg_for_rate(&s, 1.01 * 2 / p, &c, &x, err, sizeof err), 0, "%s", err);
    cr_expect_eq(c, 0);
    cr_expect_lt(x.prefill_rate, 1.01 * 2 / p);
    cr_expect_eq(disagg_for_rate(&s, 0, &c, &x, err, sizeof err), -1);
}

/* ---- Pools as deployed (disagg_pools_*) ---- */

static model_spec DS;
static gpu_spec H200;

/* DeepSeek-V3 in fp8 on H200s, 4096-token prompts, 512-token answers:
 * prefill pool of `pw` DEP 8 workers, decode pool of `dw` DEP 8 workers of
 * batch C a rank; links: 8 GPUs a node, 50 GB/s per GPU across nodes. */
static disagg_plan dep_plan(int pw, int dw, int c)
{
    DS = model_builtin("deepseek-v3");
    H200 = gpu_builtin("h200");
    request_setup b = {&DS, &H200, precision_uniform(DT_FP8), 1, 4096, 512, 1, 0, 0, memory_policy_default(), 0, 1};
    disagg_plan p = {.base = b};
    p.opt.ep = (ep_layout){0, 8, 50e9, 1, 1, 2, 0, 0, MOE_EXCHANGE_ALLTOALL};
    parallel_layout dep8 = {1, 8, 1, 8};
    p.prefill = (disagg_pool){dep8, pw, 1};
    p.decode = (disagg_pool){dep8, dw, c};
    return p;
}

/* The 16-GPU split's hand-off: the MLA cache is one latent of 512 and a rope
 * key of 64 a layer, 61 layers, 1 byte in fp8: 35,136 B a token, x 4096 =
 * 143,917,056 B.  The two pools span 16 GPUs, two nodes of 8, so it
 * crosses the network at 50 GB/s a GPU: 2.878 ms (the prefill rank is one
 * GPU, tp 1, so one link carries it all). */
Test(disagg_pools, handoff_crosses_the_network_between_nodes)
{
    disagg_plan p = dep_plan(1, 1, 32);
    disagg_pools_result r;
    char err[256];
    cr_assert_eq(disagg_pools_estimate(&p, &r, err, sizeof err), 0, "%s", err);
    near(r.kv_bytes, 143917056.0);
    cr_expect_eq(r.kv_over_nvlink, 0);
    near(r.kv_link_bw, 50e9);
    near(r.kv_time, 143917056.0 / 50e9);
    cr_expect_eq(r.gpus, 16);
    /* concurrency: 32 a rank x 8 attention ranks x 1 worker */
    cr_expect_eq(r.concurrency, 256);
    near(r.ttft, r.prefill_wait + r.prefill_step + r.kv_time);
}

/* Pools that fit one node hand off over NVLink: DEP 4 + DEP 4 on 8 GPUs,
 * the H200 row's link bandwidth (the link only: 4 H200s do not hold the
 * model); the tp 2 ranks of a TP-2 x DP-2 prefill
 * worker send half the bytes each. */
Test(disagg_pools, handoff_inside_a_node_is_nvlink)
{
    disagg_plan p = dep_plan(1, 1, 16);
    p.prefill.layout = (parallel_layout){2, 2, 1, 4};
    p.decode.layout = (parallel_layout){1, 4, 1, 4};
    disagg_pools_result r;
    char err[256];
    cr_assert_eq(disagg_pools_estimate(&p, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.gpus, 8);
    cr_expect_eq(r.kv_over_nvlink, 1);
    near(r.kv_time, 143917056.0 / 2 / H200.link_bw);
    cr_expect_eq(r.concurrency, 16 * 4);
    /* the given link wins over the choice */
    p.kv_link_bw = 25e9;
    cr_assert_eq(disagg_pools_estimate(&p, &r, err, sizeof err), 0, "%s", err);
    near(r.kv_time, 143917056.0 / 2 / 25e9);
}

/* The pools' rates and the split's throughput from its own step times:
 * prefill 2 workers x 8 ranks x 1 prompt / p; decode 1 worker x 8 ranks x
 * 40 / (511 d); X the smaller, tokens X x 512, per GPU over 24. */
Test(disagg_pools, rates_by_hand)
{
    disagg_plan p = dep_plan(2, 1, 40);
    disagg_pools_result r;
    char err[256];
    cr_assert_eq(disagg_pools_estimate(&p, &r, err, sizeof err), 0, "%s", err);
    near(r.prefill_rate, 16 / r.prefill_step);
    near(r.decode_rate, 8 * 40 / (511 * r.decode_step));
    near(r.requests_per_s, fmin(r.prefill_rate, r.decode_rate));
    near(r.tokens_per_s, 512 * r.requests_per_s);
    near(r.tokens_per_s_per_gpu, r.tokens_per_s / 24);
    /* batch 1 prefill is request.h's prefill time of one prompt on one rank of the group */
    request_setup s;
    request_options o;
    cr_assert_eq(disagg_pool_request(&p, &p.prefill.layout, 1, "prefill-", &s, &o, err, sizeof err), 0, "%s", err);
    request_estimate e;
    cr_assert_eq(request_estimate_with(&s, &o, &e, err, sizeof err), 0, "%s", err);
    near(r.prefill_step, e.prefill_time);
    cr_expect_eq(o.ep.ep, 8, "DEP 8: the experts whole on each GPU of a group of 8");
}

/* The prefill wait: below capacity the M/D/c wait (queue.h), saturated the
 * closed loop's Little's law.  Hand cases: 2 slots of 1 s at 1 prompt/s,
 * capacity 2: 1/6 s (test_queue.c's mdc_by_hand).  Saturated: N = 100 at
 * X = 2/s cycle 50 s, of which (o - 1) d = 40 s decoding, p = 1 s, t_kv
 * = 0.5 s: W = 50 - 40 - 1 - 0.5 = 8.5 s. */
Test(disagg_pools, prefill_wait_by_hand)
{
    near(disagg_prefill_wait(1, 2, 2, 1.0, 40, 100, 0.5), 1.0 / 6);
    near(disagg_prefill_wait(2, 2, 2, 1.0, 40, 100, 0.5), 8.5);
    cr_expect_eq(disagg_prefill_wait(2, 2, 2, 1.0, 40, 10, 0.5), 0, "a short loop does not wait");
}

/* A mixed expert split (moe_tp 2 x moe_ep 4 over DEP 8) is priced through
 * request.h's general layout: the pool's request carries the layout as
 * given and the all-to-all over its 4 expert groups, and the decode step is
 * request.h's for that layout at the pool's batch.  A split that does not
 * cover the replica's GPUs (2 x 2 for 8) is refused naming the flag. */
Test(disagg_pools, mixed_expert_split_priced_through_the_layout)
{
    disagg_plan p = dep_plan(1, 1, 8);
    p.decode.layout = (parallel_layout){1, 8, 2, 4};
    disagg_pools_result r;
    char err[256];
    cr_assert_eq(disagg_pools_estimate(&p, &r, err, sizeof err), 0, "%s", err);
    request_setup s;
    request_options o;
    cr_assert_eq(disagg_pool_request(&p, &p.decode.layout, 8, "decode-", &s, &o, err, sizeof err), 0, "%s", err);
    cr_expect(o.layout.tp == 1 && o.layout.attention_dp == 8 && o.layout.moe_tp == 2 && o.layout.moe_ep == 4);
    cr_expect_eq(o.ep.ep, 4);
    request_estimate e;
    cr_assert_eq(request_estimate_with(&s, &o, &e, err, sizeof err), 0, "%s", err);
    near(r.decode_step, e.decode_step);
    /* 8 a rank x 8 attention ranks x 1 worker */
    cr_expect_eq(r.concurrency, 64);
    p.decode.layout = (parallel_layout){1, 8, 2, 2};
    cr_expect_eq(disagg_pools_estimate(&p, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "--decode-moe-tp 2"), "%s", err);
}

/* The search on 16 H200s (TTFT <= 2 s, TPOT <= 50 ms) picks expert-parallel
 * pools with data-parallel attention over every tensor-parallel pair it
 * also tries, and its best meets both targets. */
Test(disagg_pools, search_picks_dep_pools_for_deepseek)
{
    disagg_plan p = dep_plan(1, 1, 1), best;
    disagg_pools_result r;
    int found;
    char err[256];
    cr_assert_eq(disagg_pools_search(&p, 16, 2.0, 0.05, &best, &r, &found, err, sizeof err), 0, "%s", err);
    cr_assert(found);
    cr_expect(best.decode.layout.moe_ep > 1 && best.decode.layout.moe_tp == 1, "decode pool: an EP group");
    cr_expect(best.decode.layout.attention_dp > 1, "decode pool: data-parallel attention");
    cr_expect(r.ttft <= 2.0 && r.tpot <= 0.05);
    cr_expect(r.gpus <= 16);
    cr_expect_eq(r.concurrency, best.decode.batch * best.decode.layout.attention_dp * best.decode.workers);
    /* the aggregated best on the same GPUs serves less per GPU */
    parallel_layout al;
    int ac;
    request_estimate ae;
    double per_gpu;
    cr_assert_eq(disagg_aggregated_best(&p, 16, 2.0, 0.05, &al, &ac, &ae, &per_gpu, err, sizeof err), 0, "%s", err);
    cr_expect(ac > 0);
    cr_expect(ae.tpot <= 0.05 && ae.ttft_closed <= 2.0);
}
