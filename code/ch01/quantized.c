/* Chapter 1: what 8-bit weights and KV change for LLaMA-3-70B on 4 x H100
 * at 4k context: weights per GPU, KV per token, the largest batch, the ridge
 * and the batch that reaches it, and the step time and throughput. */
#include "memory.h"
#include "notebook.h"
#include "roofline.h"
#include "specs.h"
#include "transformer.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { TP = 4, CONTEXT = 4096, BATCH = 64 };

/* Every step this program times must fit (memory_fit). */
static int require_fit(const model_spec *m, const gpu_spec *g, precision p, int batch)
{
    resident_model rm = {m, p, TP};
    fit_check f;
    char err[256], why[256];
    if (memory_fit(g, memory_policy_default(), &rm, 1, 0, batch, CONTEXT, &f, err, sizeof err) != 0) {
        fprintf(stderr, "quantized: %s\n", err);
        return -1;
    }
    if (!f.fits) {
        fit_check_describe(&f, batch, CONTEXT, why, sizeof why);
        fprintf(stderr, "quantized: %s\n", why);
        return -1;
    }
    return 0;
}

typedef struct {
    const char *key; /* value-name part */
    precision p;
} variant;

int main(void)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    const variant vs[] = {
        {"bf16", precision_uniform(DT_BF16)},
        /* weight-only: int8 in memory, dequantized and multiplied in bf16 */
        {"w8a16", {DT_INT8, DT_BF16, DT_BF16, DT_BF16, WF_AS_DTYPE, WF_AS_DTYPE}},
        /* weight-only with an fp8 KV cache */
        {"w8kv8", {DT_INT8, DT_FP8, DT_BF16, DT_BF16, WF_AS_DTYPE, WF_AS_DTYPE}},
        /* everything fp8, fp8 tensor cores */
        {"fp8", precision_uniform(DT_FP8)},
    };
    char name[96], err[512];
#define VAL(part, fmt, x)                                                                          \
    do {                                                                                           \
        snprintf(name, sizeof name, "ch01_q_%s_%s", v->key, part);                                 \
        nb_value(name, fmt, x);                                                                    \
    } while (0)
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        const variant *v = &vs[i];
        replica_memory r;
        if (replica_memory_plan(&m, &g, v->p, TP, memory_policy_default(), &r, err, sizeof err) != 0) {
            fprintf(stderr, "quantized: %s\n", err);
            return 1;
        }
        double ridge = ridge_intensity(gpu_peak_flops(&g, v->p.compute), g.mem_bw);
        int fit = max_batch_for_memory(&r, CONTEXT);
        if (require_fit(&m, &g, v->p, BATCH) != 0 || require_fit(&m, &g, v->p, fit) != 0)
            return 1;
        step_shape s = decode_shape(BATCH, CONTEXT, TP, v->p);
        step_shape sf = decode_shape(fit, CONTEXT, TP, v->p);
        step_cost c, cf;
        if (decoder_step_cost(&m, &g, &s, &c, err, sizeof err) != 0 ||
            decoder_step_cost(&m, &g, &sf, &cf, err, sizeof err) != 0) {
            fprintf(stderr, "quantized: %s\n", err);
            return 1;
        }
        VAL("weights_gb", "%.1f", r.weights / GB);
        VAL("kv_tok_kib", "%.0f", r.kv_per_token / KiB);
        VAL("left_gb", "%.1f", r.kv_budget / GB);
        VAL("b4k", "%d", fit);
        VAL("ridge", "%.0f", ridge);
        VAL("ridge_batch", "%.0f", ridge_batch(&g, v->p));
        VAL("b64_ms", "%.1f", c.time * 1e3);
        VAL("b64_user_tps", "%.0f", step_user_tokens_per_second(&c, &s));
        VAL("fit_ms", "%.1f", cf.time * 1e3);
        VAL("fit_total_tps", "%.0f", fit / cf.time);
        VAL("fit_intensity", "%.0f", cf.intensity);
        VAL("fit_bound", "%s", bound_name(cf.bound));
    }
#undef VAL
    /* At the int8-weight, fp8-KV ceiling: are the projections compute-bound
     * under bf16 math, and what do fp8 tensor cores (fp8 weights: the same
     * bytes as int8) buy at that same batch and memory? */
    {
        precision w8 = vs[2].p, w8f = {DT_FP8, DT_FP8, DT_BF16, DT_FP8, WF_AS_DTYPE, WF_AS_DTYPE};
        replica_memory r;
        if (replica_memory_plan(&m, &g, w8, TP, memory_policy_default(), &r, err, sizeof err) != 0) {
            fprintf(stderr, "quantized: %s\n", err);
            return 1;
        }
        int b = max_batch_for_memory(&r, CONTEXT);
        if (require_fit(&m, &g, w8f, b) != 0)
            return 1;
        step_shape s16 = decode_shape(b, CONTEXT, TP, w8), s8 = decode_shape(b, CONTEXT, TP, w8f);
        step_cost c16, c8;
        op_cost ops[DECODER_MAX_OPS];
        int n = decoder_step_ops(&m, &s16, ops, DECODER_MAX_OPS);
        if (n < 0 || decoder_step_cost(&m, &g, &s16, &c16, err, sizeof err) != 0 ||
            decoder_step_cost(&m, &g, &s8, &c8, err, sizeof err) != 0) {
            fprintf(stderr, "quantized: %s\n", n < 0 ? "bad shape" : err);
            return 1;
        }
        double peak16 = gpu_peak_flops(&g, DT_BF16), proj_compute = 0, proj_all = 0;
        for (int i = 0; i < n; i++) {
            if (ops[i].kind != OP_PROJECTION && ops[i].kind != OP_LOGITS)
                continue;
            bound_kind bk;
            double t = op_repeats(&m, &ops[i]) * price_op(&ops[i], &g, peak16, TP, &bk);
            proj_all += t;
            if (bk == BOUND_COMPUTE)
                proj_compute += t;
            if (strcmp(ops[i].name, "gate_up_proj") == 0) {
                nb_value("ch01_q_w8kv8_fit_gate_up_intensity", "%.0f",
                         arithmetic_intensity(ops[i].flop, op_bytes(&ops[i])));
                nb_value("ch01_q_w8kv8_fit_gate_up_bound", "%s", bound_name(bk));
            }
        }
        nb_value("ch01_q_w8kv8_fit_proj_compute_pct", "%.0f", 100 * proj_compute / proj_all);
        nb_value("ch01_q_w8kv8_fit_proj_time_pct", "%.0f", 100 * proj_all / c16.time);
        nb_value("ch01_q_w8f8_fit_ms", "%.1f", c8.time * 1e3);
        nb_value("ch01_q_w8f8_fit_total_tps", "%.0f", b / c8.time);
        nb_value("ch01_q_fp8math_gain_pct", "%.0f", 100 * (c16.time / c8.time - 1));
    }
    /* With 8-bit weights the model fits on two GPUs. */
    replica_memory r2;
    precision fp8 = precision_uniform(DT_FP8);
    if (replica_memory_plan(&m, &g, fp8, 2, memory_policy_default(), &r2, err, sizeof err) != 0) {
        fprintf(stderr, "quantized: %s\n", err);
        return 1;
    }
    nb_value("ch01_q_fp8_tp2_weights_gb", "%.1f", r2.weights / GB);
    nb_value("ch01_q_fp8_tp2_b4k", "%d", max_batch_for_memory(&r2, CONTEXT));
    return 0;
}
