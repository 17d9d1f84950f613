#include "validate_moe.h"

#include "closed_loop.h"
#include "fit.h"
#include "memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- reading */

static const char *const POOL_COLS[] = {"workers", "batch", "tp", "pp", "attention_dp", "moe_tp", "moe_ep"};
#define POOL_NCOLS 7

/* A count as the table writes it: "-" (empty in the package) is -1. */
static int count_of(const measured_table *t, int row, int col)
{
    double v = col < 0 ? NAN : measured_num(t, row, col);
    return isnan(v) ? -1 : (int)v;
}

static void pool_read(const measured_table *t, int row, const int *cols, moe_pool *p)
{
    int v[POOL_NCOLS];
    for (int i = 0; i < POOL_NCOLS; i++)
        v[i] = count_of(t, row, cols[i]);
    *p = (moe_pool){v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
}

/* The columns of one pool: prefix "" (the aggregated run: batch is
 * "concurrency", and it states no workers), "prefill_" or "decode_". */
static int pool_cols(const measured_table *t, const char *name, const char *prefix, int *cols, char *err,
                     size_t errlen)
{
    for (int i = 0; i < POOL_NCOLS; i++) {
        char col[40];
        if (!*prefix && i == 0) {
            cols[i] = -1;
            continue;
        }
        snprintf(col, sizeof col, "%s%s", prefix, !*prefix && i == 1 ? "concurrency" : POOL_COLS[i]);
        if ((cols[i] = measured_col(t, col)) < 0) {
            snprintf(err, errlen, "%s: no column '%s'", name, col);
            return -1;
        }
    }
    return 0;
}

int moe_runs_read(const measured_table *t, const char *name, moe_run **out, char *err, size_t errlen)
{
    static const char *const names[] = {"id",        "model",     "system", "backend", "mode", "precision",
                                        "gemm_quant", "moe_quant", "isl",    "osl",     "ttft_s", "tpot_s"};
    enum { ID, MODEL, SYSTEM, BACKEND, MODE, PRECISION, GEMM_Q, MOE_Q, ISL, OSL, TTFT, TPOT, NCOLS };
    int c[NCOLS], agg[POOL_NCOLS], pre[POOL_NCOLS], dec[POOL_NCOLS];
    *out = NULL;
    for (int i = 0; i < NCOLS; i++)
        if ((c[i] = measured_col(t, names[i])) < 0) {
            snprintf(err, errlen, "%s: no column '%s'", name, names[i]);
            return -1;
        }
    if (pool_cols(t, name, "", agg, err, errlen) != 0 || pool_cols(t, name, "prefill_", pre, err, errlen) != 0 ||
        pool_cols(t, name, "decode_", dec, err, errlen) != 0)
        return -1;
    const int bench = measured_col(t, "benchmark_concurrency"); /* optional: tables written before it lack it */
    const int day = measured_col(t, "measured");                /* optional too */
    moe_run *v = calloc((size_t)(t->nrows > 0 ? t->nrows : 1), sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int r = 0; r < t->nrows; r++) {
        moe_run *x = &v[r];
        struct {
            char *dst;
            size_t n;
            int col;
        } text[] = {{x->id, sizeof x->id, c[ID]},
                    {x->model, sizeof x->model, c[MODEL]},
                    {x->system, sizeof x->system, c[SYSTEM]},
                    {x->backend, sizeof x->backend, c[BACKEND]},
                    {x->mode, sizeof x->mode, c[MODE]},
                    {x->precision, sizeof x->precision, c[PRECISION]},
                    {x->gemm_quant, sizeof x->gemm_quant, c[GEMM_Q]},
                    {x->moe_quant, sizeof x->moe_quant, c[MOE_Q]}};
        for (size_t k = 0; k < sizeof text / sizeof text[0]; k++)
            snprintf(text[k].dst, text[k].n, "%s", measured_cell(t, r, text[k].col));
        x->isl = count_of(t, r, c[ISL]);
        x->osl = count_of(t, r, c[OSL]);
        pool_read(t, r, agg, &x->agg);
        pool_read(t, r, pre, &x->prefill);
        pool_read(t, r, dec, &x->decode);
        x->ttft = measured_num(t, r, c[TTFT]);
        x->tpot = measured_num(t, r, c[TPOT]);
        x->benchmark_concurrency = count_of(t, r, bench);
        snprintf(x->measured, sizeof x->measured, "%s", day < 0 ? "-" : measured_cell(t, r, day));
    }
    *out = v;
    return t->nrows;
}

/* ---------------------------------------------------------------- the question */

/* Refuse with a reason made of a fixed text and an optional detail. */
static int refuse(moe_question *q, const char *reason, const char *detail)
{
    snprintf(q->reason, sizeof q->reason, "%s%s", reason, detail);
    return 0;
}

/* The weight format a quant column states: fp8 (per tensor), fp8_block,
 * int4_wo, bf16 ("bfloat16"); "-" (none stated) WF_AS_DTYPE, the run's
 * precision column deciding.  0, or -1 for one the library does not price
 * (the fp4 formats: issue 33). */
static int quant_format(const char *quant, weight_format *f)
{
    if (strcmp(quant, "-") == 0) {
        *f = WF_AS_DTYPE;
        return 0;
    }
    if (strcmp(quant, "bfloat16") == 0) {
        *f = WF_BF16;
        return 0;
    }
    return weight_format_parse(quant, f);
}

/* int4 weight-only named by a run of a model whose checkpoint stores its
 * routed experts so (models.tsv's experts=int4g32): the run's quant columns
 * name the checkpoint, whose other weights are bf16 (Kimi-K2.5's
 * quantization_config leaves attention, the shared experts, the dense MLP
 * and the head unquantized), so the model's own format prices it. */
static int int4_as_released(const moe_run *r, const model_spec *m)
{
    return m->expert_format == EXPERTS_INT4_G32 && strcmp(r->moe_quant, "int4_wo") == 0 &&
           !strstr(r->gemm_quant, "fp4");
}

/* An fp4 run of a model released with MXFP4 experts (gpt-oss) on a GPU
 * without fp4 tensor cores (H100, H200: the only systems asked here): the
 * engine serves the checkpoint as released.  The package's "nvfp4" in
 * gemm_quant and moe_quant is the benchmark's fp4 label, not the format
 * loaded: the runs load openai/gpt-oss-120b, whose config.json says
 * quant_method mxfp4 with self_attn, router, embedding and head not
 * converted, which the package itself reads as dense GEMMs bfloat16 and
 * experts w4a16_mxfp4 ("native data format for gpt oss", sdk/common.py;
 * sdk/models/helpers.py _infer_quant_modes_from_raw_config), and on a
 * non-Blackwell system it turns any nvfp4 into weight-only, bf16 math
 * (helpers.py resolve_nvfp4_for_system: "Non-Blackwell hardware has no
 * native FP4 tensor cores").  So: experts MXFP4 into 16-bit math (the
 * model's expert_format prices them as moe_w4a16 at 4.25 bits), attention,
 * dense GEMMs and KV cache bf16 (the config states no KV quantization). */
static int fp4_as_released(const moe_run *r, const moe_question *q)
{
    return q->model->expert_format == EXPERTS_MXFP4 && strstr(r->gemm_quant, "fp4") && strstr(r->moe_quant, "fp4");
}

/* The run's precision, or a refusal: the dense GEMMs in gemm_quant's
 * format and the routed experts in moe_quant's, as --weights and
 * --moe-weights state them (weight_format.h; a column without one: fp8
 * weights where the precision column says fp8, else bf16); with fp8 GEMMs
 * an fp8 KV cache; activations between ops bf16 (the engines' fp8 recipes,
 * as the dense runs are priced in validate.c); fp4 and int4 as
 * fp4_as_released and int4_as_released say.  An "fp8" expert column of a
 * mixture released in fp8 is its checkpoint's block-scaled fp8: the fp8
 * checkpoints of the mixtures measured (Qwen3-235B-A22B-FP8, DeepSeek-V3/R1,
 * MiniMax-M2.5, GLM-5-FP8) carry 128 x 128 block scales in their
 * quantization_config (weight_block_size), and an engine serves what the
 * checkpoint holds. */
static int run_precision(const moe_run *r, moe_question *q)
{
    q->setup.prec = precision_uniform(DT_BF16);
    if (fp4_as_released(r, q) || int4_as_released(r, q->model))
        return 1;
    const char *quant[] = {r->gemm_quant, r->moe_quant};
    weight_format f[2];
    for (int i = 0; i < 2; i++) {
        if (strstr(quant[i], "fp4"))
            return refuse(q, "fp4 weights of a model not released in fp4 (issue 33)", "");
        if (quant_format(quant[i], &f[i]) != 0)
            return refuse(q, "weights not yet (--weights): ", quant[i]);
    }
    precision *p = &q->setup.prec;
    *p = precision_uniform(DT_BF16);
    if (f[0] != WF_AS_DTYPE) {
        p->weights = weight_format_values(f[0]);
        p->compute = weight_format_step_compute(f[0], p->compute);
    } else if (strcmp(r->precision, "fp8") == 0)
        p->weights = p->compute = DT_FP8;
    if (f[1] == WF_FP8 && q->model->expert_format == EXPERTS_AS_WEIGHTS)
        f[1] = WF_FP8_BLOCK;
    p->weights_format = f[0];
    p->moe_format = f[1];
    if (p->compute == DT_FP8 || strcmp(r->precision, "fp8") == 0)
        p->kv = DT_FP8;
    /* a latent cache stays bf16: the engines' default KV dtype is "auto", the model's activations'
     * (the fp8 checkpoints of DeepSeek-V3/R1 state no KV quantization) */
    if (q->model->kv_lora_rank > 0)
        p->kv = DT_BF16;
    return 1;
}

/* Some runs of g GPUs with expert parallelism g are written with the GPU
 * count squared: tp g x g (or attention_dp g x g at batch / g per rank) with
 * moe_tp = moe_ep = g.  Each such DeepSeek-R1 run on h200 under TensorRT-LLM
 * (silicon_sample.csv, ids ..._2026_04_06_..._tp8_ep8_...) has a twin with
 * the same isl, osl and TPOT to the microsecond stated plainly as tp 8,
 * moe_tp 1, moe_ep 8 (or tp 1, attention_dp 8, moe_ep 8 at 8 x the batch),
 * and no engine runs attention TP 64 inside one 8-GPU node: read as the
 * twins state it, when g x g is more GPUs than a node of the run's GPU row
 * holds (gpu_node_gpus: an HGX H100 or H200 board's 8). */
static moe_pool run_pool_unsquared(const moe_pool *a, const gpu_spec *row)
{
    moe_pool p = *a;
    const int g = a->moe_ep;
    if (g <= 1 || a->moe_tp != g || g * g <= gpu_node_gpus(row)) /* g x g GPUs fit one node: a real layout */
        return p;
    if (a->tp == g * g && a->attention_dp <= 1) {
        p.tp = g;
        p.moe_tp = 1;
    } else if (a->tp == 1 && a->attention_dp == g * g) {
        p.attention_dp = g;
        p.moe_tp = 1;
        p.batch = a->batch * g;
    }
    return p;
}

/* A run whose attention is data-parallel over its tp GPUs although its
 * attention_dp column is empty: the batch it states is per attention rank,
 * the benchmark's concurrency over tp (TensorRT-LLM states attention DP as
 * tensor_parallel_size = the GPUs with enable_attention_dp, and the
 * package's rows from those configs keep tp = GPUs with no attention_dp).
 * gpt-oss-120b's five h100_sxm trtllm 1.3.0rc1 runs read so: id "c160_tp4"
 * with batch 40, "c320_tp2" with batch 160, and their experts moe_tp x
 * moe_ep = tp GPUs; asked as TP 4 with 40 sequences they are a quarter of
 * the load measured. */
static int attention_dp_unstated(const moe_run *r)
{
    const moe_pool *a = &r->agg;
    return a->attention_dp < 0 && a->tp > 1 && r->benchmark_concurrency == a->batch * a->tp;
}

/* The tensor parallelism T and expert parallelism E a run's id states
 * ("_tp<T>_ep<E>_", or the 2026_03_25 sweep's "_tp<T>_0_ep<E>_0_"): 1 with
 * both set, else 0. */
static int id_tp_ep(const char *id, int *tp, int *ep)
{
    for (const char *c = strstr(id, "_tp"); c; c = strstr(c + 1, "_tp")) {
        char *end;
        long t = strtol(c + 3, &end, 10);
        if (end == c + 3 || t < 1)
            continue;
        if (strncmp(end, "_0_", 3) == 0)
            end += 2;
        if (strncmp(end, "_ep", 3) != 0)
            continue;
        const char *e0 = end + 3;
        long e = strtol(e0, &end, 10);
        if (end == e0 || e < 1)
            continue;
        *tp = (int)t, *ep = (int)e;
        return 1;
    }
    return 0;
}

/* Some runs state attention-DP ranks their id does not: tp T with
 * attention_dp D > 1 and moe_ep T x D, the batch a rank the benchmark's
 * concurrency over D, where the id says "_tp<T>_ep<E>_" with E < T x D.
 * MiniMax-M2.5's fifteen h100_sxm vLLM 0.18.0 runs of the 2026_04_06 sweep
 * (ids ..._tp4_ep4_..., columns tp 4, attention_dp 4, moe_ep 16: two 8-GPU
 * nodes) each have a twin in the 2026_03_25 sweep, measured a day earlier
 * and stated plainly as tp 4, moe_ep 4 at the benchmark's whole
 * concurrency, whose TPOT they repeat within 1 % at 13 of the 15 shapes
 * (1024 x 1024 at 4, 8, 16, 32, 64 sequences: 10.09, 12.55, 15.47, 20.04,
 * 25.69 ms against 10.12, 12.47, 15.54, 20.02, 25.66); a DEP 16 replica,
 * a quarter of the sequences a rank and a sixteenth of the experts a GPU,
 * would not run at TEP 4's speed at every batch.  Read as the id and the
 * twins state it: tp T, moe_ep E (moe_tp T / E), the benchmark's
 * concurrency on one attention rank. */
static moe_pool run_pool_as_id(const moe_run *r, const moe_pool *a)
{
    moe_pool p = *a;
    int t, e;
    const int d = a->attention_dp;
    if (d > 1 && a->moe_ep == a->tp * d && r->benchmark_concurrency == a->batch * d && id_tp_ep(r->id, &t, &e) &&
        t == a->tp && e > 1 && e < a->moe_ep && t % e == 0) {
        p.attention_dp = 1;
        p.moe_ep = e;
        p.moe_tp = t / e;
        p.batch = r->benchmark_concurrency;
    }
    return p;
}

/* The pool an aggregated run's columns state, as its GPUs ran it
 * (run_pool_unsquared, then run_pool_as_id). */
static moe_pool run_pool_agg(const moe_run *r, const gpu_spec *row)
{
    const moe_pool p = run_pool_unsquared(&r->agg, row);
    return run_pool_as_id(r, &p);
}

/* The layout the run's columns state, resolved as the flags would be
 * (layout.h: "-" and the package's 0 are both "not given"), or a refusal. */
static int run_layout(const moe_run *r, const gpu_spec *row, moe_question *q)
{
    const moe_pool plain = run_pool_agg(r, row), *a = &plain;
    if (a->tp < 1 || a->batch < 1)
        return refuse(q, "no tp or concurrency stated", "");
    if (a->pp > 1)
        return refuse(q, "pipeline of a mixture not yet (--pp with --ep)", "");
    char e[MOE_REASON_MAX - 32];
    const int dense = q->model->experts <= 1, dp = attention_dp_unstated(r);
    if (layout_resolve(q->model, "", dp ? 1 : a->tp, dp ? a->tp : a->attention_dp > 0 ? a->attention_dp : 0,
                       dense || a->moe_tp < 0 ? 0 : a->moe_tp, dense || a->moe_ep < 0 ? 0 : a->moe_ep, &q->layout, e,
                       sizeof e) != 0)
        return refuse(q, "layout refused: ", e);
    return 1;
}

/* The expert-parallel group of serve --ep with its defaults (cli_ep.c):
 * the row's GPUs a node, 50 GB/s per GPU across nodes, uniform routing. */
static ep_layout run_ep(const parallel_layout *l, precision prec, const gpu_spec *row)
{
    if (l->moe_ep <= 1)
        return (ep_layout){0};
    return ep_links_default(l->moe_ep, prec, row);
}

/* The benchmark's concurrency N as the run's id states it ("_c<N>_"), or -1. */
static int id_concurrency(const char *id)
{
    for (const char *c = strstr(id, "_c"); c; c = strstr(c + 1, "_c")) {
        char *end;
        long n = strtol(c + 2, &end, 10);
        if (end > c + 2 && *end == '_' && n > 0 && n < 1000000)
            return (int)n;
    }
    return -1;
}

/* Multi-token prediction in the runs that used it, which no column
 * states.  DeepSeek-R1 at TP 8 x EP 8 under TensorRT-LLM 1.1.0rc2 on h200
 * was measured twice with the same columns: 2026-01-14 (the 2026_03_25
 * and 2026_04_06 rows of that day; 14 shapes) and once more 2026-01-28
 * (1024 x 8192 at 64 sequences): 19.4 ms against 32.2 ms a token, the
 * second equal to DeepSeek-V3's run of the same layout (cfg181, 32.1 ms),
 * which napkin meets within 1 to 13 % without MTP.  The 2026-01-14 runs
 * are 0.52 to 0.78 of DeepSeek-V3's at every shape, the gain shrinking as
 * the batch grows (8192 x 1024: 0.57 at 4 sequences, 0.78 at 32), which is
 * MTP's shape: the verification step carries 2 tokens a sequence, so its
 * cost grows with the batch while the tokens a step stay 1 + A.  The same
 * day's DEP 8 runs are not faster than their 2026-01-28 twin (30.7 against
 * 30.4 ms at 1024 x 8192, 32 a rank): read without it.  Asked with the
 * one module DeepSeek-R1 ships (config.json num_nextn_predict_layers 1)
 * and the acceptance DeepSeek's report states for the second token,
 * 85 to 90 % (DeepSeek-V3 Technical Report, chapters/references.bib
 * deepseekv3, on speculative decoding with the MTP module): its middle,
 * not fitted to these runs. */
#define RUN_MTP_DAY "2026-01-14"
#define RUN_MTP_ACCEPT 0.875

static void run_mtp(const moe_run *r, moe_question *q)
{
    if (strcmp(r->model, "deepseek-ai/DeepSeek-R1") == 0 && strcmp(r->backend, "trtllm") == 0 &&
        strcmp(r->measured, RUN_MTP_DAY) == 0 && q->layout.attention_dp == 1 && q->layout.moe_ep > 1) {
        q->options.mtp_steps = 1;
        q->options.mtp_accept = RUN_MTP_ACCEPT;
    }
}

/* One pool of a disaggregated run as serve's --<name>-* flags state it
 * (a count not stated: 1, serve's defaults, where the other pool or count is
 * stated, the decode batch then
 * from the id's concurrency, see validate_moe.h), or a refusal. */
static int run_pool(const moe_run *r, const moe_pool *a, int decode, moe_question *q, disagg_pool *out)
{
    const char *prefix = decode ? "decode-" : "prefill-";
    if (a->tp < 1)
        return refuse(q, "no tp stated for the pool: --", prefix);
    if (a->pp > 1)
        return refuse(q, "pipeline in a disaggregated pool not yet: --", prefix);
    char e[MOE_REASON_MAX - 32];
    const int dense = q->model->experts <= 1;
    if (layout_resolve(q->model, prefix, a->tp, a->attention_dp > 0 ? a->attention_dp : 0,
                       dense || a->moe_tp < 0 ? 0 : a->moe_tp, dense || a->moe_ep < 0 ? 0 : a->moe_ep, &out->layout,
                       e, sizeof e) != 0)
        return refuse(q, "layout refused: ", e);
    out->workers = a->workers >= 1 ? a->workers : 1;
    out->batch = a->batch >= 1 ? a->batch : 1;
    if (!decode)
        return 1;
    const int n = id_concurrency(r->id), ranks = out->layout.attention_dp * out->workers;
    if (a->batch < 1) {
        if (n < 1)
            return refuse(q, "no decode batch and no concurrency in the id", "");
        out->batch = (n + ranks - 1) / ranks;
    } else if (n >= 1 && n != a->batch * ranks)
        return refuse(q, "the id's concurrency is not decode batch x attention ranks x workers", "");
    return 1;
}

/* A disaggregated run's plan: serve --disaggregate's (serve_disagg.c
 * plan_of) with serve's defaults for the links (the row's GPUs a node, 50 GB/s a
 * GPU across nodes, the hand-off's link chosen from where the pools sit). */
static int run_disagg(const moe_run *r, const gpu_spec *row, moe_question *q)
{
    disagg_plan *p = &q->plan;
    if (!run_pool(r, &r->prefill, 0, q, &p->prefill) || !run_pool(r, &r->decode, 1, q, &p->decode))
        return 0;
    if (r->prefill.workers < 1 && r->prefill.batch < 1 && r->decode.workers < 1 && r->decode.batch < 1)
        return refuse(q, "no workers or batches stated for either pool: the id's concurrency fixes workers x batch, "
                         "not the two (validate_moe.h)", "");
    memory_policy pol;
    resident_model rm = {q->model, q->setup.prec, p->decode.layout.tp};
    memory_policy_engine(r->backend, row, &rm, &pol);
    p->base = (request_setup){q->model, row, q->setup.prec, p->decode.layout.tp, r->isl, r->osl, p->decode.batch,
                              0, 0, pol, 0, 1};
    p->opt.ep = ep_links_default(0, q->setup.prec, row);
    q->layout = p->decode.layout;
    q->disagg = 1;
    return 1;
}

int moe_run_question(const moe_run *r, const gpu_table *gpus, const model_table *models, moe_question *q)
{
    memset(q, 0, sizeof *q);
    const char *key = serving_model_key(r->model);
    if (!key || !(q->model = model_find(models, key)))
        return refuse(q, "model not in models.tsv: ", r->model);
    const char *gpu = strcmp(r->system, "h200_sxm") == 0 ? "h200" : strcmp(r->system, "h100_sxm") == 0 ? "h100" : NULL;
    const gpu_spec *row = gpu ? gpu_find(gpus, gpu) : NULL;
    if (!row)
        return refuse(q, "system without a GPU row: ", r->system);
    snprintf(q->gpu_key, sizeof q->gpu_key, "%s", gpu);
    snprintf(q->calibration, sizeof q->calibration, "published:%s/%s", r->system, r->backend);
    if (strcmp(r->mode, "agg") != 0 && strcmp(r->mode, "disagg") != 0)
        return refuse(q, "mode not modelled: ", r->mode);
    if (!run_precision(r, q))
        return 0;
    if (strcmp(r->mode, "disagg") == 0)
        return run_disagg(r, row, q);
    if (!run_layout(r, row, q))
        return 0;
    /* memory planned and the loop scheduled as the engine does by default, as for the dense runs */
    memory_policy pol;
    resident_model rm = {q->model, q->setup.prec, q->layout.tp};
    memory_policy_engine(r->backend, row, &rm, &pol);
    q->setup = (request_setup){q->model, row, q->setup.prec, q->layout.tp, r->isl, r->osl,
                               run_pool_agg(r, row).batch,
                               0, 0, pol, 0, 1};
    const engine_defaults *eng = engine_defaults_find(r->backend);
    q->options = (request_options){.ep = run_ep(&q->layout, q->setup.prec, row),
                                   .prefill_first = eng && eng->prefill_first,
                                   .mixed_steps = eng && !eng->prefill_first,
                                   .layout = q->layout};
    run_mtp(r, q);
    return 1;
}

/* ---------------------------------------------------------------- the groups */

static int group_of(moe_validation *v, const moe_run *r, const moe_question *q, int max)
{
    for (int g = 0; g < v->ngroups; g++) {
        const moe_group *x = &v->groups[g];
        if (!strcmp(x->model, r->model) && !strcmp(x->system, r->system) && !strcmp(x->backend, r->backend) &&
            !strcmp(x->mode, r->mode))
            return g;
    }
    if (v->ngroups >= max)
        return -1;
    moe_group *x = &v->groups[v->ngroups];
    memset(x, 0, sizeof *x);
    snprintf(x->model, sizeof x->model, "%s", r->model);
    snprintf(x->model_key, sizeof x->model_key, "%s", q->model ? q->model->key : "-");
    snprintf(x->system, sizeof x->system, "%s", r->system);
    snprintf(x->backend, sizeof x->backend, "%s", r->backend);
    snprintf(x->mode, sizeof x->mode, "%s", r->mode);
    return v->ngroups++;
}

static void count_refusal(moe_validation *v, int g, const char *reason)
{
    for (int k = 0; k < v->nrefusals; k++)
        if (v->refusals[k].group == g && strcmp(v->refusals[k].reason, reason) == 0) {
            v->refusals[k].runs++;
            return;
        }
    moe_refusal *x = &v->refusals[v->nrefusals++];
    x->group = g;
    snprintf(x->reason, sizeof x->reason, "%s", reason);
    x->runs = 1;
}

/* The medians of a group's answered runs (err: 4 arrays of n, one per error). */
static void group_medians(moe_group *x, double *tpot, double *ttft, double *roof, int n)
{
    fit_summary s;
    x->tpot_abs_err = x->tpot_err = x->ttft_abs_err = x->ttft_err = x->tpot_err_roofline = NAN;
    if (n == 0)
        return;
    summarize_errors(tpot, n, &s);
    x->tpot_abs_err = s.median_abs_err;
    x->tpot_err = s.median_err;
    summarize_errors(ttft, n, &s);
    x->ttft_abs_err = s.median_abs_err;
    x->ttft_err = s.median_err;
    summarize_errors(roof, n, &s);
    x->tpot_err_roofline = s.median_err;
}

/* A disaggregated plan priced as serve --disaggregate answers it
 * (disagg_pools_estimate), on the roofline and with rates, against the
 * measured TTFT and TPOT: 1 priced, 0 when a pool's batch does not fit
 * (the calibrated answer's), -1 refused. */
static int disagg_price_run(const disagg_plan *plan, const rate_model *rates, double ttft, double tpot,
                            serving_errors *out)
{
    disagg_plan p = *plan;
    gpu_spec roof = *plan->base.gpu, cal = *plan->base.gpu;
    roof.rates = NULL;
    cal.rates = rates;
    disagg_pools_result rr, rc;
    char e[256];
    p.base.gpu = &roof;
    if (disagg_pools_estimate(&p, &rr, e, sizeof e) != 0)
        return -1;
    p.base.gpu = &cal;
    if (disagg_pools_estimate(&p, &rc, e, sizeof e) != 0)
        return -1;
    if (!rc.fits)
        return 0;
    const double e2e = ttft + (plan->base.output - 1) * tpot;
    memset(out, 0, sizeof *out);
    out->tpot_roofline = rr.tpot / tpot - 1;
    out->tpot = rc.tpot / tpot - 1;
    out->ttft_closed = out->ttft_bench = rc.ttft / ttft - 1;
    out->e2e = out->e2e_bench = (rc.ttft + (plan->base.output - 1) * rc.tpot) / e2e - 1;
    return 1;
}

/* Price every run; errors[3 n] gets each answered run's (TPOT, TTFT,
 * roofline TPOT) and group[n] its group. */
static void price_runs(moe_validation *v, const moe_run *runs, int n, const gpu_table *gpus,
                       const model_table *models, int *group, serving_errors *errs)
{
    engine_rates cache[16];
    int ncache = 0;
    for (int i = 0; i < n; i++) {
        moe_question q;
        int ok = moe_run_question(&runs[i], gpus, models, &q);
        int g = group[i] = group_of(v, &runs[i], &q, n);
        v->groups[g].runs++;
        v->runs++;
        if (ok && !v->groups[g].calibration[0])
            snprintf(v->groups[g].calibration, sizeof v->groups[g].calibration, "%s", q.calibration);
        const rate_model *rates = ok ? serving_engine_rates(cache, &ncache, 16, runs[i].system, runs[i].backend,
                                                            q.gpu_key)
                                     : NULL;
        int priced = !rates ? 0
                     : q.disagg ? disagg_price_run(&q.plan, rates, runs[i].ttft, runs[i].tpot, &errs[i])
                                : serving_price_run(&q.setup, &q.options, rates, q.options.overhead, runs[i].ttft,
                                                    runs[i].tpot, &errs[i]);
        if (priced == 1) {
            v->groups[g].answered++;
            v->answered++;
            continue;
        }
        group[i] = -1 - g; /* refused: not in the group's errors */
        count_refusal(v, g, !ok ? q.reason : !rates ? "no calibration" : priced == 0 ? "does not fit"
                                                                                      : "serve refuses the setup");
    }
}

int validate_moe(const char *runs_path, const gpu_table *gpus, const model_table *models, moe_validation *out,
                 char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    measured_table t;
    if (measured_table_load(runs_path, &t, err, errlen) != 0)
        return -1;
    moe_run *runs;
    int n = moe_runs_read(&t, runs_path, &runs, err, errlen);
    measured_table_free(&t);
    if (n < 0)
        return -1;
    size_t m = (size_t)(n > 0 ? n : 1);
    int *group = malloc(m * sizeof *group);
    serving_errors *errs = malloc(m * sizeof *errs);
    double *e = malloc(3 * m * sizeof *e);
    out->groups = calloc(m, sizeof *out->groups);
    out->refusals = calloc(m, sizeof *out->refusals);
    if (!group || !errs || !e || !out->groups || !out->refusals) {
        free(group), free(errs), free(e), free(runs);
        moe_validation_free(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    price_runs(out, runs, n, gpus, models, group, errs);
    for (int g = 0; g < out->ngroups; g++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (group[i] == g) {
                e[k] = errs[i].tpot, e[m + k] = errs[i].ttft_closed, e[2 * m + k] = errs[i].tpot_roofline;
                k++;
            }
        group_medians(&out->groups[g], e, e + m, e + 2 * m, k);
    }
    free(group), free(errs), free(e), free(runs);
    err[0] = 0;
    return 0;
}

void moe_validation_free(moe_validation *v)
{
    free(v->groups);
    free(v->refusals);
    memset(v, 0, sizeof *v);
}
