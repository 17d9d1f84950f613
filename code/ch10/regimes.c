/* Chapter 10: the capped geometric process and the two verification cost
 * regimes, for LLaMA-3-70B on 4 x H100 SXM (bf16) with a LLaMA-3-8B or
 * LLaMA-3.2-1B draft time-sliced on the target's GPUs (draft tp 4, its
 * weights and KV beside the target's).
 *
 * Every step this program times is first checked against the replica's
 * memory (spec_memory_fit): a configuration that does not fit stops the
 * program with the fit check's own sentence, and the sweeps stop at the
 * memory limit.
 *
 * Writes 10-heatmap.tsv (speedup over alpha x gamma in regime (i) at batch 1
 * and regime (ii) at a busy batch), 10-crossover.tsv (speedup against batch,
 * both regimes, 256- and 4096-token contexts, empty beyond memory),
 * 10-marks.tsv (labelled points), 10-ceilings.tsv (the memory limits) and
 * 10-distribution.tsv (P(N = k) for a few alphas), and the values the
 * chapter quotes. */
#include "notebook.h"
#include "specdec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { TP = 4, GAMMA_MAX = 10, SWEEP_MAX = 2048, UNBOUNDED = 1 << 20 };
/* The pair: a short-prompt service (256 tokens of context) at batch 256. */
enum { PAIR_CONTEXT = 256, PAIR_BATCH = 256, PAIR_GAMMA = 4, LONG_CONTEXT = 4096 };
#define PAIR_ALPHA 0.8

/* The largest batch of this setup that fits, drafting gamma tokens a round. */
static int memory_limit(const spec_setup *s, int gamma)
{
    spec_fit f;
    char err[512];
    if (spec_memory_fit(s, memory_policy_default(), gamma, &f, err, sizeof err) != 0) {
        fprintf(stderr, "regimes: %s\n", err);
        exit(1);
    }
    return f.max_batch;
}

/* One estimate, for a configuration that fits or not at all. */
static spec_estimate estimate(const spec_setup *s, double alpha, int gamma)
{
    spec_fit f;
    spec_estimate e;
    char err[512];
    if (spec_memory_fit(s, memory_policy_default(), gamma, &f, err, sizeof err) != 0 ||
        spec_estimate_compute(s, alpha, gamma, &e, err, sizeof err) != 0) {
        fprintf(stderr, "regimes: %s\n", err);
        exit(1);
    }
    if (!f.fits) {
        fit_check_describe(&f.target_gpu, s->batch, s->context + gamma + 1, err, sizeof err);
        fprintf(stderr, "regimes: batch %d does not fit: %s\n", s->batch, err);
        exit(1);
    }
    return e;
}

static spec_estimate at_batch(spec_setup s, int batch, double alpha, int gamma)
{
    s.batch = batch;
    return estimate(&s, alpha, gamma);
}

static int break_even(const spec_setup *s, double alpha, int gamma, int batch_max)
{
    char err[512];
    int b = spec_break_even_batch(s, alpha, gamma, batch_max, err, sizeof err);
    if (b < 0) {
        fprintf(stderr, "regimes: %s\n", err);
        exit(1);
    }
    return b;
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
    /* the same steps without the tensor-parallel collectives: how much of c is latency */
    spec_setup s8_bare = s8, s1_bare = s1;
    s8_bare.skip_comm = s1_bare.skip_comm = 1;
    spec_estimate e8b = estimate(&s8_bare, PAIR_ALPHA, PAIR_GAMMA);
    spec_estimate e1b = estimate(&s1_bare, PAIR_ALPHA, PAIR_GAMMA);
    nb_value("ch10_c8_nocomm", "%.3f", e8b.c);
    nb_value("ch10_c1_nocomm", "%.3f", e1b.c);
    nb_value("ch10_comm_share_target_b1_pct", "%.0f", 100 * (1 - e8b.t_target / e8.t_target));
    nb_value("ch10_comm_share_draft8_b1_pct", "%.0f", 100 * (1 - e8b.t_draft / e8.t_draft));
    nb_value("ch10_comm_share_draft1_b1_pct", "%.0f", 100 * (1 - e1b.t_draft / e1.t_draft));

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
    int pair_fit = memory_limit(&s8, PAIR_GAMMA);
    nb_value("ch10_pair_fit", "%d", pair_fit);
    spec_estimate eb = at_batch(s8, PAIR_BATCH, PAIR_ALPHA, PAIR_GAMMA);
    nb_value("ch10_pair_win", "%.2f", e8.speedup_free);
    nb_value("ch10_pair_win_roofline", "%.2f", e8.speedup_roofline);
    nb_value("ch10_pair_loss", "%.2f", eb.speedup_roofline);
    nb_value("ch10_pair_loss_free", "%.2f", eb.speedup_free);
    nb_value("ch10_pair_verify_ratio", "%.2f", eb.verify_ratio);
    nb_value("ch10_pair_c_busy", "%.3f", eb.c);
    nb_value("ch10_pair_t_target_ms", "%.1f", eb.t_target * 1e3);
    nb_value("ch10_pair_t_verify_ms", "%.1f", eb.t_verify * 1e3);
    int even = break_even(&s8, PAIR_ALPHA, PAIR_GAMMA, pair_fit);
    if (even == 0) {
        fprintf(stderr, "regimes: the pair no longer loses within memory (batch %d)\n", pair_fit);
        return 1;
    }
    nb_value("ch10_pair_break_even", "%d", even);
    nb_value("ch10_pair_fit_over_even", "%.0f", floor((double)pair_fit / even));
    /* where regime (ii) is still above 2x */
    int last2 = 0;
    for (int b = 1; b <= even; b++)
        if (at_batch(s8, b, PAIR_ALPHA, PAIR_GAMMA).speedup_roofline > 2.0)
            last2 = b;
    nb_value("ch10_pair_last_2x", "%d", last2);
    /* the speedup where memory ends, far past the crossing */
    spec_estimate efit = at_batch(s8, pair_fit, PAIR_ALPHA, PAIR_GAMMA);
    nb_value("ch10_pair_at_fit", "%.2f", efit.speedup_roofline);

    /* the same pair without the collectives (the pure roofline) */
    spec_estimate eb_bare = at_batch(s8_bare, PAIR_BATCH, PAIR_ALPHA, PAIR_GAMMA);
    int even_bare = break_even(&s8_bare, PAIR_ALPHA, PAIR_GAMMA, pair_fit);
    nb_value("ch10_bare_win", "%.2f", e8b.speedup_free);
    nb_value("ch10_bare_win_roofline", "%.2f", e8b.speedup_roofline);
    nb_value("ch10_bare_loss", "%.2f", eb_bare.speedup_roofline);
    nb_value("ch10_bare_loss_free", "%.2f", eb_bare.speedup_free);
    nb_value("ch10_bare_verify_ratio", "%.2f", eb_bare.verify_ratio);
    nb_value("ch10_bare_t_target_ms", "%.1f", eb_bare.t_target * 1e3);
    nb_value("ch10_bare_t_verify_ms", "%.1f", eb_bare.t_verify * 1e3);
    nb_value("ch10_bare_c_busy", "%.3f", eb_bare.c);
    if (even_bare > 0)
        nb_value("ch10_bare_break_even", "%d", even_bare);
    else
        nb_value("ch10_bare_break_even", "none within memory (batch %d)", pair_fit);
    nb_value("ch10_comm_share_target_busy_pct", "%.0f", 100 * (1 - eb_bare.t_target / eb.t_target));
    nb_value("ch10_comm_share_verify_busy_pct", "%.0f", 100 * (1 - eb_bare.t_verify / eb.t_verify));

    /* --- the same replica with 4096-token contexts: memory ends first --- */
    spec_setup longctx = s8;
    longctx.context = LONG_CONTEXT;
    int long_fit = memory_limit(&longctx, PAIR_GAMMA);
    nb_value("ch10_long_fit", "%d", long_fit);
    nb_value("ch10_long_kv_ratio", "%.0f", (LONG_CONTEXT + PAIR_GAMMA + 1.0) / (PAIR_CONTEXT + PAIR_GAMMA + 1.0));
    int long_even = break_even(&longctx, PAIR_ALPHA, PAIR_GAMMA, long_fit);
    if (long_even != 0) {
        fprintf(stderr, "regimes: 4096-token contexts now lose within memory, at batch %d\n", long_even);
        return 1;
    }
    spec_estimate elf = at_batch(longctx, long_fit, PAIR_ALPHA, PAIR_GAMMA);
    nb_value("ch10_long_at_fit", "%.2f", elf.speedup_roofline);
    nb_value("ch10_long_verify_ratio", "%.2f", elf.verify_ratio);
    /* where the step model alone would put the crossing, if the KV had room: a batch that
     * does not fit, quoted only as such */
    int long_even_nomem = break_even(&longctx, PAIR_ALPHA, PAIR_GAMMA, UNBOUNDED);
    nb_value("ch10_long_even_beyond_memory", "%d", long_even_nomem);
    /* the target alone, no draft resident: how many sequences the draft's rent costs */
    {
        resident_model rm = {&target, longctx.prec, TP};
        fit_check f;
        if (memory_fit(&h100, memory_policy_default(), &rm, 1, 0, 1, LONG_CONTEXT, &f, err, sizeof err) != 0) {
            fprintf(stderr, "regimes: %s\n", err);
            return 1;
        }
        nb_value("ch10_long_fit_target_only", "%d", f.max_batch);
    }

    FILE *marks = nb_data_open("10-marks.tsv");
    fprintf(marks, "batch\tspeedup\tlabel\tleft\n");
    fprintf(marks, "1\t%.4f\t%.2fx at batch 1\t0\n", e8.speedup_free, e8.speedup_free);
    fprintf(marks, "%d\t%.4f\tbreak-even batch %d\t0\n", even,
            at_batch(s8, even, PAIR_ALPHA, PAIR_GAMMA).speedup_roofline, even);
    fprintf(marks, "%d\t%.4f\t%.2fx at batch %d\t0\n", PAIR_BATCH, eb.speedup_roofline, eb.speedup_roofline,
            PAIR_BATCH);
    fprintf(marks, "%d\t%.4f\t4k contexts: %.2fx where memory ends\t1\n", long_fit, elf.speedup_roofline,
            elf.speedup_roofline);
    fclose(marks);
    FILE *ceil_f = nb_data_open("10-ceilings.tsv");
    fprintf(ceil_f, "# largest batch that fits: target and 8B draft on 4 x H100, KV of context + gamma + 1\n");
    fprintf(ceil_f, "context\tmax_batch\tlabel\n%d\t%d\tmemory limit, 256-token contexts (%d)\n", PAIR_CONTEXT,
            pair_fit, pair_fit);
    fprintf(ceil_f, "%d\t%d\tmemory limit, 4k contexts (%d)\n", LONG_CONTEXT, long_fit, long_fit);
    fclose(ceil_f);

    /* --- the heat maps (batch 256 fits for every gamma up to 10: checked in estimate) --- */
    FILE *hm = nb_data_open("10-heatmap.tsv");
    fprintf(hm, "# LLaMA-3-70B target, LLaMA-3-8B draft, 4 x H100 SXM, bf16, context %d\n", PAIR_CONTEXT);
    fprintf(hm, "# block 0: regime (i) at batch 1 (c = %.4f); block 1: regime (ii) at batch %d\n", e8.c,
            PAIR_BATCH);
    spec_setup busy = s8;
    busy.batch = PAIR_BATCH;
    int busy_cells = 0, busy_losses = 0, free_losses = 0;
    for (int regime = 0; regime < 2; regime++) {
        fprintf(hm, "alpha\tgamma\tspeedup\n");
        for (int a = 50; a <= 95; a += 5) {
            for (int g = 1; g <= GAMMA_MAX; g++) {
                double sp = regime == 0 ? spec_walltime_speedup(a / 100.0, g, e8.c)
                                        : estimate(&busy, a / 100.0, g).speedup_roofline;
                if (regime == 1) {
                    busy_cells++;
                    busy_losses += sp < 1.0;
                } else {
                    free_losses += sp < 1.0;
                }
                fprintf(hm, "%.2f\t%d\t%.4f\n", a / 100.0, g, sp);
            }
            fprintf(hm, "\n");
        }
        fprintf(hm, "\n");
    }
    fclose(hm);
    nb_value("ch10_busy_losses", "%d", busy_losses);
    nb_value("ch10_free_wins", "%d", busy_cells - free_losses);
    nb_value("ch10_busy_cells", "%d", busy_cells);
    double best_busy;
    int g_busy = spec_best_gamma_roofline(&busy, PAIR_ALPHA, GAMMA_MAX, &best_busy, err, sizeof err);
    if (g_busy < 0) {
        fprintf(stderr, "regimes: %s\n", err);
        return 1;
    }
    nb_value("ch10_busy_best_gamma", "%d", g_busy);
    nb_value("ch10_busy_best_speedup", "%.2f", best_busy);

    /* --- speedup against batch, both regimes, both context lengths; empty past memory --- */
    FILE *cx = nb_data_open("10-crossover.tsv");
    fprintf(cx, "# LLaMA-3-70B + LLaMA-3-8B draft (time-sliced), 4 x H100 SXM, bf16, alpha %.1f, gamma %d;"
                " largest batch that fits: %d at %d tokens, %d at %d tokens\n",
            PAIR_ALPHA, PAIR_GAMMA, pair_fit, PAIR_CONTEXT, long_fit, LONG_CONTEXT);
    fprintf(cx, "batch\tfits\tspeedup_free\tspeedup_roofline\tverify_ratio\tc\tspeedup_roofline_4k\n");
    for (int b = 1; b <= SWEEP_MAX; b++) {
        if (b > pair_fit) {
            fprintf(cx, "%d\t0\tNaN\tNaN\tNaN\tNaN\tNaN\n", b);
            continue;
        }
        spec_estimate e = at_batch(s8, b, PAIR_ALPHA, PAIR_GAMMA);
        fprintf(cx, "%d\t1\t%.5f\t%.5f\t%.5f\t%.5f\t", b, e.speedup_free, e.speedup_roofline, e.verify_ratio,
                e.c);
        if (b <= long_fit)
            fprintf(cx, "%.5f\n", at_batch(longctx, b, PAIR_ALPHA, PAIR_GAMMA).speedup_roofline);
        else
            fprintf(cx, "NaN\n");
    }
    fclose(cx);
    return 0;
}
