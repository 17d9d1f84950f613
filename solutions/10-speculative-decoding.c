/* Chapter 10 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "10-speculative-decoding.h"

#include "notebook.h"
#include "roofline.h"
#include "specdec.h"
#include "specs.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>

static int valid(double alpha, int gamma)
{
    return alpha >= 0.0 && alpha <= 1.0 && gamma >= 1;
}

double ex10_expected_tokens(double alpha, int gamma)
{
    return valid(alpha, gamma) ? spec_expected_tokens(alpha, gamma) : NAN;
}

double ex10_prob_tokens(double alpha, int gamma, int k)
{
    return valid(alpha, gamma) ? spec_tokens_pmf(alpha, gamma, k) : NAN;
}

double ex10_tokens_stddev(double alpha, int gamma)
{
    return valid(alpha, gamma) ? sqrt(spec_tokens_variance(alpha, gamma)) : NAN;
}

double ex10_speedup(double alpha, int gamma, double c)
{
    return valid(alpha, gamma) && c >= 0.0 ? spec_walltime_speedup(alpha, gamma, c) : NAN;
}

int ex10_best_gamma(double alpha, double c, int gamma_max)
{
    if (!valid(alpha, 1) || !(c >= 0.0) || gamma_max < 1)
        return -1;
    return spec_best_gamma(alpha, c, gamma_max, NULL);
}

double ex10_alpha_for_speedup(double target, int gamma, double c)
{
    if (gamma < 1 || !(c >= 0.0) || !(target > 0.0))
        return NAN;
    return spec_alpha_for_speedup(target, gamma, c);
}

double ex10_operations_factor(double alpha, int gamma, double c_hat)
{
    return valid(alpha, gamma) && c_hat >= 0.0 ? spec_operations_factor(alpha, gamma, c_hat) : NAN;
}

double ex10_verify_ratio(const char *model_key, const char *gpu_key, int tp, int batch, int context, int gamma)
{
    gpu_table gt;
    model_table mt;
    char err[256];
    if (!model_key || !gpu_key || gamma < 1 || gpu_table_builtin(&gt, err, sizeof err) != 0)
        return NAN;
    if (model_table_builtin(&mt, err, sizeof err) != 0) {
        gpu_table_free(&gt);
        return NAN;
    }
    double ratio = NAN;
    const gpu_spec *g = gpu_find(&gt, gpu_key);
    const model_spec *m = model_find(&mt, model_key);
    if (g && m) {
        /* nothing is timed for a batch that does not fit */
        spec_setup s = spec_setup_default(m, NULL, g, tp, batch, context);
        spec_fit f;
        spec_estimate e;
        if (spec_memory_fit(&s, memory_policy_default(), gamma, &f, err, sizeof err) == 0 && f.fits &&
            spec_estimate_compute(&s, 0.5, gamma, &e, err, sizeof err) == 0)
            ratio = e.verify_ratio;
    }
    gpu_table_free(&gt);
    model_table_free(&mt);
    return ratio;
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    /* 1 */
    nb_value("ch10_ex1_e", "%.3f", ex10_expected_tokens(0.7, 3));
    nb_value("ch10_ex1_nobonus", "%.3f", ex10_expected_tokens(0.7, 3) - 1.0);
    nb_value("ch10_ex1_speed", "%.2f", ex10_speedup(0.7, 3, 0.0));
    nb_value("ch10_ex1_speed_nobonus", "%.2f", ex10_speedup(0.7, 3, 0.0) - 1.0);
    /* 2 */
    nb_value("ch10_ex2_e", "%.2f", ex10_expected_tokens(0.9, 8));
    nb_value("ch10_ex2_p1", "%.2f", ex10_prob_tokens(0.9, 8, 1));
    nb_value("ch10_ex2_pall", "%.3f", ex10_prob_tokens(0.9, 8, 9));
    nb_value("ch10_ex2_sd", "%.2f", ex10_tokens_stddev(0.9, 8));
    /* P(N <= 2): the user waits a whole round for at most two tokens */
    nb_value("ch10_ex2_ple2", "%.2f", ex10_prob_tokens(0.9, 8, 1) + ex10_prob_tokens(0.9, 8, 2));
    /* 3 */
    nb_value("ch10_ex3_e4", "%.4f", ex10_expected_tokens(0.75, 4));
    nb_value("ch10_ex3_cost4", "%.1f", 1 + 4 * 0.1);
    nb_value("ch10_ex3_s4", "%.3f", ex10_speedup(0.75, 4, 0.1));
    int g = ex10_best_gamma(0.75, 0.1, 10);
    nb_value("ch10_ex3_best", "%d", g);
    nb_value("ch10_ex3_best_s", "%.3f", ex10_speedup(0.75, g, 0.1));
    nb_value("ch10_ex3_s10", "%.3f", ex10_speedup(0.75, 10, 0.1));
    /* 4: E[N] must reach 2 x (1 + gamma c) */
    nb_value("ch10_ex4_need_e4", "%.1f", 2.0 * (1 + 4 * 0.1));
    nb_value("ch10_ex4_need_e2", "%.1f", 2.0 * (1 + 2 * 0.1));
    nb_value("ch10_ex4_cost2", "%.1f", 1 + 2 * 0.1);
    nb_value("ch10_ex4_alpha", "%.3f", ex10_alpha_for_speedup(2.0, 4, 0.1));
    nb_value("ch10_ex4_alpha_g2", "%.3f", ex10_alpha_for_speedup(2.0, 2, 0.1));
    nb_value("ch10_ex4_max_g2", "%.3f", ex10_speedup(1.0, 2, 0.1));
    /* 5 */
    nb_value("ch10_ex5_e", "%.3f", ex10_expected_tokens(0.8, 5));
    nb_value("ch10_ex5_cost", "%.1f", 1 + 5 * 0.1);
    nb_value("ch10_ex5_evals", "%.1f", 5 * 0.1 + 5 + 1);
    nb_value("ch10_ex5_ops", "%.2f", ex10_operations_factor(0.8, 5, 0.1));
    nb_value("ch10_ex5_ops0", "%.2f", ex10_operations_factor(0.8, 5, 0.0));
    nb_value("ch10_ex5_speed", "%.2f", ex10_speedup(0.8, 5, 0.1));
    /* 6 */
    const int batches[] = {1, 64, 256};
    for (int i = 0; i < 3; i++) {
        char n[64];
        snprintf(n, sizeof n, "ch10_ex6_ratio_%d", batches[i]);
        nb_value(n, "%.2f", ex10_verify_ratio("llama3-70b", "h100", 4, batches[i], 512, 4));
    }
    /* (b): the ridge of bf16 on an H100 in FLOP per byte, and the batch at which
     * five tokens per sequence reach it (2 FLOP per 2-byte weight per token) */
    gpu_spec h100 = gpu_builtin("h100");
    double ridge = ridge_intensity(gpu_peak_flops(&h100, DT_BF16), h100.mem_bw);
    nb_value("ch10_ex6_ridge", "%.0f", ridge);
    nb_value("ch10_ex6_ridge_batch_verify", "%.0f", floor(ridge_batch(&h100, precision_uniform(DT_BF16)) / 5));
    /* (c) at a batch both context lengths fit, (d) the limit at 4096 tokens */
    enum { MID_BATCH = 96 };
    nb_value("ch10_ex6_mid_batch", "%d", MID_BATCH);
    nb_value("ch10_ex6_mid_512", "%.2f", ex10_verify_ratio("llama3-70b", "h100", 4, MID_BATCH, 512, 4));
    nb_value("ch10_ex6_mid_4096", "%.2f", ex10_verify_ratio("llama3-70b", "h100", 4, MID_BATCH, 4096, 4));
    {
        model_spec t = model_builtin("llama3-70b");
        spec_setup s = spec_setup_default(&t, NULL, &h100, 4, 256, 4096);
        spec_fit f;
        char err[256];
        if (spec_memory_fit(&s, memory_policy_default(), 4, &f, err, sizeof err) != 0 || f.fits) {
            fprintf(stderr, "solution 10.6: batch 256 of 4096 tokens was expected not to fit: %s\n", err);
            return 1;
        }
        nb_value("ch10_ex6_fit_4096", "%d", f.max_batch);
        nb_value("ch10_ex6_kv_need_gb", "%.1f", f.target_gpu.kv_needed / 1e9);
        nb_value("ch10_ex6_kv_budget_gb", "%.1f", f.target_gpu.kv_budget / 1e9);
    }
    return 0;
}
#endif
