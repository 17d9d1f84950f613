/* Chapter 13: serving today's models.  DeepSeek-V3's latent cache against
 * the caches it replaces, the experts a MoE decode touches and the bytes it
 * reads against the batch, the all-to-all of expert parallelism, a
 * disaggregated server against one pool, and prefix caching.  Records the
 * values the chapter quotes and writes 13-experts.tsv and 13-moe-step.tsv. */
#include "disagg.h"
#include "expert_parallel.h"
#include "measured.h"
#include "memory.h"
#include "moe.h"
#include "notebook.h"
#include "rate_table.h"
#include "request.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT 8192
#define EP 8
#define SKEW 0.8 /* an assumed Zipf exponent for a skewed router, not a measurement */

static void die(const char *what, const char *err)
{
    fprintf(stderr, "today: %s: %s\n", what, err);
    exit(1);
}

static ep_layout layout(int ep)
{
    ep_layout l = {ep, 8, 50e9, 1.0, 1.0, 2.0, 0, 0, MOE_EXCHANGE_ALLTOALL}; /* fp8 dispatch, bf16 combine, 400 Gb/s per GPU across nodes */
    return l;
}

/* Latent attention against the caches it replaces, at DeepSeek-V3's shape. */
static void kv_ceiling(const model_spec *m, const gpu_spec *g)
{
    char err[256];
    const double L = m->layers;
    const double mla = m->kv_lora_rank + m->qk_rope_dim;                 /* cached values per token and layer */
    const double mha = (double)m->heads * (m->qk_nope_dim + m->qk_rope_dim + m->v_head_dim); /* K 192 + V 128 a head */
    const double gqa = 2.0 * 8 * 128;                                    /* 8 KV heads of 128, LLaMA-style */
    nb_value("ch13_mla_values", "%.0f", mla);
    nb_value("ch13_mha_values", "%.0f", mha);
    nb_value("ch13_gqa_values", "%.0f", gqa);
    nb_value("ch13_mha_over_mla", "%.0f", mha / mla);
    nb_value("ch13_gqa_over_mla", "%.1f", gqa / mla);
    nb_value("ch13_mla_kb", "%.1f", kv_bytes_per_token(m, DT_BF16) / 1e3);
    nb_value("ch13_mha_mb", "%.2f", L * mha * 2 / 1e6);
    nb_value("ch13_gqa_kb", "%.0f", L * gqa * 2 / 1e3);

    /* eight H200s, fp8 weights, bf16 KV, experts spread over the eight */
    precision p = precision_uniform(DT_FP8);
    p.kv = DT_BF16;
    fit_check f;
    if (ep_memory_fit(m, g, p, memory_policy_default(), EP, 1, CONTEXT, &f, err, sizeof err) != 0)
        die("ep fit", err);
    nb_value("ch13_ep8_weights_gb", "%.1f", f.weights / 1e9);
    nb_value("ch13_ep8_kv_budget_gb", "%.1f", f.kv_budget / 1e9);
    const double seq_mla = kv_bytes_per_sequence(m, DT_BF16, CONTEXT);
    nb_value("ch13_mla_batch", "%d", f.max_batch);
    nb_value("ch13_mla_batch_group", "%d", f.max_batch * EP);
    nb_value("ch13_gqa_batch", "%.0f", floor(f.kv_budget / (seq_mla * gqa / mla)));
    nb_value("ch13_mha_batch", "%.0f", floor(f.kv_budget / (seq_mla * mha / mla)));
    nb_value("ch13_mla_seq_mb", "%.0f", seq_mla / 1e6);

    /* tensor parallelism instead: the latent cannot be split by head, so each of the 8 holds it whole */
    resident_model rm = {m, p, 8};
    fit_check t;
    if (memory_fit(g, memory_policy_default(), &rm, 1, 0, 1, CONTEXT, &t, err, sizeof err) != 0)
        die("tp fit", err);
    nb_value("ch13_tp8_weights_gb", "%.1f", t.weights / 1e9);
    nb_value("ch13_tp8_batch", "%d", t.max_batch);
}

/* Experts touched against tokens: the formula and a seeded simulation. */
static void experts_touched(const model_spec *m)
{
    const int E = m->experts, k = m->experts_active;
    double *flat = malloc(E * sizeof *flat), *skew = malloc(E * sizeof *skew);
    if (!flat || !skew || moe_zipf_inclusion(E, k, 0, flat) || moe_zipf_inclusion(E, k, SKEW, skew))
        die("inclusion", "bad routing");
    FILE *out = nb_data_open("13-experts.tsv");
    fprintf(out, "# tokens\tuniform\tskewed\tsim_uniform\tsim_skewed (DeepSeek-V3: 256 experts, top 8; Zipf %.1f)\n",
            SKEW);
    for (int t = 1; t <= 4096; t *= 2) {
        double su, ss, se;
        if (moe_simulate_touched(flat, E, k, t, 200, 13 + t, &su, &se) ||
            moe_simulate_touched(skew, E, k, t, 200, 1300 + t, &ss, &se))
            die("simulation", "bad arguments");
        fprintf(out, "%d\t%.4f\t%.4f\t%.4f\t%.4f\n", t, moe_expected_touched(flat, E, t),
                moe_expected_touched(skew, E, t), su, ss);
    }
    fclose(out);
    nb_value("ch13_touched_8", "%.1f", moe_expected_touched(flat, E, 8));
    nb_value("ch13_touched_8_say", "%.0f", moe_expected_touched(flat, E, 8)); /* the key numbers, as said aloud */
    nb_value("ch13_touched_64", "%.0f", moe_expected_touched(flat, E, 64));
    nb_value("ch13_touched_64_skew", "%.0f", moe_expected_touched(skew, E, 64));
    nb_value("ch13_touched_512", "%.0f", moe_expected_touched(flat, E, 512));
    nb_value("ch13_touched_512_skew", "%.0f", moe_expected_touched(skew, E, 512));
    /* tokens until 90% of the experts are touched: (1 - k/E)^T = 0.1 */
    nb_value("ch13_tokens_90", "%.0f", ceil(log(0.1) / log(1 - (double)k / E)));
    nb_value("ch13_skew", "%.1f", SKEW);
    free(flat);
    free(skew);
}

/* A decode step on one GPU of EP 8 against its batch. */
static void moe_step(const model_spec *m, const gpu_spec *g)
{
    char err[256];
    precision p = precision_uniform(DT_FP8);
    ep_layout l = layout(EP);
    fit_check f;
    if (ep_memory_fit(m, g, p, memory_policy_default(), EP, 1, CONTEXT, &f, err, sizeof err) != 0)
        die("fit", err);
    FILE *out = nb_data_open("13-moe-step.tsv");
    fprintf(out, "# batch_per_gpu\tweight_gb\tkv_gb\tstep_ms\ttokens_per_s_per_gpu (DeepSeek-V3, fp8, EP 8 on "
                 "H200, %d-token contexts)\n", CONTEXT);
    int compute_bound = 0;
    for (int b = 1; b <= f.max_batch; b = b < 4 ? b + 1 : b * 5 / 4) {
        step_shape s = decode_shape(b, CONTEXT, 1, p);
        step_cost c;
        if (ep_decoder_step_cost(m, g, &s, &l, &c, err, sizeof err) != 0)
            die("step", err);
        fprintf(out, "%d\t%.3f\t%.3f\t%.4f\t%.1f\n", b, c.weight_bytes / 1e9, c.kv_bytes / 1e9, c.time * 1e3,
                b / c.time);
        if (!compute_bound && c.time_compute > c.time_memory)
            compute_bound = b;
        if (b == 1) {
            nb_value("ch13_b1_weight_gb", "%.1f", c.weight_bytes / 1e9);
            nb_value("ch13_b1_step_ms", "%.1f", c.time * 1e3);
        }
    }
    fclose(out);
    step_shape s = decode_shape(f.max_batch, CONTEXT, 1, p);
    step_cost c;
    if (ep_decoder_step_cost(m, g, &s, &l, &c, err, sizeof err) != 0)
        die("step", err);
    nb_value("ch13_fp8_max_batch", "%d", f.max_batch);
    nb_value("ch13_max_weight_gb", "%.1f", c.weight_bytes / 1e9);
    nb_value("ch13_max_kv_gb", "%.1f", c.kv_bytes / 1e9);
    nb_value("ch13_max_step_ms", "%.1f", c.time * 1e3);
    nb_value("ch13_max_tokens_per_s_gpu", "%.0f", f.max_batch / c.time);
    nb_value("ch13_compute_bound_batch", "%d", compute_bound);
    nb_value("ch13_max_intensity", "%.0f", c.intensity);
    nb_value("ch13_ridge_h200_fp8", "%.0f", gpu_peak_flops(g, DT_FP8) / g->mem_bw);
}

static void measured_layer(const model_spec *m);

/* The all-to-all at 64 sequences a GPU, one node against four. */
static void all_to_all(const model_spec *m, const gpu_spec *g)
{
    char err[256];
    precision p = precision_uniform(DT_FP8);
    for (int i = 0; i < 2; i++) {
        int ep = i ? 32 : 8;
        ep_layout l = layout(ep);
        ep_cost a;
        step_shape s = decode_shape(64, CONTEXT, 1, p);
        step_cost c;
        if (ep_step_cost(m, g, &l, 64, &a, err, sizeof err) != 0 ||
            ep_decoder_step_cost(m, g, &s, &l, &c, err, sizeof err) != 0)
            die("ep", err);
        char name[64];
        snprintf(name, sizeof name, "ch13_ep%d_dispatch_mb", ep);
        nb_value(name, "%.2f", a.dispatch_bytes / 1e6);
        snprintf(name, sizeof name, "ch13_ep%d_layer_us", ep);
        nb_value(name, "%.0f", a.layer_time * 1e6);
        snprintf(name, sizeof name, "ch13_ep%d_comm_ms", ep);
        nb_value(name, "%.1f", c.time_comm * 1e3);
        snprintf(name, sizeof name, "ch13_ep%d_comm_pct", ep);
        nb_value(name, "%.0f", 100 * c.time_comm / c.time);
        snprintf(name, sizeof name, "ch13_ep%d_step_ms", ep);
        nb_value(name, "%.1f", c.time * 1e3);
    }
    /* the estimate beside that bound: EP 8 at the published rates, as napkin ep prints it; the all-to-all
     * now at the engine's measured kernel (TensorRT-LLM's DeepEP low-latency, SGLang's DeepEP) */
    static const char *const cals[2] = {"published:h200_sxm/trtllm", "published:h200_sxm/sglang"};
    static const char *const tags[2] = {"trt", "sgl"};
    for (int i = 0; i < 2; i++) {
        rate_model r;
        gpu_spec cal = gpu_builtin_calibrated(g->key, cals[i], &r);
        ep_layout l = layout(8);
        step_shape s = decode_shape(64, CONTEXT, 1, p);
        step_cost c;
        ep_cost a;
        if (ep_decoder_step_cost(m, &cal, &s, &l, &c, err, sizeof err) != 0 ||
            ep_step_cost(m, &cal, &l, 64, &a, err, sizeof err) != 0)
            die("ep calibrated", err);
        char name[64];
        if (i == 0)
            nb_value("ch13_ep8_step_cal_ms", "%.1f", c.time * 1e3);
        snprintf(name, sizeof name, "ch13_ep8_layer_%s_us", tags[i]);
        nb_value(name, "%.0f", a.layer_time * 1e6);
        snprintf(name, sizeof name, "ch13_ep8_comm_%s_ms", tags[i]);
        nb_value(name, "%.1f", c.time_comm * 1e3);
        snprintf(name, sizeof name, "ch13_ep8_comm_%s_pct", tags[i]);
        nb_value(name, "%.0f", 100 * c.time_comm / c.time);
    }
    measured_layer(m);
}

/* The measured dispatch + combine at the chapter's shape (hidden 7168, top-8
 * of 256 experts, 64 tokens a GPU, EP 8 in one node), as the engines' tables
 * hold it (code/specs/measured/h200_sxm/<engine>/alltoall.tsv, from
 * aiconfigurator-core 0.12.0): the kernel each serves decode with. */
static void measured_layer(const model_spec *m)
{
    static const struct {
        const char *engine, *impl, *dispatch_dtype, *combine_dtype, *tag;
    } K[2] = {{"trtllm", "trtllm_deepep_ll", "fp8", "bf16", "trt"}, {"sglang", "deepep_ll", "default", "default", "sgl"}};
    for (int i = 0; i < 2; i++) {
        char path[256], err[256];
        snprintf(path, sizeof path, "code/specs/measured/h200_sxm/%s/alltoall.tsv", K[i].engine);
        measured_table t;
        if (measured_table_load(path, &t, err, sizeof err) != 0)
            die("measured all-to-all", err);
        const int ci = measured_col(&t, "implementation"), cp = measured_col(&t, "phase"),
                  cd = measured_col(&t, "dtype"), ce = measured_col(&t, "ep"), ch = measured_col(&t, "hidden"),
                  ck = measured_col(&t, "topk"), cx = measured_col(&t, "experts"), cn = measured_col(&t, "tokens"),
                  cs = measured_col(&t, "time_s");
        double sum = 0;
        int found = 0;
        for (int r = 0; r < t.nrows; r++) {
            const char *phase = measured_cell(&t, r, cp);
            const char *want = strcmp(phase, "dispatch") == 0 ? K[i].dispatch_dtype : K[i].combine_dtype;
            if (strcmp(measured_cell(&t, r, ci), K[i].impl) || strcmp(measured_cell(&t, r, cd), want) ||
                measured_num(&t, r, ce) != EP || measured_num(&t, r, ch) != m->hidden ||
                measured_num(&t, r, ck) != m->experts_active || measured_num(&t, r, cx) != m->experts ||
                measured_num(&t, r, cn) != 64)
                continue;
            sum += measured_num(&t, r, cs);
            found++;
        }
        measured_table_free(&t);
        if (found != 2)
            die("measured all-to-all", "no dispatch and combine row at the chapter's shape");
        char name[64];
        snprintf(name, sizeof name, "ch13_ep8_meas_%s_us", K[i].tag);
        nb_value(name, "%.0f", sum * 1e6);
    }
}

/* LLaMA-3-70B on 16 H100s in pools of tp 4: one pool against two.  The
 * pools span two nodes of eight, so the KV crosses the network at 50 GB/s
 * a GPU (disagg_kv_link), not NVLink. */
static void disaggregation(void)
{
    char err[256];
    static model_spec m;
    static gpu_spec g;
    m = model_builtin("llama3-70b");
    g = gpu_builtin("h100");
    request_setup b = {&m, &g, precision_uniform(DT_BF16), 4, 4096, 512, 1, 0, 0, memory_policy_default(), 0, 1};
    double link;
    disagg_kv_link(&g, 16, 8, 50e9, &link);
    disagg_setup s = {b, 4, 4, link, 0};
    static const double targets[2] = {0.05, 0.03};
    for (int i = 0; i < 2; i++) {
        disagg_setup best;
        disagg_result r;
        int found;
        if (disagg_search(&s, 16, 0, targets[i], &best, &r, &found, err, sizeof err) != 0)
            die("disagg", err);
        if (!found)
            die("disagg", "no split meets the target");
        const char *t = i ? "30" : "50";
        char name[64];
#define V(fmt, what, x)                                                \
    do {                                                               \
        snprintf(name, sizeof name, "ch13_dis%s_%s", t, what);         \
        nb_value(name, fmt, x);                                        \
    } while (0)
        V("%d", "prefill_gpus", best.prefill_gpus);
        V("%d", "decode_gpus", best.decode_gpus);
        V("%d", "c", best.base.concurrency);
        V("%.2f", "rps", r.requests_per_s);
        V("%.0f", "ttft_ms", r.ttft * 1e3);
        V("%.1f", "tpot_ms", r.tpot * 1e3);
        V("%.2f", "ratio", r.balanced_ratio);
        V("%.2f", "kv_gb", r.kv_bytes / 1e9);
        V("%.2f", "kv_ms", r.kv_time * 1e3);
        V("%d", "agg_c", r.agg_concurrency);
        V("%.2f", "agg_rps", isnan(r.agg_requests_per_s) ? 0 : r.agg_requests_per_s);
        V("%.1f", "agg_tpot_ms", isnan(r.agg_tpot) ? 0 : r.agg_tpot * 1e3);
#undef V
    }
}

/* LLaMA-3-8B on one H100: 4096-token prompts of which 3072 are a shared system prompt. */
static void prefix_caching(void)
{
    char err[256];
    static model_spec m;
    static gpu_spec g;
    m = model_builtin("llama3-8b");
    g = gpu_builtin("h100");
    request_setup s = {&m, &g, precision_uniform(DT_BF16), 1, 4096, 256, 16, 0, 0, memory_policy_default(), 2.0, 1};
    request_estimate none, hit;
    if (request_estimate_compute(&s, &none, err, sizeof err) != 0 ||
        request_estimate_cached(&s, 3072, 0.9, &hit, err, sizeof err) != 0)
        die("prefix", err);
    nb_value("ch13_px_ttft_ms", "%.0f", none.ttft * 1e3);
    nb_value("ch13_px_hit_ttft_ms", "%.0f", hit.ttft * 1e3);
    nb_value("ch13_px_max_c", "%d", none.fit.max_batch);
    nb_value("ch13_px_hit_max_c", "%d", hit.fit.max_batch);
    nb_value("ch13_px_cost_in", "%.3f", none.cost_per_m_input);
    nb_value("ch13_px_hit_cost_in", "%.3f", hit.cost_per_m_input);
    nb_value("ch13_px_tpot_ms", "%.1f", none.tpot * 1e3);
    nb_value("ch13_px_hit_tpot_ms", "%.1f", hit.tpot * 1e3);
}

/* DeepSeek-V3's parameters under each convention, against the report's 37B. */
static void parameters(const model_spec *m)
{
    param_count p = model_params(m);
    nb_value("ch13_ds_total_b", "%.1f", p.total / 1e9);
    nb_value("ch13_ds_total_b_say", "%.0f", p.total / 1e9); /* the key numbers, as said aloud */
    nb_value("ch13_ds_active_b", "%.2f", p.active / 1e9);
    nb_value("ch13_ds_active_ne_b", "%.2f", p.active_nonembedding / 1e9);
    nb_value("ch13_ds_active_ne_b_say", "%.0f", p.active_nonembedding / 1e9);
    nb_value("ch13_ds_mtp_b", "%.2f", p.mtp / 1e9);
    nb_value("ch13_ds_mtp_active_b", "%.2f", p.mtp_active / 1e9);
    nb_value("ch13_ds_active_mtp_b", "%.2f", (p.active_nonembedding + p.mtp_active) / 1e9);
    nb_value("ch13_ds_active_mtp_pct", "%.1f", ((p.active_nonembedding + p.mtp_active) / 37e9 - 1) * 100);
    nb_value("ch13_ds_active_pct", "%.1f", (p.active / 37e9 - 1) * 100);
    nb_value("ch13_ds_released_b", "%.1f", (p.total + p.mtp) / 1e9);
}

/* A skewed router on the EP 8 group: the hottest GPU's load and the step it sets. */
static void skewed_group(const model_spec *m, const gpu_spec *g)
{
    char err[256];
    double load, touched;
    if (moe_zipf_hot_rank(m->experts, m->experts_active, SKEW, EP, 64.0 * EP, &load, &touched) != 0)
        die("hot rank", "bad arguments");
    nb_value("ch13_skew_load", "%.2f", load);
    nb_value("ch13_skew_touched", "%.1f", touched);
    ep_layout flat = layout(EP), skew = flat;
    skew.routing_skew = SKEW;
    step_shape s = decode_shape(64, CONTEXT, 1, precision_uniform(DT_FP8));
    step_cost a, b;
    if (ep_decoder_step_cost(m, g, &s, &flat, &a, err, sizeof err) != 0 ||
        ep_decoder_step_cost(m, g, &s, &skew, &b, err, sizeof err) != 0)
        die("skewed step", err);
    nb_value("ch13_skew_step_ms", "%.1f", b.time * 1e3);
    nb_value("ch13_flat_step_ms", "%.1f", a.time * 1e3);
    nb_value("ch13_skew_comm_ms", "%.2f", b.time_comm * 1e3);
    nb_value("ch13_flat_comm_ms", "%.2f", a.time_comm * 1e3);
}

/* Sixteen H200s serving DeepSeek-V3 in fp8 under a 50 ms TPOT target: two
 * tensor-parallel replicas of 8 against two EP groups of 8 with
 * data-parallel attention (one attention replica per GPU), as serve
 * --search compares them. */
static void serve_layouts(const model_spec *m, const gpu_spec *g)
{
    char err[256];
    /* the bound (the datasheet row), then the estimate at TensorRT-LLM's published rates, its
     * all-to-all the measured DeepEP low-latency kernel */
    rate_model rates;
    gpu_spec cal = gpu_builtin_calibrated(g->key, "published:h200_sxm/trtllm", &rates);
    for (int k = 0; k < 2; k++) {
        const char *suffix = k ? "_cal" : "";
        request_setup s = {m, k ? &cal : g, precision_uniform(DT_FP8), 8, 4096, 512, 1, 0, 0, memory_policy_default(),
                           0, 1};
        request_options tp8 = {.prefix_tokens = 0}, ep8 = {.ep = layout(EP)};
        request_estimate a, b;
        int ca = request_best_concurrency_with(&s, &tp8, 0, 0.05, err, sizeof err);
        s.concurrency = ca;
        if (ca <= 0 || request_estimate_with(&s, &tp8, &a, err, sizeof err) != 0)
            die("tp 8 layout", ca < 0 ? err : "no concurrency meets the target");
        s.tp = 1;
        int cb = request_best_concurrency_with(&s, &ep8, 0, 0.05, err, sizeof err);
        s.concurrency = cb;
        if (cb <= 0 || request_estimate_with(&s, &ep8, &b, err, sizeof err) != 0)
            die("ep 8 layout", cb < 0 ? err : "no concurrency meets the target");
        const double tps_tp8 = 2 * a.tokens_per_s, tps_ep8 = 16 * b.tokens_per_s; /* 2 replicas; 16 attention replicas */
        char name[64];
#define SRCH(key, fmt, v)                                                                                             \
    do {                                                                                                              \
        snprintf(name, sizeof name, "ch13_srch_%s%s", key, suffix);                                                   \
        nb_value(name, fmt, v);                                                                                       \
    } while (0)
        SRCH("tp8_c", "%d", ca);
        SRCH("tp8_ktps", "%.1f", tps_tp8 / 1e3);
        SRCH("ep8_c", "%d", cb);
        SRCH("ep8_ktps", "%.1f", tps_ep8 / 1e3);
        SRCH("ep8_ttft_ms", "%.0f", b.ttft * 1e3);
        SRCH("tp8_ttft_ms", "%.0f", a.ttft * 1e3);
        SRCH("gain", "%.1f", tps_ep8 / tps_tp8);
#undef SRCH
    }
}

/* One answer of the disaggregated search for DeepSeek-V3 on 16 H200s, and
 * the aggregated best beside it, under TTFT <= 2 s and TPOT <= 50 ms. */
static void deployed_one(const model_spec *m, const gpu_spec *g, const char *pre)
{
    char err[256], name[64];
    request_setup b = {m, g, precision_uniform(DT_FP8), 1, 4096, 512, 1, 0, 0, memory_policy_default(), 0, 1};
    disagg_plan p = {.base = b};
    p.opt.ep = layout(0);
    p.prefill.batch = 1;
    disagg_plan best;
    disagg_pools_result r;
    int found, ac;
    parallel_layout al;
    request_estimate ae;
    double agg;
    if (disagg_pools_search(&p, 16, 2.0, 0.05, &best, &r, &found, err, sizeof err) != 0 || !found ||
        disagg_aggregated_best(&p, 16, 2.0, 0.05, &al, &ac, &ae, &agg, err, sizeof err) != 0 || ac == 0)
        die("disaggregation as deployed", found && ac ? err : "no split or layout meets the targets");
#define V(fmt, what, x)                                        \
    do {                                                       \
        snprintf(name, sizeof name, "ch13_dd_%s%s", pre, what); \
        nb_value(name, fmt, x);                                \
    } while (0)
    V("%d", "p_workers", best.prefill.workers);
    V("%d", "p_dp", best.prefill.layout.attention_dp);
    V("%d", "p_ep", best.prefill.layout.moe_ep);
    V("%d", "d_workers", best.decode.workers);
    V("%d", "d_dp", best.decode.layout.attention_dp);
    V("%d", "d_ep", best.decode.layout.moe_ep);
    V("%d", "d_tp", best.decode.layout.tp);
    V("%d", "d_batch", best.decode.batch);
    V("%d", "n", r.concurrency);
    V("%d", "gpus", r.gpus);
    V("%.0f", "p_ms", r.prefill_step * 1e3);
    V("%.1f", "d_ms", r.decode_step * 1e3);
    V("%.2f", "wait_s", r.prefill_wait);
    V("%.2f", "ttft_s", r.ttft);
    V("%.0f", "tps_gpu", r.tokens_per_s_per_gpu);
    V("%d", "agg_dp", al.attention_dp);
    V("%d", "agg_ep", al.moe_ep);
    V("%d", "agg_c", ac);
    V("%.0f", "agg_tps_gpu", agg);
    V("%.2f", "gain", r.tokens_per_s_per_gpu / agg);
    if (!*pre) { /* the hand-off, alike in both answers */
        V("%.0f", "kv_mb", r.kv_bytes / 1e6);
        V("%.2f", "kv_ms", r.kv_time * 1e3);
        V("%.2f", "kv_nvlink_ms", r.kv_bytes / g->link_bw * 1e3);
    }
#undef V
}

/* The pools a deployment would choose: the search, roofline and calibrated. */
static void disaggregation_deployed(const model_spec *m, const gpu_spec *g)
{
    rate_model r; /* the rates cal points into */
    gpu_spec cal = gpu_builtin_calibrated(g->key, "published:h200_sxm/trtllm", &r);
    deployed_one(m, &cal, "");
    deployed_one(m, g, "roof_");
}

int main(void)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    kv_ceiling(&m, &g);
    experts_touched(&m);
    moe_step(&m, &g);
    all_to_all(&m, &g);
    disaggregation();
    prefix_caching();
    parameters(&m);
    skewed_group(&m, &g);
    serve_layouts(&m, &g);
    disaggregation_deployed(&m, &g);
    return 0;
}
