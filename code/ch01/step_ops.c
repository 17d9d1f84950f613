/* Chapter 1: one decode step of LLaMA-3-70B on 4 x H100 (bf16), batch 64,
 * 4k context, op by op.  Writes 01-step-ops.tsv (each op on the roofline)
 * and 01-roof.tsv (the H100 bf16 roof), and records the intensities and
 * byte shares the prose quotes. */
#include "comm.h"
#include "memory.h"
#include "notebook.h"
#include "roofline.h"
#include "specs.h"
#include "transformer.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { BATCH = 64, CONTEXT = 4096, TP = 4 };

/* Every step this program times must fit: weights, reserve and KV of the
 * batch on each GPU (memory_fit). */
static int require_fit(const model_spec *m, const gpu_spec *g, precision p, int tp, int batch, int context)
{
    resident_model rm = {m, p, tp};
    fit_check f;
    char err[256], why[256];
    if (memory_fit(g, memory_policy_default(), &rm, 1, 0, batch, context, &f, err, sizeof err) != 0) {
        fprintf(stderr, "step_ops: %s\n", err);
        return -1;
    }
    if (!f.fits) {
        fit_check_describe(&f, batch, context, why, sizeof why);
        fprintf(stderr, "step_ops: tp %d: %s\n", tp, why);
        return -1;
    }
    return 0;
}

/* The collectives' share of one decode step at batch b, tp GPUs. */
static double comm_share(const model_spec *m, const gpu_spec *g, int batch, int context, int tp, step_cost *out)
{
    step_shape s = decode_shape(batch, context, tp, precision_uniform(DT_BF16));
    char err[256];
    if (require_fit(m, g, s.prec, tp, batch, context) != 0 || decoder_step_cost(m, g, &s, out, err, sizeof err) != 0)
        return -1;
    return out->time_comm / out->time;
}

int main(void)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    precision p = precision_uniform(DT_BF16);
    step_shape s = decode_shape(BATCH, CONTEXT, TP, p);
    const double peak = gpu_peak_flops(&g, DT_BF16), bw = g.mem_bw;
    char err[512];

    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    step_cost c;
    if (require_fit(&m, &g, p, TP, BATCH, CONTEXT) != 0)
        return 1;
    if (n < 0 || decoder_step_cost(&m, &g, &s, &c, err, sizeof err) != 0) {
        fprintf(stderr, "bad shape: %s\n", n < 0 ? "decoder_step_ops" : err);
        return 1;
    }

    FILE *f = nb_data_open("01-step-ops.tsv");
    fprintf(f, "# LLaMA-3-70B, 4 x H100 SXM (one GPU shown), bf16, batch %d, context %d\n", BATCH, CONTEXT);
    fprintf(f, "op\tintensity\tattainable_tflops\tbytes_mb\ttime_us\ttime_share\n");
    double by_kind_time[OP_ALLGATHER + 1] = {0};
    int occurrences = 0; /* op instances in a step: a lower bound on kernel launches */
    for (int i = 0; i < n; i++) {
        const op_cost *op = &ops[i];
        double reps = op_repeats(&m, op);
        occurrences += op_repeats(&m, op);
        double bytes = op_bytes(op);
        double ai = arithmetic_intensity(op->flop, bytes);
        double t = reps * price_op(op, &g, peak, TP, NULL);
        by_kind_time[op->kind] += t;
        if (op->flop > 0) /* a gather (the embedding) or a collective has no place on a log-log roofline */
            fprintf(f, "%s\t%.4g\t%.4g\t%.4g\t%.4g\t%.4f\n", op->name, ai, attainable_flops(ai, peak, bw) / TERA,
                    reps * bytes / MB, t * 1e6, t / c.time);
        char name[96];
        if (!op_is_comm(op)) {
            snprintf(name, sizeof name, "ch01_op_%s_intensity", op->name);
            nb_value(name, op->flop > 0 && ai < 10 ? "%.2f" : "%.0f", ai);
        }
    }
    fclose(f);

    /* The whole step as one point. */
    FILE *w = nb_data_open("01-step-whole.tsv");
    fprintf(w, "intensity\tattainable_tflops\n%.4g\t%.4g\n", c.intensity, attainable_flops(c.intensity, peak, bw) / TERA);
    fclose(w);

    /* The roof, log-spaced in intensity. */
    FILE *r = nb_data_open("01-roof.tsv");
    fprintf(r, "# H100 SXM bf16: %.1f TFLOP/s dense, %.2f TB/s\nintensity\tattainable_tflops\n", peak / TERA, bw / TB);
    for (double ai = 0.05; ai <= 5000; ai *= 1.05)
        fprintf(r, "%.4g\t%.4g\n", ai, attainable_flops(ai, peak, bw) / TERA);
    fclose(r);
    FILE *rp = nb_data_open("01-ridge.tsv");
    fprintf(rp, "ridge\tpeak_tflops\n%.4g\t%.4g\n", ridge_intensity(peak, bw), peak / TERA);
    fclose(rp);

    nb_value("ch01_step_intensity", "%.0f", c.intensity);
    nb_value("ch01_step_ms", "%.1f", c.time * 1e3);
    nb_value("ch01_step_weight_gb", "%.1f", c.weight_bytes / GB);
    nb_value("ch01_step_kv_gb", "%.1f", c.kv_bytes / GB);
    nb_value("ch01_step_act_gb", "%.2f", c.act_bytes / GB);
    nb_value("ch01_step_weight_pct", "%.0f", 100 * c.weight_bytes / c.bytes);
    nb_value("ch01_step_kv_pct", "%.0f", 100 * c.kv_bytes / c.bytes);
    nb_value("ch01_step_act_pct", "%.1f", 100 * c.act_bytes / c.bytes);
    nb_value("ch01_step_attn_time_pct", "%.0f", 100 * by_kind_time[OP_ATTENTION] / c.time);
    nb_value("ch01_step_proj_time_pct", "%.0f",
             100 * (by_kind_time[OP_PROJECTION] + by_kind_time[OP_LOGITS]) / c.time);
    nb_value("ch01_step_small_time_pct", "%.1f",
             100 * (by_kind_time[OP_NORM] + by_kind_time[OP_ELEMENTWISE] + by_kind_time[OP_EMBEDDING]) / c.time);
    nb_value("ch01_step_compute_pct", "%.0f", 100 * c.time_compute / c.time);
    /* Communication: the collectives' time in this step, and its share at
     * batch 1 (where the rest of the step is smallest) on 4 and 8 GPUs. */
    nb_value("ch01_step_comm_ms", "%.2f", c.time_comm * 1e3);
    nb_value("ch01_step_comm_pct", "%.1f", 100 * c.time_comm / c.time);
    nb_value("ch01_step_allreduce_us", "%.1f", 1e6 * allreduce_time(&g, TP, BATCH * (double)m.hidden * 2));
    nb_value("ch01_allreduce_latency_us", "%.1f", 1e6 * g.allreduce_latency);
    nb_value("ch01_link_gbs", "%.0f", g.link_bw / GB);
    nb_value("ch01_step_nocomm_ms", "%.1f", (c.time - c.time_comm) * 1e3);
    nb_value("ch01_step_collectives", "%d", 2 * m.layers + 2);
    const int tps[] = {4, 8};
    for (int i = 0; i < 2; i++) {
        step_cost c1;
        double share = comm_share(&m, &g, 1, CONTEXT, tps[i], &c1);
        if (share < 0)
            return 1;
        char name[96];
        snprintf(name, sizeof name, "ch01_comm_b1_tp%d_pct", tps[i]);
        nb_value(name, "%.0f", 100 * share);
        snprintf(name, sizeof name, "ch01_comm_b1_tp%d_ms", tps[i]);
        nb_value(name, "%.2f", c1.time_comm * 1e3);
        snprintf(name, sizeof name, "ch01_step_b1_tp%d_ms", tps[i]);
        nb_value(name, "%.2f", c1.time * 1e3);
    }
    nb_value("ch01_step_tflops", "%.0f", c.flop / c.time / TERA);
    nb_value("ch01_step_gqa_group", "%d", m.heads / m.kv_heads);
    nb_value("ch01_step_op_count", "%d", occurrences);
    nb_value("ch01_step_op_count_1us_pct", "%.0f", 100 * occurrences * 1e-6 / c.time);
    return 0;
}
