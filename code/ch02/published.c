/* Chapter 2, the measured side: NVIDIA's published kernel tables and serving
 * runs (code/specs/measured/, aiconfigurator-core 0.12.0) against the
 * roofline and the calibrated model, and where the distance comes from.
 * Values ch02_pub_*; data 02-pub-gemm.tsv, 02-pub-attn.tsv,
 * 02-pub-allreduce.tsv, 02-pub-serving.tsv. */
#include "band.h"
#include "measured.h"
#include "notebook.h"
#include "pricing.h"
#include "published.h"
#include "rate_table.h"
#include "request.h"
#include "transformer.h"
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOT "code/specs/measured"

static void die(const char *what, const char *err)
{
    fprintf(stderr, "published: %s: %s\n", what, err);
    exit(1);
}

static gpu_spec with_rates(const char *key, const rate_model *r)
{
    gpu_spec g = gpu_builtin(key);
    g.rates = r;
    return g;
}

/* One GEMM shape of the TensorRT-LLM H100 table against M. */
static void gemm_figure(const rate_model *cal)
{
    measured_table t;
    char err[512];
    if (measured_table_load(ROOT "/h100_sxm/trtllm/gemm.tsv", &t, err, sizeof err) != 0)
        die("gemm", err);
    int cd = measured_col(&t, "dtype"), cm = measured_col(&t, "m"), cn = measured_col(&t, "n"),
        ck = measured_col(&t, "k"), ct = measured_col(&t, "time_s");
    gpu_spec roof = gpu_builtin("h100"), calg = with_rates("h100", cal);
    double peak = gpu_peak_flops(&roof, DT_BF16);
    FILE *f = nb_data_open("02-pub-gemm.tsv");
    fprintf(f, "m\tmeasured_us\troofline_us\tcalibrated_us\n");
    const double N = 8192, K = 8192;
    for (int r = 0; r < t.nrows; r++) {
        if (strcmp(measured_cell(&t, r, cd), "bf16") || measured_num(&t, r, cn) != N || measured_num(&t, r, ck) != K)
            continue;
        double m = measured_num(&t, r, cm);
        op_cost op = gemm_op_cost(m, K, N, DT_BF16, DT_BF16, DT_BF16);
        double tr = price_op(&op, &roof, peak, 1, NULL), tc = price_op(&op, &calg, peak, 1, NULL);
        double tm = measured_num(&t, r, ct);
        fprintf(f, "%.0f\t%.4f\t%.4f\t%.4f\n", m, tm * 1e6, tr * 1e6, tc * 1e6);
        if (m == 1) {
            nb_value("ch02_pub_gemm_m1_meas_us", "%.1f", tm * 1e6);
            nb_value("ch02_pub_gemm_m1_roof_us", "%.1f", tr * 1e6);
            nb_value("ch02_pub_gemm_m1_cal_us", "%.1f", tc * 1e6);
            nb_value("ch02_pub_gemm_m1_gap", "%.0f", (tm / tr - 1) * 100);
        }
        if (m == 8192) {
            nb_value("ch02_pub_gemm_m8192_meas_tflops", "%.0f", op.flop / tm / 1e12);
            nb_value("ch02_pub_gemm_m8192_gap", "%.0f", (tm / tr - 1) * 100);
        }
    }
    fclose(f);
    measured_table_free(&t);
}

/* Decode attention of LLaMA-3-8B's one-GPU shape (32 query, 8 KV heads) at batch 8 (the table holds contexts to 64k there). */
static void attention_figure(const rate_model *cal)
{
    measured_table t;
    char err[512];
    if (measured_table_load(ROOT "/h100_sxm/trtllm/attention_decode.tsv", &t, err, sizeof err) != 0)
        die("attention", err);
    int cb = measured_col(&t, "batch"), cc = measured_col(&t, "context"), ch = measured_col(&t, "heads"),
        cv = measured_col(&t, "kv_heads"), cd = measured_col(&t, "head_dim"), ckv = measured_col(&t, "kv_dtype"),
        ct = measured_col(&t, "time_s");
    gpu_spec roof = gpu_builtin("h100"), calg = with_rates("h100", cal);
    double peak = gpu_peak_flops(&roof, DT_BF16);
    FILE *f = nb_data_open("02-pub-attn.tsv");
    fprintf(f, "context\tmeasured_us\troofline_us\tcalibrated_us\n");
    for (int r = 0; r < t.nrows; r++) {
        if (measured_num(&t, r, cb) != 8 || measured_num(&t, r, ch) != 32 || measured_num(&t, r, cv) != 8 ||
            measured_num(&t, r, cd) != 128 || strcmp(measured_cell(&t, r, ckv), "bf16"))
            continue;
        double ctx = measured_num(&t, r, cc), tm = measured_num(&t, r, ct);
        op_cost a[2];
        attention_op_costs(8, ctx - 1, 1, 32, 8, 128, DT_BF16, DT_BF16, a);
        double tr = price_op(&a[0], &roof, peak, 1, NULL) + price_op(&a[1], &roof, peak, 1, NULL);
        double tc = price_op(&a[0], &calg, peak, 1, NULL) + price_op(&a[1], &calg, peak, 1, NULL);
        fprintf(f, "%.0f\t%.4f\t%.4f\t%.4f\n", ctx, tm * 1e6, tr * 1e6, tc * 1e6);
        if (ctx == 128) {
            nb_value("ch02_pub_attn_128_meas_us", "%.1f", tm * 1e6);
            nb_value("ch02_pub_attn_128_roof_us", "%.1f", tr * 1e6);
        }
        if (ctx == 32768) {
            nb_value("ch02_pub_attn_32k_meas_us", "%.0f", tm * 1e6);
            nb_value("ch02_pub_attn_32k_roof_us", "%.0f", tr * 1e6);
            nb_value("ch02_pub_attn_32k_cal_us", "%.0f", tc * 1e6);
            nb_value("ch02_pub_attn_32k_meas_tbs", "%.2f", (op_bytes(&a[0]) + op_bytes(&a[1])) / tm / 1e12);
        }
    }
    fclose(f);
    measured_table_free(&t);
}

/* TensorRT-LLM's all-reduce at TP 8 against the ring of the GPU table. */
static void allreduce_figure(const rate_model *cal)
{
    link_point *p;
    int n;
    char err[512];
    if (published_link_points(ROOT "/h100_sxm/trtllm", "trtllm", 8, &p, &n, err, sizeof err) != 0)
        die("allreduce", err);
    gpu_spec roof = gpu_builtin("h100"), calg = with_rates("h100", cal);
    FILE *f = nb_data_open("02-pub-allreduce.tsv");
    fprintf(f, "bytes\tmeasured_us\tring_us\tcalibrated_us\n");
    for (int i = 0; i < n; i++) {
        op_cost ar = {.name = "allreduce", .kind = OP_ALLREDUCE, .comm_bytes = p[i].bytes};
        double tr = price_op(&ar, &roof, 0, 8, NULL), tc = price_op(&ar, &calg, 0, 8, NULL);
        fprintf(f, "%.0f\t%.4f\t%.4f\t%.4f\n", p[i].bytes, p[i].time * 1e6, tr * 1e6, tc * 1e6);
        if (p[i].bytes == 524288) { /* a decode step's message at batch 64 of LLaMA-3-8B: 64 x 4096 x 2 B */
            nb_value("ch02_pub_ar_512k_meas_us", "%.1f", p[i].time * 1e6);
            nb_value("ch02_pub_ar_512k_ring_us", "%.1f", tr * 1e6);
        }
    }
    fclose(f);
    free(p);
}

/* Each measured 8B run against the serving model, both ways. */
static void serving_figure(const rate_model *cal)
{
    measured_table t;
    char err[512];
    if (measured_table_load(ROOT "/serving_runs.tsv", &t, err, sizeof err) != 0)
        die("serving runs", err);
    int cm = measured_col(&t, "model"), cs = measured_col(&t, "system"), cb = measured_col(&t, "backend"),
        ci = measured_col(&t, "isl"), co = measured_col(&t, "osl"), cc = measured_col(&t, "concurrency"),
        ctp = measured_col(&t, "tp"), ctpot = measured_col(&t, "tpot_s"), cttft = measured_col(&t, "ttft_s");
    model_spec m = model_builtin("llama3-8b");
    gpu_spec roof = gpu_builtin("h100"), calg = with_rates("h100", cal);
    /* the band each calibrated TPOT carries (band.h): runs like it, held out */
    gpu_table gt;
    model_table mt;
    band_runs held;
    if (gpu_table_builtin(&gt, err, sizeof err) || model_table_builtin(&mt, err, sizeof err) ||
        band_runs_builtin(&gt, &mt, &held, err, sizeof err))
        die("band", err);
    int banded = 0, inside = 0; /* runs with a band, and those whose measured TPOT lies inside it */
    FILE *f = nb_data_open("02-pub-serving.tsv");
    fprintf(f, "tp\tmeasured_ms\troofline_ms\tcalibrated_ms\tttft_measured_ms\tttft_closed_ms\t"
               "band_lo_ms\tband_hi_ms\n");
    int lo[3] = {1 << 30, 1 << 30, 1 << 30}, hi[3] = {0, 0, 0}; /* prompt, output, concurrency */
    for (int r = 0; r < t.nrows; r++) {
        if (strcmp(measured_cell(&t, r, cm), "meta-llama/Llama-3.1-8B-Instruct") ||
            strcmp(measured_cell(&t, r, cs), "h100_sxm") || strcmp(measured_cell(&t, r, cb), "trtllm"))
            continue;
        request_setup s = {&m, &roof, precision_uniform(DT_BF16), (int)measured_num(&t, r, ctp),
                           (int)measured_num(&t, r, ci), (int)measured_num(&t, r, co), (int)measured_num(&t, r, cc),
                           0, 0, memory_policy_default(), 0, 1};
        const int shape[3] = {s.prompt, s.output, s.concurrency};
        for (int i = 0; i < 3; i++) {
            lo[i] = shape[i] < lo[i] ? shape[i] : lo[i];
            hi[i] = shape[i] > hi[i] ? shape[i] : hi[i];
        }
        /* scheduled as TensorRT-LLM schedules (serve --engine trtllm, and the validation whose held-out
         * runs give the band): each prompt rides in a step of the running decodes */
        const request_options mixed = {.mixed_steps = 1};
        request_estimate er, ec;
        if (request_estimate_with(&s, &mixed, &er, err, sizeof err) != 0)
            die("serve", err);
        s.gpu = &calg;
        if (request_estimate_with(&s, &mixed, &ec, err, sizeof err) != 0)
            die("serve", err);
        if (s.tp == 1 && s.concurrency == 8 && s.prompt == 1024) { /* TTFT against the output length */
            char name[64];
            snprintf(name, sizeof name, "ch02_pub_ttft_c8_o%d_ms", s.output);
            nb_value(name, "%.0f", measured_num(&t, r, cttft) * 1e3);
            snprintf(name, sizeof name, "ch02_pub_ttft_c8_o%d_model_ms", s.output);
            nb_value(name, "%.0f", ec.ttft_closed * 1e3);
        }
        band_regime q;
        error_band b = {0, NAN, NAN, 0, ""};
        if (band_regime_of("trtllm", &m, s.concurrency, s.prompt, s.output, &q, err, sizeof err))
            b = band_for(&held, &q, BAND_TPOT, 0);
        /* the measured TPOT runs like this one would show: the answer scaled by the band ('-' for none) */
        char blo[32] = "-", bhi[32] = "-";
        double measured_tpot = measured_num(&t, r, ctpot);
        banded += b.have;
        inside += b.have && measured_tpot >= ec.tpot * (1 + b.lo) && measured_tpot <= ec.tpot * (1 + b.hi);
        if (b.have) {
            snprintf(blo, sizeof blo, "%.4f", ec.tpot * (1 + b.lo) * 1e3);
            snprintf(bhi, sizeof bhi, "%.4f", ec.tpot * (1 + b.hi) * 1e3);
        }
        fprintf(f, "%d\t%.4f\t%.4f\t%.4f\t%.2f\t%.2f\t%s\t%s\n", s.tp, measured_num(&t, r, ctpot) * 1e3,
                er.tpot * 1e3, ec.tpot * 1e3, measured_num(&t, r, cttft) * 1e3, ec.ttft_closed * 1e3, blo, bhi);
    }
    nb_value("ch02_pub_8b_banded_runs", "%d", banded);
    nb_value("ch02_pub_8b_inside_band", "%d", inside);
    band_runs_free(&held);
    gpu_table_free(&gt);
    model_table_free(&mt);
    static const char *const what[3] = {"prompt", "output", "concurrency"};
    for (int i = 0; i < 3; i++) {
        char name[48];
        snprintf(name, sizeof name, "ch02_pub_8b_%s_min", what[i]);
        nb_value(name, "%d", lo[i]);
        snprintf(name, sizeof name, "ch02_pub_8b_%s_max", what[i]);
        nb_value(name, "%d", hi[i]);
    }
    fclose(f);
    measured_table_free(&t);
}

/* LLaMA-3-8B's decode step on H100, batch 64 at 2k: the roofline, the
 * achieved shares alone (no fixed costs), and the whole calibration. */
static void step_decomposition(const rate_model *cal)
{
    model_spec m = model_builtin("llama3-8b");
    rate_model shares = *cal;
    for (int c = 0; c < RC_COUNT; c++)
        shares.op[c].t0 = shares.op[c].t_item = 0;
    gpu_spec roof = gpu_builtin("h100"), calg = with_rates("h100", cal), sh = with_rates("h100", &shares);
    step_shape s = decode_shape(64, 2048, 1, precision_uniform(DT_BF16));
    step_cost a, b, c;
    char err[256];
    if (decoder_step_cost(&m, &roof, &s, &a, err, sizeof err) || decoder_step_cost(&m, &sh, &s, &b, err, sizeof err) ||
        decoder_step_cost(&m, &calg, &s, &c, err, sizeof err))
        die("step", err);
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS), kernels = 0;
    for (int i = 0; i < n; i++)
        kernels += op_repeats(&m, &ops[i]) * (ops[i].kind == OP_ATTENTION ? 1 : 2); /* attention: 2 ops, 1 kernel */
    nb_value("ch02_pub_step_roof_ms", "%.2f", a.time * 1e3);
    nb_value("ch02_pub_step_shares_ms", "%.2f", b.time * 1e3);
    nb_value("ch02_pub_step_cal_ms", "%.2f", c.time * 1e3);
    nb_value("ch02_pub_step_gap", "%.0f", (c.time / a.time - 1) * 100);
    nb_value("ch02_pub_step_fixed_ms", "%.2f", (c.time - b.time) * 1e3);
    nb_value("ch02_pub_step_fixed_share", "%.0f", (c.time - b.time) / (c.time - a.time) * 100);
    nb_value("ch02_pub_step_kernels", "%d", kernels / 2);
    nb_value("ch02_pub_step_tps_roof", "%.0f", step_tokens_per_second(&a));
    nb_value("ch02_pub_step_tps_cal", "%.0f", step_tokens_per_second(&c));
}

static void fitted_values(const rate_model *h100, const rate_model *h200)
{
    const op_rate *g = &h100->op[RC_GEMM_BF16], *d = &h100->op[RC_ATTN_DECODE_BF16], *p = &h100->op[RC_ATTN_PREFILL];
    nb_value("ch02_pub_gemm_t0_us", "%.1f", g->t0 * 1e6);
    nb_value("ch02_pub_gemm_flop_pct", "%.0f", g->flop_frac * 100);
    nb_value("ch02_pub_gemm_byte_pct", "%.0f", g->byte_frac * 100);
    nb_value("ch02_pub_gemm_blend", "%.1f", g->blend);
    nb_value("ch02_pub_gemm_fp8_t0_us", "%.1f", h100->op[RC_GEMM_FP8].t0 * 1e6);
    nb_value("ch02_pub_gemm_fp8_flop_pct", "%.0f", h100->op[RC_GEMM_FP8].flop_frac * 100);
    nb_value("ch02_pub_h200_gemm_byte_pct", "%.0f", h200->op[RC_GEMM_BF16].byte_frac * 100);
    nb_value("ch02_pub_attn_t0_us", "%.1f", d->t0 * 1e6);
    nb_value("ch02_pub_attn_item_ns", "%.0f", d->t_item * 1e9);
    nb_value("ch02_pub_attn_byte_pct", "%.0f", d->byte_frac * 100);
    nb_value("ch02_pub_attn_long_us", "%.1f", d->t_long * 1e6);
    /* one sequence of LLaMA-3-8B's 8 KV heads: the tail (one head's bytes at item_frac)
     * against the whole read (8 heads' bytes at byte_frac) is byte_frac / (8 item_frac) */
    nb_value("ch02_pub_attn_tail_b1_pct", "%.0f", d->item_frac > 0 ? d->byte_frac / (8 * d->item_frac) * 100 : 0);
    nb_value("ch02_pub_attn_tile", "%d", RATE_SHORT_SPAN);
    nb_value("ch02_pub_prefill_t0_us", "%.1f", p->t0 * 1e6);
    nb_value("ch02_pub_prefill_flop_pct", "%.0f", p->flop_frac * 100);
    nb_value("ch02_pub_prefill_item_ns", "%.0f", p->t_item * 1e9);
    const link_rate *l = &h100->allreduce[rate_tp_slot(8)];
    nb_value("ch02_pub_ar8_lat1_us", "%.1f", l->latency1 * 1e6);
    nb_value("ch02_pub_ar8_bw1_gbs", "%.0f", l->bandwidth1 / 1e9);
    nb_value("ch02_pub_ar8_lat2_us", "%.0f", l->latency2 * 1e6);
    nb_value("ch02_pub_ar8_bw2_gbs", "%.0f", l->bandwidth2 / 1e9);
    /* the calibrated ridge of a bf16 GEMM: where flop / (f_c peak) meets bytes / (f_b bw) */
    gpu_spec h = gpu_builtin("h100");
    double peak = gpu_peak_flops(&h, DT_BF16);
    nb_value("ch02_pub_ridge_roof", "%.0f", peak / h.mem_bw);
    nb_value("ch02_pub_ridge_cal", "%.0f", g->flop_frac * peak / (g->byte_frac * h.mem_bw));
}

/* What the table itself reaches, beside what the fit says: the fastest
 * GEMM of each dtype in the TensorRT-LLM H100 table as a share of the dense
 * peak (the fit's f_c is a parameter of the blended curve, not a rate any
 * kernel achieved), and the engine versions the tables and the serving runs
 * were taken with. */
static void achieved_values(void)
{
    measured_table t;
    char err[512];
    if (measured_table_load(ROOT "/h100_sxm/trtllm/gemm.tsv", &t, err, sizeof err) != 0)
        die("gemm", err);
    int cd = measured_col(&t, "dtype"), cm = measured_col(&t, "m"), cn = measured_col(&t, "n"),
        ck = measured_col(&t, "k"), ct = measured_col(&t, "time_s");
    gpu_spec h = gpu_builtin("h100");
    static const struct {
        const char *dtype, *name;
        dtype d;
    } want[] = {{"bf16", "ch02_pub_gemm_best_pct", DT_BF16}, {"fp8", "ch02_pub_gemm_fp8_best_pct", DT_FP8}};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        double best = 0;
        for (int r = 0; r < t.nrows; r++) {
            if (strcmp(measured_cell(&t, r, cd), want[w].dtype) != 0)
                continue;
            double flop = 2 * measured_num(&t, r, cm) * measured_num(&t, r, cn) * measured_num(&t, r, ck);
            double rate = flop / measured_num(&t, r, ct);
            best = rate > best ? rate : best;
        }
        /* a share, not a time */
        nb_value(want[w].name, "%.0f", best / gpu_peak_flops(&h, want[w].d) * 100);
    }
    nb_value("ch02_pub_kernels_trtllm_version", "%s", measured_meta(&t, "backend_version"));
    measured_table_free(&t);
    if (measured_table_load(ROOT "/h100_sxm/vllm/attention_decode.tsv", &t, err, sizeof err) != 0)
        die("vllm attention", err);
    nb_value("ch02_pub_kernels_vllm_version", "%s", measured_meta(&t, "backend_version"));
    measured_table_free(&t);
    /* the serving runs' engines: the LLaMA-3.1-8B runs under TensorRT-LLM
     * (the TP table) and the runs under vLLM that name a version */
    if (measured_table_load(ROOT "/serving_runs.tsv", &t, err, sizeof err) != 0)
        die("serving runs", err);
    int cmod = measured_col(&t, "model"), cb = measured_col(&t, "backend"), cv = measured_col(&t, "backend_version");
    const char *trt = NULL, *vllm = NULL;
    for (int r = 0; r < t.nrows; r++) {
        const char *b = measured_cell(&t, r, cb), *v = measured_cell(&t, r, cv);
        if (!trt && strcmp(b, "trtllm") == 0 && strcmp(measured_cell(&t, r, cmod), "meta-llama/Llama-3.1-8B-Instruct") == 0)
            trt = v;
        if (!vllm && strcmp(b, "vllm") == 0 && strcmp(v, "-") != 0)
            vllm = v;
    }
    if (!trt || !vllm)
        die("serving runs", "no TensorRT-LLM run of LLaMA-3.1-8B-Instruct or no vLLM run with a version");
    nb_value("ch02_pub_runs_trtllm_version", "%s", trt);
    nb_value("ch02_pub_runs_vllm_version", "%s", vllm);
    measured_table_free(&t);
}

/* A rate class as the prose names it. */
static const char *class_in_words(const char *c)
{
    static const struct {
        const char *name, *words;
    } w[] = {{"gemm_bf16", "a bf16 GEMM"},
             {"gemm_fp8", "an fp8 GEMM"},
             {"attn_decode_bf16", "a decode attention kernel over a bf16 cache"},
             {"attn_decode_fp8", "a decode attention kernel over an fp8 cache"},
             {"attn_prefill", "a prefill attention kernel"}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        if (strcmp(c, w[i].name) == 0)
            return w[i].words;
    return c; /* all-reduce classes name their TP degree */
}

/* The held-out verdicts the chapter quotes. */
static void validation_values(void)
{
    gpu_table gt;
    model_table mt;
    char err[512];
    if (gpu_table_builtin(&gt, err, sizeof err) || model_table_builtin(&mt, err, sizeof err))
        die("tables", err);
    static op_validation v[256], agree[64];
    int n = validate_ops(ROOT, &gt, v, 256, err, sizeof err);
    int na = validate_engine_agreement(ROOT, &gt, agree, 64, err, sizeof err);
    if (n < 0 || na < 0)
        die("validate", err);
    double xsys_worst = 0; /* the worst single kernel of any class, H100 fit judged on H200 */
    const char *xsys_worst_class = "";
    for (int i = 0; i < n; i++) {
        const char *f = v[i].fitted_on, *e = v[i].evaluated_on, *c = v[i].op_class;
        /* chapter 2's classes, the dense models' kernels: the routed experts' grouped GEMM, latent
         * attention and Gated DeltaNet (moe_*, mla_*, gdn_*) and the block-scaled fp8 GEMM of the mixtures'
         * fp8 releases are chapter 13's */
        if (strcmp(f, "h100_sxm/trtllm") == 0 && strcmp(e, "h200_sxm/trtllm") == 0 && strncmp(c, "moe_", 4) != 0 &&
            strncmp(c, "mla_", 4) != 0 && strncmp(c, "gdn_", 4) != 0 && strcmp(c, "gemm_fp8_block") != 0) {
            char name[64];
            snprintf(name, sizeof name, "ch02_pub_xsys_%s_median", c);
            nb_value(name, "%.0f", v[i].s.median_abs_err * 100);
            snprintf(name, sizeof name, "ch02_pub_xsys_%s_worst", c);
            nb_value(name, "%.0f", v[i].s.worst_abs_err * 100);
            if (v[i].s.worst_abs_err > xsys_worst)
                xsys_worst = v[i].s.worst_abs_err, xsys_worst_class = c;
        }
        if (strcmp(f, "h100_sxm/trtllm odd rows") == 0 && strcmp(c, "gemm_bf16") == 0)
            nb_value("ch02_pub_half_gemm_median", "%.1f", v[i].s.median_abs_err * 100);
    }
    nb_value("ch02_pub_xsys_worst", "%.0f", xsys_worst * 100);
    nb_value("ch02_pub_xsys_worst_class", "%s", class_in_words(xsys_worst_class));
    for (int i = 0; i < na; i++) {
        const char *e = agree[i].evaluated_on, *c = agree[i].op_class;
        if (strcmp(e, "h100_sxm/vllm") == 0 && strcmp(c, "attn_decode_bf16") == 0)
            nb_value("ch02_pub_agree_attn_median", "%.0f", agree[i].s.median_abs_err * 100);
        if (strcmp(e, "h100_sxm/vllm") == 0 && strcmp(c, "attn_decode_fp8") == 0)
            nb_value("ch02_pub_agree_attn_fp8_median", "%.0f", agree[i].s.median_abs_err * 100);
        if (strcmp(e, "h100_sxm/vllm") == 0 && strcmp(c, "gemm_bf16") == 0)
            nb_value("ch02_pub_agree_gemm_median", "%.1f", agree[i].s.median_abs_err * 100);
    }
    static serving_validation sv[128];
    int ns = validate_serving(ROOT "/serving_runs.tsv", &gt, &mt, sv, 128, err, sizeof err);
    if (ns < 0)
        die("serving", err);
    double worst = 0;
    int runs = 0;
    for (int i = 0; i < ns; i++) {
        const serving_validation *s = &sv[i];
        if (strcmp(s->model, "meta-llama/Llama-3.1-8B-Instruct") == 0 && strcmp(s->system, "h100_sxm") == 0 &&
            strcmp(s->backend, "trtllm") == 0) {
            char name[64];
            snprintf(name, sizeof name, "ch02_pub_tpot_tp%d_cal", s->tp);
            nb_value(name, "%+.1f", s->tpot_err_calibrated * 100);
            snprintf(name, sizeof name, "ch02_pub_tpot_tp%d_roof", s->tp);
            nb_value(name, "%+.0f", s->tpot_err_roofline * 100);
            snprintf(name, sizeof name, "ch02_pub_ttft_tp%d_cal", s->tp);
            nb_value(name, "%+.0f", s->ttft_err_calibrated * 100);
            worst = fmax(worst, s->tpot_abs_err_calibrated);
            runs += s->runs;
        }
        if (strcmp(s->model, "meta-llama/Llama-3.1-70B") == 0 && strcmp(s->system, "h200_sxm") == 0 &&
            strcmp(s->backend, "trtllm") == 0 && s->tp == 4) {
            nb_value("ch02_pub_70b_h200_tp4_cal", "%+.0f", s->tpot_err_calibrated * 100);
            nb_value("ch02_pub_70b_h200_tp4_roof", "%+.0f", s->tpot_err_roofline * 100);
        }
        if (strcmp(s->model, "meta-llama/Llama-3.1-70B") == 0 && strcmp(s->system, "h100_sxm") == 0 &&
            strcmp(s->backend, "vllm") == 0 && s->tp == 4) {
            nb_value("ch02_pub_70b_h100_vllm_tp4_cal", "%+.0f", s->tpot_err_calibrated * 100);
            nb_value("ch02_pub_70b_h100_vllm_tp4_roof", "%+.0f", s->tpot_err_roofline * 100);
        }
    }
    nb_value("ch02_pub_8b_runs", "%d", runs);
    nb_value("ch02_pub_8b_worst_tp_median", "%.1f", worst * 100);
    gpu_table_free(&gt);
    model_table_free(&mt);
}

/* The chapters' own questions both ways: LLaMA-3-70B on 8 H100s, 2k prompts,
 * 256 outputs, TTFT <= 1 s and TPOT <= 50 ms: which TP uses the fewest
 * GPU-seconds per request, and what a million output tokens cost at $2.50
 * per GPU-hour. */
static void serving_questions(const rate_model *cal)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec roof = gpu_builtin("h100"), calg = with_rates("h100", cal);
    const gpu_spec *g[2] = {&roof, &calg};
    const char *tag[2] = {"roof", "cal"};
    char err[512], name[64];
    for (int w = 0; w < 2; w++) {
        int best_tp = 0, best_c = 0;
        double best = INFINITY, cost = NAN;
        for (int tp = 2; tp <= 8; tp *= 2) {
            request_setup s = {&m, g[w], precision_uniform(DT_BF16), tp, 2048, 256, 1, 0, 0,
                               memory_policy_default(), 2.5, 1};
            int c = request_best_concurrency(&s, 1.0, 0.05, err, sizeof err);
            if (c < 0)
                die("search", err);
            if (c == 0)
                continue;
            s.concurrency = c;
            request_estimate e;
            if (request_estimate_compute(&s, &e, err, sizeof err) != 0)
                die("search", err);
            if (e.gpu_seconds_per_request < best) {
                best = e.gpu_seconds_per_request;
                best_tp = tp;
                best_c = c;
                cost = e.cost_per_m_output;
            }
        }
        snprintf(name, sizeof name, "ch02_pub_70b_best_tp_%s", tag[w]);
        nb_value(name, "%d", best_tp);
        snprintf(name, sizeof name, "ch02_pub_70b_best_c_%s", tag[w]);
        nb_value(name, "%d", best_c);
        snprintf(name, sizeof name, "ch02_pub_70b_gpus_per_req_%s", tag[w]);
        nb_value(name, "%.2f", best);
        snprintf(name, sizeof name, "ch02_pub_70b_cost_%s", tag[w]);
        nb_value(name, "%.2f", cost);
    }
}

int main(void)
{
    rate_model h100, h200;
    char err[512];
    if (rate_model_builtin("published:h100_sxm/trtllm", &h100, err, sizeof err) ||
        rate_model_builtin("published:h200_sxm/trtllm", &h200, err, sizeof err))
        die("calibration", err);
    fitted_values(&h100, &h200);
    achieved_values();
    gemm_figure(&h100);
    attention_figure(&h100);
    allreduce_figure(&h100);
    serving_figure(&h100);
    step_decomposition(&h100);
    validation_values();
    serving_questions(&h100);
    return 0;
}
