/* Chapter 6, the step-time limit: a decode step with D distinct adapters
 * among B sequences, against the base step.  LLaMA-3-70B on 4 x H100 SXM and
 * LLaMA-3-8B on one H100, bf16, 4096-token contexts, rank 16 on q, k, v, o,
 * with 64 adapter slots (so every D up to 64 can run).  Every point is checked
 * to fit in memory first.
 *
 * Writes 06-step.tsv (step / base step against D, with and without the
 * kernels' fixed costs) and the values the chapter quotes. */
#include "lora.h"
#include "notebook.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { CONTEXT = 4096, BATCH = 64, SLOTS = 64, RANK = 16 };

typedef struct {
    const model_spec *m;
    int tp;
} deployment;

/* Exit unless `batch` sequences fit beside the slots. */
static void must_fit(const gpu_spec *g, const lora_config *c, int slots, int batch)
{
    fit_check f;
    char err[256];
    if (lora_memory_fit(g, memory_policy_default(), precision_uniform(DT_BF16), c, slots, batch, CONTEXT, &f, err,
                        sizeof err) != 0 ||
        !f.fits) {
        fprintf(stderr, "step: %s at tp %d, batch %d beside %d slots does not fit (largest %d)\n", c->model->key,
                c->tp, batch, slots, f.max_batch);
        exit(1);
    }
}

static lora_step_cost step(const gpu_spec *g, const lora_config *c, int batch, int distinct, double launch_s)
{
    lora_step_shape s = {batch, CONTEXT, distinct, launch_s, 0};
    lora_step_cost r;
    char err[256];
    if (lora_step_cost_compute(g, precision_uniform(DT_BF16), c, &s, &r, err, sizeof err) != 0) {
        fprintf(stderr, "step: %s\n", err);
        exit(1);
    }
    return r;
}

int main(void)
{
    model_spec m70 = model_builtin("llama3-70b"), m8 = model_builtin("llama3-8b");
    gpu_spec h100 = gpu_builtin("h100"), a100 = gpu_builtin("a100");
    lora_config c70 = {&m70, RANK, LORA_TARGETS_ATTENTION, DT_BF16, 4};
    lora_config c8 = {&m8, RANK, LORA_TARGETS_ATTENTION, DT_BF16, 1};
    must_fit(&h100, &c70, SLOTS, BATCH);
    must_fit(&h100, &c8, SLOTS, BATCH);
    const double L = LORA_LAUNCH_S_DEFAULT;

    FILE *f = nb_data_open("06-step.tsv");
    fprintf(f, "distinct\tr70\tr70_ops\tr8\tr8_ops\n");
    int visible70 = 0, visible8 = 0;
    for (int d = 1; d <= BATCH; d++) {
        lora_step_cost a = step(&h100, &c70, BATCH, d, L), a0 = step(&h100, &c70, BATCH, d, 0);
        lora_step_cost b = step(&h100, &c8, BATCH, d, L), b0 = step(&h100, &c8, BATCH, d, 0);
        fprintf(f, "%d\t%.5f\t%.5f\t%.5f\t%.5f\n", d, a.ratio, a0.ratio, b.ratio, b0.ratio);
        if (!visible70 && a0.ratio >= 1.05)
            visible70 = d;
        if (!visible8 && b0.ratio >= 1.05)
            visible8 = d;
    }
    fclose(f);
    /* the first D at which the adapter ops alone add 5% (0: not up to 64) */
    nb_value("ch06_visible70", "%d", visible70);
    nb_value("ch06_visible8", "%d", visible8);

    /* The 70B at batch 64: D = 1, 8, 64. */
    lora_step_cost d1 = step(&h100, &c70, BATCH, 1, L), d8 = step(&h100, &c70, BATCH, 8, L),
                   d64 = step(&h100, &c70, BATCH, 64, L), d64o = step(&h100, &c70, BATCH, 64, 0),
                   d8o = step(&h100, &c70, BATCH, 8, 0);
    nb_value("ch06_base_ms", "%.1f", 1e3 * d1.base.time);
    nb_value("ch06_base_weight_gb", "%.1f", d1.base.weight_bytes / GB);
    nb_value("ch06_base_bytes_gb", "%.1f", d1.base.bytes / GB);
    nb_value("ch06_ratio_d1", "%.3f", d1.ratio);
    nb_value("ch06_ratio_d8", "%.3f", d8.ratio);
    nb_value("ch06_ratio_d64", "%.3f", d64.ratio);
    nb_value("ch06_ratio_d64_say", "%.1f", d64.ratio); /* the key numbers, as said aloud */
    nb_value("ch06_ratio_d64_ops", "%.3f", d64o.ratio);
    nb_value("ch06_ratio_d8_ops", "%.3f", d8o.ratio);
    nb_value("ch06_launches", "%d", d1.launches);
    nb_value("ch06_launch_us", "%.1f", 1e6 * L);
    nb_value("ch06_launch_ms", "%.2f", 1e3 * d1.time_launch);
    nb_value("ch06_ops_d1_us", "%.0f", 1e6 * d1.time_ops);
    nb_value("ch06_ops_d64_ms", "%.2f", 1e3 * d64.time_ops);
    nb_value("ch06_adapter_mb_d8", "%.0f", d8.weight_bytes / MB);
    nb_value("ch06_adapter_gb_d64", "%.2f", d64.weight_bytes / GB);
    nb_value("ch06_adapter_act_mb", "%.0f", d8.act_bytes / MB);
    nb_value("ch06_adapter_pct_weights_d1", "%.2f", 100 * d1.weight_bytes / d1.base.weight_bytes);
    nb_value("ch06_share_d8_pct", "%.1f", 100 * d8.adapter_share);
    nb_value("ch06_share_d8_launch_pct", "%.0f", 100 * d8.time_launch / d8.time_adapter);
    nb_value("ch06_tps_base", "%.0f", step_tokens_per_second(&d1.base));
    nb_value("ch06_tps_d8", "%.0f", d8.tokens_per_s);
    nb_value("ch06_intensity_d1", "%.0f", d1.intensity);
    nb_value("ch06_intensity_d64", "%.0f", d64.intensity);
    nb_value("ch06_ridge_h100", "%.0f", ridge_batch(&h100, precision_uniform(DT_BF16)));
    nb_value("ch06_added_ms_d8", "%.2f", 1e3 * d8.time_adapter);

    /* The 8B at batch 64. */
    lora_step_cost e1 = step(&h100, &c8, BATCH, 1, L), e64 = step(&h100, &c8, BATCH, 64, L),
                   e64o = step(&h100, &c8, BATCH, 64, 0);
    nb_value("ch06_8b_base_ms", "%.2f", 1e3 * e1.base.time);
    nb_value("ch06_8b_ratio_d1", "%.3f", e1.ratio);
    nb_value("ch06_8b_ratio_d64", "%.3f", e64.ratio);
    nb_value("ch06_8b_ratio_d64_ops", "%.3f", e64o.ratio);

    /* Chapter 1's operating points for the 70B: batch 1, 16, 64, each with
     * as many distinct adapters as sequences (at most 8 slots' worth). */
    printf("LLaMA-3-70B, 4 x H100, bf16, context %d, rank %d on q,k,v,o, %.1f us per adapter kernel\n", CONTEXT,
           RANK, 1e6 * L);
    printf("%6s %4s %10s %12s %8s %10s\n", "batch", "D", "base", "with adapters", "ratio", "tokens/s");
    const int batches[] = {1, 16, 64};
    for (int i = 0; i < 3; i++) {
        int b = batches[i], d = b < 8 ? b : 8;
        must_fit(&h100, &c70, 8, b);
        lora_step_cost r = step(&h100, &c70, b, d, L);
        printf("%6d %4d %8.2f ms %10.2f ms %8.3f %10.0f\n", b, d, 1e3 * r.base.time, 1e3 * r.time, r.ratio,
               r.tokens_per_s);
        char n[64];
        snprintf(n, sizeof n, "ch06_op_b%d_ratio", b);
        nb_value(n, "%.3f", r.ratio);
    }

    /* Padded ranks: a mix of rank-8 and rank-64 adapters run in slots of 64. */
    lora_config p8 = c70, p64 = c70;
    p8.rank = 8;
    p64.rank = 64;
    must_fit(&h100, &p64, 8, BATCH);
    lora_step_cost s8 = step(&h100, &p8, BATCH, 8, L), s64 = step(&h100, &p64, BATCH, 8, L);
    lora_step_cost s8o = step(&h100, &p8, BATCH, 8, 0), s64o = step(&h100, &p64, BATCH, 8, 0);
    nb_value("ch06_pad_ratio_r8", "%.3f", s8.ratio);
    nb_value("ch06_pad_ratio_r64", "%.3f", s64.ratio);
    nb_value("ch06_pad_ops_x", "%.1f", s64o.time_ops / s8o.time_ops);

    /* Punica's operator shape read as one 4096 -> 4096 projection on an
     * A100 at rank 16: the bytes our count gives, and what 116 us means. */
    lora_op sh, ex;
    lora_bgmv_ops(64, 4096, 4096, 16, 64, 2, 2, &sh, &ex);
    double bytes = sh.weight_bytes + sh.act_bytes + ex.weight_bytes + ex.act_bytes;
    nb_value("ch06_punica_mb", "%.1f", bytes / MB);
    nb_value("ch06_punica_roof_us", "%.1f", 1e6 * bytes / a100.mem_bw);
    nb_value("ch06_punica_pct", "%.0f", 100 * bytes / 116e-6 / a100.mem_bw);
    return 0;
}
