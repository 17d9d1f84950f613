/* Chapter 1: LLaMA-3-70B on H100 at tensor parallelism 2, 4 and 8 in bf16.
 * Weights and KV per GPU, the KV budget, the largest batch at 1k, 4k and 32k
 * context, and what the ridge batch's KV reads do to the step's intensity. */
#include "memory.h"
#include "notebook.h"
#include "roofline.h"
#include "specs.h"
#include "transformer.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    precision p = precision_uniform(DT_BF16);
    memory_policy pol = memory_policy_default();
    char err[512];

    param_count pc = model_params(&m);
    nb_value("ch01_params70_b", "%.2f", pc.total / 1e9);
    nb_value("ch01_w70_gb", "%.1f", weight_bytes(&m, DT_BF16) / GB);
    nb_value("ch01_kv_tok_70b", "%.0f", kv_bytes_per_token(&m, DT_BF16));
    nb_value("ch01_kv_tok_70b_kib", "%.0f", kv_bytes_per_token(&m, DT_BF16) / KiB);
    nb_value("ch01_kv_seq4k_70b_gb", "%.2f", kv_bytes_per_sequence(&m, DT_BF16, 4096) / GB);
    nb_value("ch01_usable_pct", "%.0f", pol.usable_fraction * 100);
    nb_value("ch01_act_tokens", "%d", pol.activation_tokens);
    nb_value("ch01_sampled_tokens", "%d", pol.sampled_tokens);

    /* Capacity: what the driver reports against the datasheet's decimal GB,
     * and what the difference does to the TP 4, 4k ceiling. */
    replica_memory drv, sheet;
    memory_policy pol_sheet = pol;
    pol_sheet.capacity = g.mem_bytes_datasheet;
    if (replica_memory_plan(&m, &g, p, 4, pol, &drv, err, sizeof err) != 0 ||
        replica_memory_plan(&m, &g, p, 4, pol_sheet, &sheet, err, sizeof err) != 0) {
        fprintf(stderr, "fit_chain: %s\n", err);
        return 1;
    }
    nb_value("ch01_h100_driver_gb", "%.1f", g.mem_bytes / GB);
    nb_value("ch01_h100_driver_mib", "%.0f", g.mem_bytes / MiB);
    nb_value("ch01_h100_driver_gib", "%.1f", g.mem_bytes / GiB);
    nb_value("ch01_h100_datasheet_gb", "%.0f", g.mem_bytes_datasheet / GB);
    nb_value("ch01_h100_usable_gb", "%.1f", drv.usable / GB);
    nb_value("ch01_h100_usable_datasheet_gb", "%.1f", sheet.usable / GB);
    int b_drv = max_batch_for_memory(&drv, 4096), b_sheet = max_batch_for_memory(&sheet, 4096);
    nb_value("ch01_tp4_b4k_datasheet", "%d", b_sheet);
    replica_memory sheet2;
    replica_memory_plan(&m, &g, p, 2, pol_sheet, &sheet2, err, sizeof err); /* fails: filled to show by how much */
    nb_value("ch01_tp2_left_datasheet_gb", "%.1f", sheet2.kv_budget / GB);
    nb_value("ch01_tp4_b4k_driver_gain_pct", "%.0f", 100.0 * (b_drv - b_sheet) / b_sheet);

    /* The activation reserve: the working set of a step of activation_tokens
     * tokens, with fp32 logits and probabilities for the sampled positions
     * only; and what it would be with logits for every token. */
    double act = activation_bytes(&m, pol.activation_tokens, pol.sampled_tokens, p.act, 4);
    double act_nolog = activation_bytes(&m, pol.activation_tokens, 0, p.act, 4);
    double act_all = activation_bytes(&m, pol.activation_tokens, pol.activation_tokens, p.act, 4);
    nb_value("ch01_tp4_act_logits_mb", "%.0f", (act - act_nolog) / MB);
    nb_value("ch01_tp4_act_stream_mb", "%.0f", act_nolog / MB);
    nb_value("ch01_tp4_act_all_logits_gb", "%.1f", act_all / GB);

    const int batch_at_ridge = (int)lround(ridge_batch(&g, p));
    nb_value("ch01_ridge_batch", "%d", batch_at_ridge);

    const int tps[] = {2, 4, 8};
    const int ctxs[] = {1024, 4096, 32768};
    const char *ctx_names[] = {"1k", "4k", "32k"};
    FILE *f = nb_data_open("01-fit-chain.tsv");
    fprintf(f, "# LLaMA-3-70B, H100 SXM, bf16; usable %.2f of HBM, activation reserve for %d tokens\n",
            pol.usable_fraction, pol.activation_tokens);
    fprintf(f, "tp\tcontext\tweights_gb\tkv_budget_gb\tmax_batch\tridge_fits\tkv_over_weights\tintensity\n");
    for (size_t i = 0; i < sizeof tps / sizeof tps[0]; i++) {
        int tp = tps[i];
        replica_memory r;
        int fits = replica_memory_plan(&m, &g, p, tp, pol, &r, err, sizeof err) == 0;
        char name[96];
#define VAL(fmtname, fmt, x)                                                                       \
    do {                                                                                           \
        snprintf(name, sizeof name, fmtname, tp);                                                  \
        nb_value(name, fmt, x);                                                                    \
    } while (0)
        VAL("ch01_tp%d_weights_gb", "%.1f", r.weights / GB);
        VAL("ch01_tp%d_act_gb", "%.2f", r.activations / GB);
        VAL("ch01_tp%d_kv_tok", "%.0f", r.kv_per_token);
        VAL("ch01_tp%d_kv_tok_kib", "%.0f", r.kv_per_token / KiB);
        VAL("ch01_tp%d_left_gb", "%.1f", r.kv_budget / GB);
        VAL("ch01_tp%d_model_fits", "%s", fits ? "yes" : "no");
        VAL("ch01_tp%d_kv_tokens_k", "%.0f", kv_token_capacity(&r) / 1e3);
#undef VAL
        for (size_t j = 0; j < sizeof ctxs / sizeof ctxs[0]; j++) {
            int b = fits ? max_batch_for_memory(&r, ctxs[j]) : 0;
            step_shape s = decode_shape(batch_at_ridge, ctxs[j], tp, p);
            step_cost c;
            if (decoder_step_cost(&m, &g, &s, &c, err, sizeof err) != 0) {
                fprintf(stderr, "%s\n", err);
                return 1;
            }
            snprintf(name, sizeof name, "ch01_tp%d_b%s", tp, ctx_names[j]);
            nb_value(name, "%d", b);
            snprintf(name, sizeof name, "ch01_tp%d_fits_ridge_%s", tp, ctx_names[j]);
            nb_value(name, "%s", b >= batch_at_ridge ? "yes" : "no");
            /* The ridge batch's step, whether or not it fits: its KV bytes
             * over its weight bytes, and the whole step's intensity. */
            snprintf(name, sizeof name, "ch01_tp%d_ridge_%s_kvw", tp, ctx_names[j]);
            nb_value(name, "%.2f", c.kv_bytes / c.weight_bytes);
            snprintf(name, sizeof name, "ch01_tp%d_ridge_%s_intensity", tp, ctx_names[j]);
            nb_value(name, "%.0f", c.intensity);
            snprintf(name, sizeof name, "ch01_tp%d_ridge_%s_bound", tp, ctx_names[j]);
            nb_value(name, "%s", bound_name(c.bound));
            if (b >= batch_at_ridge) { /* a step time only for a batch that is held */
                snprintf(name, sizeof name, "ch01_tp%d_ridge_%s_ms", tp, ctx_names[j]);
                nb_value(name, "%.1f", c.time * 1e3);
            }
            /* how busy the tensor cores are while the bytes stream */
            snprintf(name, sizeof name, "ch01_tp%d_ridge_%s_compute_pct", tp, ctx_names[j]);
            nb_value(name, "%.0f", 100 * c.time_compute / c.time_memory);
            fprintf(f, "%d\t%d\t%.3f\t%.3f\t%d\t%d\t%.3f\t%.1f\n", tp, ctxs[j], r.weights / GB, r.kv_budget / GB, b,
                    b >= batch_at_ridge, c.kv_bytes / c.weight_bytes, c.intensity);
        }
    }
    fclose(f);
    return 0;
}
