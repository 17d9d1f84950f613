/* Chapter 11: speculative decoding against serving batch for LLaMA-3-70B on
 * H100 SXM (bf16) at TP 4 and TP 8, with a LLaMA-3.2-1B or LLaMA-3-8B draft
 * time-sliced on the target's GPUs, gamma 4, 1024-token contexts.
 *
 * Writes 11-batch.tsv (one block per TP: speedup against batch for each draft
 * and alpha), 11-crossings.tsv (break-even batches) and the values the
 * chapter quotes (break-even batch per TP, draft and alpha; the largest
 * batch whose KV cache fits). */
#include "memory.h"
#include "notebook.h"
#include "specdec.h"

#include <stdio.h>
#include <stdlib.h>

enum { GAMMA = 4, CONTEXT = 1024, BATCH_MAX = 1024 };

static double speedup(const spec_setup *s, double alpha)
{
    spec_estimate e;
    char err[512];
    if (spec_estimate_compute(s, alpha, GAMMA, &e, err, sizeof err) != 0) {
        fprintf(stderr, "fleet: %s\n", err);
        exit(1);
    }
    return e.speedup_roofline;
}

int main(void)
{
    model_spec target = model_builtin("llama3-70b");
    model_spec drafts[2] = {model_builtin("llama3.2-1b"), model_builtin("llama3-8b")};
    const char *draft_tag[2] = {"1b", "8b"};
    gpu_spec h100 = gpu_builtin("h100");
    const int tps[2] = {4, 8};
    const double alphas[4] = {0.6, 0.7, 0.8, 0.9};
    const char *alpha_tag[4] = {"06", "07", "08", "09"};
    char err[512];

    FILE *f = nb_data_open("11-batch.tsv");
    FILE *cross = nb_data_open("11-crossings.tsv");
    fprintf(cross, "tp\tdraft\talpha\tbatch\tspeedup\n");
    for (int t = 0; t < 2; t++) {
        replica_memory r;
        if (replica_memory_plan(&target, &h100, precision_uniform(DT_BF16), tps[t], memory_policy_default(), &r,
                                err, sizeof err) != 0) {
            fprintf(stderr, "fleet: %s\n", err);
            return 1;
        }
        int fit = max_batch_for_memory(&r, CONTEXT);
        char name[64];
        snprintf(name, sizeof name, "ch11_fit_tp%d", tps[t]);
        nb_value(name, "%d", fit);

        fprintf(f, "# LLaMA-3-70B on %d x H100 SXM, bf16, context %d, gamma %d, draft time-sliced (tp %d);"
                   " largest batch that fits: %d\n",
                tps[t], CONTEXT, GAMMA, tps[t], fit);
        fprintf(f, "batch\tfits");
        for (int d = 0; d < 2; d++)
            for (int a = 0; a < 4; a++)
                fprintf(f, "\t%s_a%s", draft_tag[d], alpha_tag[a]);
        fprintf(f, "\n");
        for (int b = 1; b <= BATCH_MAX; b++) {
            fprintf(f, "%d\t%d", b, b <= fit);
            for (int d = 0; d < 2; d++) {
                spec_setup s = spec_setup_default(&target, &drafts[d], &h100, tps[t], b, CONTEXT);
                for (int a = 0; a < 4; a++)
                    fprintf(f, "\t%.5f", speedup(&s, alphas[a]));
            }
            fprintf(f, "\n");
        }
        fprintf(f, "\n\n");

        for (int d = 0; d < 2; d++) {
            spec_setup s = spec_setup_default(&target, &drafts[d], &h100, tps[t], 1, CONTEXT);
            for (int a = 0; a < 4; a++) {
                int be = spec_break_even_batch(&s, alphas[a], GAMMA, BATCH_MAX, err, sizeof err);
                if (be < 0) {
                    fprintf(stderr, "fleet: %s\n", err);
                    return 1;
                }
                snprintf(name, sizeof name, "ch11_be_tp%d_%s_%s", tps[t], draft_tag[d], alpha_tag[a]);
                if (be > 0)
                    nb_value(name, "%d", be);
                else
                    nb_value(name, "none to %d", BATCH_MAX);
                if (be > 0) {
                    s.batch = be;
                    fprintf(cross, "%d\t%s\t%.1f\t%d\t%.4f\n", tps[t], draft_tag[d], alphas[a], be,
                            speedup(&s, alphas[a]));
                    s.batch = 1;
                }
            }
            /* the floor far past the crossing, at the largest batch computed */
            s.batch = BATCH_MAX;
            snprintf(name, sizeof name, "ch11_floor_tp%d_%s_06", tps[t], draft_tag[d]);
            nb_value(name, "%.2f", speedup(&s, 0.6));
            s.batch = 1;
            /* batch-1 speedups, for the prose */
            snprintf(name, sizeof name, "ch11_b1_tp%d_%s_08", tps[t], draft_tag[d]);
            nb_value(name, "%.2f", speedup(&s, 0.8));
            snprintf(name, sizeof name, "ch11_b1_tp%d_%s_06", tps[t], draft_tag[d]);
            nb_value(name, "%.2f", speedup(&s, 0.6));
        }
    }
    fclose(f);
    fclose(cross);

    /* The silent regression used in the monitoring section: TP 8, 8B draft,
     * batch 128, 4096-token contexts; alpha 0.8 wins, 0.6 loses. */
    spec_setup reg = spec_setup_default(&target, &drafts[1], &h100, 8, 128, 4096);
    nb_value("ch11_reg_speedup_08", "%.2f", speedup(&reg, 0.8));
    nb_value("ch11_reg_speedup_06", "%.2f", speedup(&reg, 0.6));
    double a_even = spec_break_even_alpha(&reg, GAMMA, err, sizeof err);
    if (a_even < 0) {
        fprintf(stderr, "fleet: %s\n", err);
        return 1;
    }
    nb_value("ch11_reg_alpha_even", "%.2f", a_even);
    return 0;
}
