/* Chapter 11: speculative decoding against serving batch for LLaMA-3-70B on
 * H100 SXM (bf16) at TP 4 and TP 8, with a LLaMA-3.2-1B or LLaMA-3-8B draft
 * time-sliced on the target's GPUs, gamma 4, 1024-token contexts.
 *
 * Every step is timed only for a batch that fits: the target's and the
 * draft's weights and the KV of both for context + gamma + 1 tokens a
 * sequence (spec_memory_fit).  The break-even search stops at that limit.
 *
 * Writes 11-batch.tsv (one block per TP: speedup against batch for each draft
 * and alpha, empty past that draft's memory limit), 11-crossings.tsv
 * (break-even batches), 11-limits.tsv (the memory limits) and the values the
 * chapter quotes. */
#include "memory.h"
#include "notebook.h"
#include "specdec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { GAMMA = 4, CONTEXT = 1024, SWEEP_MAX = 2048, NTP = 2, NDRAFT = 2, NALPHA = 4 };

static void die(const char *err)
{
    fprintf(stderr, "fleet: %s\n", err);
    exit(1);
}

static int memory_limit(const spec_setup *s)
{
    spec_fit f;
    char err[512];
    if (spec_memory_fit(s, memory_policy_default(), GAMMA, &f, err, sizeof err) != 0)
        die(err);
    return f.max_batch;
}

/* Regime (ii) speedup at the setup's batch, which must fit. */
static double speedup(const spec_setup *s, double alpha)
{
    spec_estimate e;
    char err[512];
    if (s->batch > memory_limit(s)) {
        snprintf(err, sizeof err, "batch %d does not fit (the limit is %d)", s->batch, memory_limit(s));
        die(err);
    }
    if (spec_estimate_compute(s, alpha, GAMMA, &e, err, sizeof err) != 0)
        die(err);
    return e.speedup_roofline;
}

static double speedup_at(spec_setup s, int batch, double alpha)
{
    s.batch = batch;
    return speedup(&s, alpha);
}

int main(void)
{
    model_spec target = model_builtin("llama3-70b");
    model_spec drafts[NDRAFT] = {model_builtin("llama3.2-1b"), model_builtin("llama3-8b")};
    const char *draft_tag[NDRAFT] = {"1b", "8b"};
    gpu_spec h100 = gpu_builtin("h100");
    precision bf16 = precision_uniform(DT_BF16);
    const int tps[NTP] = {4, 8};
    const double alphas[NALPHA] = {0.6, 0.7, 0.8, 0.9};
    const char *alpha_tag[NALPHA] = {"06", "07", "08", "09"};
    char err[512], name[64];
    int cross_min = 0, cross_max = 0, beyond = 0;

    FILE *f = nb_data_open("11-batch.tsv");
    FILE *cross = nb_data_open("11-crossings.tsv");
    FILE *lim = nb_data_open("11-limits.tsv");
    fprintf(cross, "tp\tdraft\talpha\tbatch\tspeedup\n");
    fprintf(lim, "tp\tdraft\tmax_batch\n");
    for (int t = 0; t < NTP; t++) {
        spec_setup s[NDRAFT];
        int fit[NDRAFT];
        for (int d = 0; d < NDRAFT; d++) {
            s[d] = spec_setup_default(&target, &drafts[d], &h100, tps[t], 1, CONTEXT);
            fit[d] = memory_limit(&s[d]);
            snprintf(name, sizeof name, "ch11_fit_tp%d_%s", tps[t], draft_tag[d]);
            nb_value(name, "%d", fit[d]);
            fprintf(lim, "%d\t%s\t%d\n", tps[t], draft_tag[d], fit[d]);
        }
        /* the target alone, for the room the draft takes */
        resident_model rm = {&target, bf16, tps[t]};
        fit_check alone;
        if (memory_fit(&h100, memory_policy_default(), &rm, 1, 0, 1, CONTEXT + GAMMA + 1, &alone, err,
                       sizeof err) != 0)
            die(err);
        snprintf(name, sizeof name, "ch11_fit_tp%d_alone", tps[t]);
        nb_value(name, "%d", alone.max_batch);

        fprintf(f, "# LLaMA-3-70B on %d x H100 SXM, bf16, context %d, gamma %d, draft time-sliced (tp %d);"
                   " largest batch that fits: %d with the 1B draft, %d with the 8B\n",
                tps[t], CONTEXT, GAMMA, tps[t], fit[0], fit[1]);
        fprintf(f, "batch\tfits_1b\tfits_8b");
        for (int d = 0; d < NDRAFT; d++)
            for (int a = 0; a < NALPHA; a++)
                fprintf(f, "\t%s_a%s", draft_tag[d], alpha_tag[a]);
        fprintf(f, "\n");
        for (int b = 1; b <= SWEEP_MAX; b++) {
            fprintf(f, "%d\t%d\t%d", b, b <= fit[0], b <= fit[1]);
            for (int d = 0; d < NDRAFT; d++)
                for (int a = 0; a < NALPHA; a++) {
                    if (b <= fit[d])
                        fprintf(f, "\t%.5f", speedup_at(s[d], b, alphas[a]));
                    else
                        fprintf(f, "\tNaN");
                }
            fprintf(f, "\n");
        }
        fprintf(f, "\n\n");

        for (int d = 0; d < NDRAFT; d++) {
            for (int a = 0; a < NALPHA; a++) {
                int be = spec_break_even_batch(&s[d], alphas[a], GAMMA, fit[d], err, sizeof err);
                if (be < 0)
                    die(err);
                snprintf(name, sizeof name, "ch11_be_tp%d_%s_%s", tps[t], draft_tag[d], alpha_tag[a]);
                if (be > 0) {
                    nb_value(name, "%d", be);
                    fprintf(cross, "%d\t%s\t%.1f\t%d\t%.4f\n", tps[t], draft_tag[d], alphas[a], be,
                            speedup_at(s[d], be, alphas[a]));
                    cross_min = cross_min == 0 || be < cross_min ? be : cross_min;
                    cross_max = be > cross_max ? be : cross_max;
                } else {
                    /* the prose names the one configuration that never loses within memory */
                    if (tps[t] != 4 || d != 0 || a != NALPHA - 1)
                        die("a configuration other than the 1B draft at alpha 0.9 on 4 GPUs no longer "
                            "loses within memory: update the chapter");
                    nb_value(name, "none; %.2f× at the limit", speedup_at(s[d], fit[d], alphas[a]));
                    nb_value("ch11_atfit_tp4_1b_09", "%.2f", speedup_at(s[d], fit[d], alphas[a]));
                    beyond++;
                }
            }
            /* past the crossing, at the largest batch that fits */
            snprintf(name, sizeof name, "ch11_atfit_tp%d_%s_06", tps[t], draft_tag[d]);
            nb_value(name, "%.2f", speedup_at(s[d], fit[d], 0.6));
            /* batch-1 speedups, for the prose */
            snprintf(name, sizeof name, "ch11_b1_tp%d_%s_08", tps[t], draft_tag[d]);
            nb_value(name, "%.2f", speedup_at(s[d], 1, 0.8));
            snprintf(name, sizeof name, "ch11_b1_tp%d_%s_06", tps[t], draft_tag[d]);
            nb_value(name, "%.2f", speedup_at(s[d], 1, 0.6));
        }
        /* the tensor-parallel degree with and without the collectives: 8B draft, alpha 0.8 */
        spec_setup bare = s[1];
        bare.skip_comm = 1;
        int be_bare = spec_break_even_batch(&bare, 0.8, GAMMA, fit[1], err, sizeof err);
        if (be_bare <= 0)
            die("the 8B draft at alpha 0.8 was expected to lose within memory without communication");
        snprintf(name, sizeof name, "ch11_be_tp%d_8b_08_nocomm", tps[t]);
        nb_value(name, "%d", be_bare);
    }
    fclose(f);
    fclose(cross);
    fclose(lim);
    nb_value("ch11_cross_min", "%d", cross_min);
    nb_value("ch11_cross_max", "%d", cross_max);
    if (beyond != 1)
        die("exactly one configuration was expected never to lose within memory: update the chapter");

    /* Is the plain step compute-bound where memory ends?  At TP 4 the 1B draft leaves
     * room for the most sequences; the plain step there, and the first batch at which
     * it would turn compute-bound (bisection on the step model's two sums). */
    {
        spec_setup s1 = spec_setup_default(&target, &drafts[0], &h100, 4, 1, CONTEXT);
        int top = memory_limit(&s1);
        step_shape sh = decode_shape(top, CONTEXT, 4, bf16);
        step_cost c;
        if (decoder_step_cost(&target, &h100, &sh, &c, err, sizeof err) != 0)
            die(err);
        if (c.bound != BOUND_MEMORY)
            die("the plain step at the memory limit was expected to be memory-bound");
        nb_value("ch11_plain_top_batch", "%d", top);
        nb_value("ch11_plain_top_mem_ms", "%.1f", c.time_memory * 1e3);
        nb_value("ch11_plain_top_compute_ms", "%.1f", c.time_compute * 1e3);
        int lo = top, hi = 1 << 20; /* memory-bound at lo, compute-bound at hi */
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            sh.batch = mid;
            if (decoder_step_cost(&target, &h100, &sh, &c, err, sizeof err) != 0)
                die(err);
            if (c.bound == BOUND_COMPUTE)
                hi = mid;
            else
                lo = mid;
        }
        nb_value("ch11_plain_compute_bound_batch", "%d", hi);
    }

    /* The silent regression used in the monitoring section: TP 8, 8B draft,
     * batch 128, 4096-token contexts; alpha 0.8 wins, 0.6 loses. */
    spec_setup reg = spec_setup_default(&target, &drafts[1], &h100, 8, 128, 4096);
    nb_value("ch11_reg_fit", "%d", memory_limit(&reg));
    nb_value("ch11_reg_speedup_08", "%.2f", speedup(&reg, 0.8));
    nb_value("ch11_reg_speedup_06", "%.2f", speedup(&reg, 0.6));
    double a_even = spec_break_even_alpha(&reg, GAMMA, err, sizeof err);
    if (a_even < 0 || isnan(a_even))
        die(a_even < 0 ? err : "no acceptance rate breaks even at the regression's batch");
    nb_value("ch11_reg_alpha_even", "%.2f", a_even);
    return 0;
}
