/* Chapter 12, the first question: a 7B model on one trillion tokens in
 * three weeks, on H100 SXM (bf16, dense peak).  Records the values the
 * chapter quotes, the Llama 3 cross-checks, and writes 12-deadline.tsv (GPUs
 * against the deadline for several MFUs, whole 8-GPU nodes, Llama 3's
 * failure rate). */
#include "notebook.h"
#include "train.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PARAMS 7e9
#define TOKENS 1e12
#define DAYS 21.0
#define MFU 0.4
#define NODE 8
#define PRICE 2.0 /* an assumed rental price per H100-hour, not a quote */

static cluster_plan plan(const train_run *r, double days)
{
    cluster_plan c;
    if (train_cluster_for_deadline(r, days * 86400.0, NODE, &c) != 0) {
        fprintf(stderr, "cluster: no cluster meets %g days\n", days);
        exit(1);
    }
    return c;
}

/* "4.2" and "22" for 4.2e22 */
static void value_sci(const char *name, double x, int digits)
{
    int e = (int)floor(log10(x));
    char n1[64], n2[64];
    snprintf(n1, sizeof n1, "%s_mant", name);
    snprintf(n2, sizeof n2, "%s_exp", name);
    nb_value(n1, "%.*f", digits, x / pow(10, e));
    nb_value(n2, "%d", e);
}

int main(void)
{
    gpu_spec h100 = gpu_builtin("h100");
    model_spec m8 = model_builtin("llama3-8b"), m405 = model_builtin("llama3-405b");
    double peak = gpu_peak_flops(&h100, DT_BF16);

    nb_value("ch12_l8_matmul_b", "%.2f", train_matmul_params(&m8) / 1e9);
    nb_value("ch12_l8_total_b", "%.2f", model_params(&m8).total / 1e9);

    /* --- the headline: 6 N D, dense peak, 40% MFU, Llama 3's failure rate --- */
    train_flop f = train_flop_per_token(PARAMS, NULL, 4096, RECOMPUTE_NONE);
    train_run r = {f.model * TOKENS, peak, MFU, goodput_model_llama3()};
    cluster_plan c = plan(&r, DAYS);
    value_sci("ch12_q1_flop", r.flop, 1);
    nb_value("ch12_peak_tflops", "%.1f", peak / 1e12);
    nb_value("ch12_q1_gpu_hours", "%.0f", train_gpu_seconds(&r) / 3600.0);
    nb_value("ch12_q1_gpu_days", "%.0f", train_gpu_seconds(&r) / 86400.0);
    nb_value("ch12_q1_gpus_exact", "%.1f", c.gpus_exact);
    nb_value("ch12_q1_gpus", "%d", c.gpus);
    nb_value("ch12_q1_nodes", "%d", c.nodes);
    nb_value("ch12_q1_days", "%.1f", c.seconds / 86400.0);
    nb_value("ch12_q1_goodput_pct", "%.2f", 100 * c.goodput);
    nb_value("ch12_q1_rented_hours", "%.0f", c.gpu_hours);
    nb_value("ch12_price", "%.2f", PRICE);
    nb_value("ch12_q1_cost_k", "%.0f", c.gpu_hours * PRICE / 1e3);

    /* --- does the model fit that cluster?  LLaMA-3-8B's shape at 4096 tokens --- */
    {
        train_layout l = train_layout_default();
        l.seq = 4096;
        train_state_bytes b = train_state_adam_mixed();
        layout_fit best;
        const int zeros[] = {0, 1};
        for (int i = 0; i < 2; i++) {
            l.zero = zeros[i];
            if (train_layout_search(&m8, &h100, c.gpus, NODE, &l, &b, &best, 1) < 1) {
                fprintf(stderr, "cluster: no layout of %d GPUs holds llama3-8b\n", c.gpus);
                return 1;
            }
            char n[64];
            snprintf(n, sizeof n, "ch12_q1_z%d_tp", zeros[i]);
            nb_value(n, "%d", best.tp);
            snprintf(n, sizeof n, "ch12_q1_z%d_dp", zeros[i]);
            nb_value(n, "%d", best.dp);
            snprintf(n, sizeof n, "ch12_q1_z%d_gb", zeros[i]);
            nb_value(n, "%.1f", best.total / 1e9);
        }
        nb_value("ch12_q1_l8_state_gb", "%.0f", 16 * model_params(&m8).total / 1e9);
    }

    /* --- how the answer moves --- */
    const double mfus[] = {0.3, 0.5};
    for (int i = 0; i < 2; i++) {
        train_run v = r;
        v.mfu = mfus[i];
        char n[64];
        snprintf(n, sizeof n, "ch12_q1_gpus_mfu%02.0f", 100 * mfus[i]);
        nb_value(n, "%d", plan(&v, DAYS).gpus);
    }
    /* the sparse figure, twice the dense one, promises half the cluster */
    train_run sparse = r;
    sparse.peak = 2 * peak;
    nb_value("ch12_q1_gpus_sparse", "%d", plan(&sparse, DAYS).gpus);
    nb_value("ch12_q1_days_sparse_real", "%.0f", train_seconds_on(&r, plan(&sparse, DAYS).gpus) / 86400.0);
    /* the attention term of a 7B-class shape (32 layers, width 4096, as LLaMA-3-8B) */
    const int seqs[] = {2048, 4096, 8192, 32768};
    for (int i = 0; i < 4; i++) {
        train_flop fa = train_flop_per_token(PARAMS, &m8, seqs[i], RECOMPUTE_NONE);
        char n[64];
        snprintf(n, sizeof n, "ch12_attn_share_%d", seqs[i]);
        nb_value(n, "%.0f", 100 * fa.attention / fa.dense);
        if (seqs[i] == 4096 || seqs[i] == 8192) {
            train_run v = r;
            v.flop = fa.model * TOKENS;
            snprintf(n, sizeof n, "ch12_q1_gpus_attn_%d", seqs[i]);
            nb_value(n, "%d", plan(&v, DAYS).gpus);
        }
    }
    /* full recomputation: the same model FLOPs, 4/3 the hardware FLOPs */
    train_flop ff = train_flop_per_token(PARAMS, NULL, 4096, RECOMPUTE_FULL);
    nb_value("ch12_full_ratio", "%.3f", ff.hardware / ff.model);
    nb_value("ch12_full_hfu_pct", "%.0f", 100 * MFU * ff.hardware / ff.model);
    /* a fixed 90% goodput instead of the failure model */
    train_run g90 = r;
    g90.goodput = goodput_model_fixed(0.9);
    nb_value("ch12_q1_gpus_goodput90", "%d", plan(&g90, DAYS).gpus);

    /* --- goodput under failures --- */
    goodput_model gm = goodput_model_llama3();
    nb_value("ch12_fail_per_gpu_year", "%.3f", gm.interruptions_per_gpu_day * 365);
    nb_value("ch12_fail_minutes_lost", "%.1f", gm.hours_lost * 60);
    nb_value("ch12_fail_per_day_q1", "%.2f", gm.interruptions_per_gpu_day * c.gpus);
    nb_value("ch12_fail_per_day_16k", "%.1f", gm.interruptions_per_gpu_day * 16384);
    nb_value("ch12_fail_mtbf_hours_16k", "%.1f", 24.0 / (gm.interruptions_per_gpu_day * 16384));
    nb_value("ch12_goodput_1k_pct", "%.1f", 100 * goodput_at(&gm, 1024));
    double k = gm.interruptions_per_gpu_day * gm.hours_lost / 24.0;
    nb_value("ch12_fail_best_gpus", "%.0f", 1 / (2 * k));
    nb_value("ch12_fail_best_work", "%.0f", 1 / (4 * k));

    /* --- Llama 3 405B against its paper and model card --- */
    double n405 = train_matmul_params(&m405);
    double flop405 = train_flop_per_token(n405, NULL, 8192, RECOMPUTE_NONE).dense * 15.6e12;
    nb_value("ch12_l3_params_b", "%.1f", n405 / 1e9);
    value_sci("ch12_l3_flop", flop405, 2);
    nb_value("ch12_l3_mfu_430", "%.1f", 100 * train_mfu(430e12, peak));
    nb_value("ch12_l3_mfu_400", "%.1f", 100 * train_mfu(400e12, peak));
    nb_value("ch12_l3_mfu_380", "%.1f", 100 * train_mfu(380e12, peak));
    nb_value("ch12_l3_util_pct", "%.1f", 100 * train_implied_utilisation(flop405, peak, 30.84e6));
    nb_value("ch12_l3_util_pct_say", "%.0f", 100 * train_implied_utilisation(flop405, peak, 30.84e6));
    nb_value("ch12_l3_card_days_16k", "%.0f", 30.84e6 / 16384 / 24);
    train_run l3 = {flop405, peak, 0.41, goodput_model_llama3()};
    nb_value("ch12_l3_days_16k", "%.0f", train_seconds_on(&l3, 16384) / 86400.0);

    /* --- figure: GPUs against the deadline --- */
    FILE *fd = nb_data_open("12-deadline.tsv");
    fprintf(fd, "# 7e9 parameters, 1e12 tokens, 6ND, H100 SXM dense bf16 %.1f TFLOP/s, whole %d-GPU nodes,\n"
                "# goodput from Llama 3's interruption rate\n",
            peak / 1e12, NODE);
    fprintf(fd, "days\tmfu_0.3\tmfu_0.4\tmfu_0.5\tmfu_0.6\tsparse_0.4\n");
    for (int d = 5; d <= 90; d++) {
        fprintf(fd, "%d", d);
        const double ms[] = {0.3, 0.4, 0.5, 0.6};
        for (int i = 0; i < 4; i++) {
            train_run v = r;
            v.mfu = ms[i];
            fprintf(fd, "\t%d", plan(&v, d).gpus);
        }
        fprintf(fd, "\t%d\n", plan(&sparse, d).gpus);
    }
    fclose(fd);
    FILE *mk = nb_data_open("12-deadline-marks.tsv");
    fprintf(mk, "days\tgpus\tlabel\n%.0f\t%d\t%d GPUs in %.0f days\n", DAYS, c.gpus, c.gpus, DAYS);
    fclose(mk);
    return 0;
}
