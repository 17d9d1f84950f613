/* Chapter 10: the capped geometric process and the two verification cost
 * regimes, for LLaMA-3-70B on 4 x H100 SXM (bf16) with a LLaMA-3-8B or
 * LLaMA-3.2-1B draft.
 *
 * Writes 10-heatmap.tsv (speedup over alpha x gamma in regime (i) at batch 1
 * and regime (ii) at a busy batch), 10-crossover.tsv (speedup against batch,
 * both regimes) and 10-distribution.tsv (P(N = k) for a few alphas), and the
 * values the chapter quotes. */
#include "notebook.h"
#include "specdec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { TP = 4, GAMMA_MAX = 10, BATCH_MAX = 1024 };
/* The pair: a short-prompt service (256 tokens of context) at batch 256. */
enum { PAIR_CONTEXT = 256, PAIR_BATCH = 256, PAIR_GAMMA = 4 };
#define PAIR_ALPHA 0.8

static spec_estimate estimate(const spec_setup *s, double alpha, int gamma)
{
    spec_estimate e;
    char err[512];
    if (spec_estimate_compute(s, alpha, gamma, &e, err, sizeof err) != 0) {
        fprintf(stderr, "regimes: %s\n", err);
        exit(1);
    }
    return e;
}

int main(void)
{
    model_spec target = model_builtin("llama3-70b");
    model_spec d8 = model_builtin("llama3-8b");
    model_spec d1 = model_builtin("llama3.2-1b");
    gpu_spec h100 = gpu_builtin("h100");
    char err[512];

    /* --- the process at alpha 0.8, gamma 4 --- */
    nb_value("ch10_e_08_4", "%.4f", spec_expected_tokens(0.8, 4));
    nb_value("ch10_e_08_4_nobonus", "%.4f", spec_expected_tokens(0.8, 4) - 1.0);
    nb_value("ch10_var_08_4", "%.2f", spec_tokens_variance(0.8, 4));
    nb_value("ch10_sd_08_4", "%.2f", sqrt(spec_tokens_variance(0.8, 4)));
    nb_value("ch10_p1_08_4", "%.2f", spec_tokens_pmf(0.8, 4, 1));
    nb_value("ch10_pall_08_4", "%.2f", spec_tokens_pmf(0.8, 4, 5));
    nb_value("ch10_pall_08_4_pct", "%.0f", 100 * spec_tokens_pmf(0.8, 4, 5));
    nb_value("ch10_p1_08_4_pct", "%.0f", 100 * spec_tokens_pmf(0.8, 4, 1));
    nb_value("ch10_e_08_inf", "%.0f", 1.0 / (1.0 - 0.8));
    /* Leviathan's Table 1 rows, from the library */
    const struct {
        double a;
        int g;
        const char *name;
    } rows[] = {{0.6, 2, "06_2"}, {0.7, 3, "07_3"}, {0.8, 2, "08_2"},
                {0.8, 5, "08_5"}, {0.9, 2, "09_2"}, {0.9, 10, "09_10"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char n1[64], n2[64];
        snprintf(n1, sizeof n1, "ch10_lev_speed_%s", rows[i].name);
        snprintf(n2, sizeof n2, "ch10_lev_ops_%s", rows[i].name);
        nb_value(n1, "%.2f", spec_walltime_speedup(rows[i].a, rows[i].g, 0.0));
        nb_value(n2, "%.2f", spec_operations_factor(rows[i].a, rows[i].g, 0.0));
    }

    FILE *dist = nb_data_open("10-distribution.tsv");
    fprintf(dist, "# P(N = k) tokens per round, gamma 4\nk\talpha_0.6\talpha_0.8\talpha_0.9\n");
    for (int k = 1; k <= 5; k++)
        fprintf(dist, "%d\t%.6f\t%.6f\t%.6f\n", k, spec_tokens_pmf(0.6, 4, k), spec_tokens_pmf(0.8, 4, k),
                spec_tokens_pmf(0.9, 4, k));
    fclose(dist);

    /* --- draft cost c at batch 1, from the step model --- */
    spec_setup s8 = spec_setup_default(&target, &d8, &h100, TP, 1, PAIR_CONTEXT);
    spec_setup s1 = spec_setup_default(&target, &d1, &h100, TP, 1, PAIR_CONTEXT);
    spec_estimate e8 = estimate(&s8, PAIR_ALPHA, PAIR_GAMMA);
    spec_estimate e1 = estimate(&s1, PAIR_ALPHA, PAIR_GAMMA);
    nb_value("ch10_c8", "%.3f", e8.c);
    nb_value("ch10_c1", "%.3f", e1.c);
    nb_value("ch10_t_target_ms", "%.1f", e8.t_target * 1e3);
    nb_value("ch10_t_draft8_ms", "%.2f", e8.t_draft * 1e3);

    /* best gamma per alpha at the 8B draft's c (regime i) */
    for (int a = 50; a <= 95; a += 5) {
        double sp;
        int g = spec_best_gamma(a / 100.0, e8.c, GAMMA_MAX, &sp);
        char n1[64], n2[64];
        snprintf(n1, sizeof n1, "ch10_best_gamma_%02d", a);
        snprintf(n2, sizeof n2, "ch10_best_speedup_%02d", a);
        nb_value(n1, "%d", g);
        nb_value(n2, "%.2f", sp);
    }

    /* --- the pair: regime (i) at batch 1, regime (ii) at a busy batch --- */
    spec_setup busy = s8;
    busy.batch = PAIR_BATCH;
    spec_estimate eb = estimate(&busy, PAIR_ALPHA, PAIR_GAMMA);
    nb_value("ch10_pair_win", "%.2f", e8.speedup_free);
    nb_value("ch10_pair_win_roofline", "%.2f", e8.speedup_roofline);
    nb_value("ch10_pair_loss", "%.2f", eb.speedup_roofline);
    nb_value("ch10_pair_loss_free", "%.2f", eb.speedup_free);
    nb_value("ch10_pair_verify_ratio", "%.2f", eb.verify_ratio);
    nb_value("ch10_pair_c_busy", "%.3f", eb.c);
    nb_value("ch10_pair_t_target_ms", "%.1f", eb.t_target * 1e3);
    nb_value("ch10_pair_t_verify_ms", "%.1f", eb.t_verify * 1e3);
    /* the same batch with 4096-token contexts: attention's KV reads, which
     * verification does not multiply, dilute the extra work */
    spec_setup longctx = busy;
    longctx.context = 4096;
    spec_estimate el = estimate(&longctx, PAIR_ALPHA, PAIR_GAMMA);
    nb_value("ch10_long_loss", "%.2f", el.speedup_roofline);
    nb_value("ch10_long_verify_ratio", "%.2f", el.verify_ratio);
    /* the batch at which regime (ii) first rounds to 0.75 or less */
    int b075 = 0;
    for (int b = 1; b <= BATCH_MAX && !b075; b++) {
        busy.batch = b;
        if (lround(100 * estimate(&busy, PAIR_ALPHA, PAIR_GAMMA).speedup_roofline) <= 75)
            b075 = b;
    }
    nb_value("ch10_pair_batch_075", "%d", b075);
    int even = spec_break_even_batch(&s8, PAIR_ALPHA, PAIR_GAMMA, BATCH_MAX, err, sizeof err);
    if (even < 0) {
        fprintf(stderr, "regimes: %s\n", err);
        return 1;
    }
    nb_value("ch10_pair_break_even", "%d", even);
    FILE *marks = nb_data_open("10-marks.tsv");
    busy.batch = even;
    fprintf(marks, "batch\tspeedup\tlabel\n%d\t%.4f\tbreak-even batch %d\n", even,
            estimate(&busy, PAIR_ALPHA, PAIR_GAMMA).speedup_roofline, even);
    busy.batch = PAIR_BATCH;
    fprintf(marks, "%d\t%.4f\t%.2fx at batch %d\n", PAIR_BATCH, eb.speedup_roofline, eb.speedup_roofline,
            PAIR_BATCH);
    fprintf(marks, "1\t%.4f\t%.2fx at batch 1\n", e8.speedup_free, e8.speedup_free);
    fclose(marks);
    /* ... and where regime (ii) is still above 2x */
    int last2 = 0;
    for (int b = 1; b <= BATCH_MAX; b++) {
        busy.batch = b;
        if (estimate(&busy, PAIR_ALPHA, PAIR_GAMMA).speedup_roofline > 2.0)
            last2 = b;
    }
    nb_value("ch10_pair_last_2x", "%d", last2);

    /* --- the heat maps --- */
    FILE *hm = nb_data_open("10-heatmap.tsv");
    fprintf(hm, "# LLaMA-3-70B target, LLaMA-3-8B draft, 4 x H100 SXM, bf16, context %d\n", PAIR_CONTEXT);
    fprintf(hm, "# block 0: regime (i) at batch 1 (c = %.4f); block 1: regime (ii) at batch %d\n", e8.c,
            PAIR_BATCH);
    busy.batch = PAIR_BATCH;
    for (int regime = 0; regime < 2; regime++) {
        fprintf(hm, "alpha\tgamma\tspeedup\n");
        for (int a = 50; a <= 95; a += 5) {
            for (int g = 1; g <= GAMMA_MAX; g++) {
                double sp = regime == 0 ? spec_walltime_speedup(a / 100.0, g, e8.c)
                                        : estimate(&busy, a / 100.0, g).speedup_roofline;
                fprintf(hm, "%.2f\t%d\t%.4f\n", a / 100.0, g, sp);
            }
            fprintf(hm, "\n");
        }
        fprintf(hm, "\n");
    }
    fclose(hm);
    double best_busy;
    int g_busy = spec_best_gamma_roofline(&busy, PAIR_ALPHA, GAMMA_MAX, &best_busy, err, sizeof err);
    nb_value("ch10_busy_best_gamma", "%d", g_busy);
    nb_value("ch10_busy_best_speedup", "%.2f", best_busy);

    /* --- speedup against batch, both regimes --- */
    FILE *cx = nb_data_open("10-crossover.tsv");
    fprintf(cx, "# LLaMA-3-70B + LLaMA-3-8B draft, 4 x H100 SXM, bf16, context %d, alpha %.1f, gamma %d\n",
            PAIR_CONTEXT, PAIR_ALPHA, PAIR_GAMMA);
    fprintf(cx, "batch\tspeedup_free\tspeedup_roofline\tverify_ratio\tc\n");
    for (int b = 1; b <= BATCH_MAX; b++) {
        busy.batch = b;
        spec_estimate e = estimate(&busy, PAIR_ALPHA, PAIR_GAMMA);
        fprintf(cx, "%d\t%.5f\t%.5f\t%.5f\t%.5f\n", b, e.speedup_free, e.speedup_roofline, e.verify_ratio, e.c);
    }
    fclose(cx);
    return 0;
}
