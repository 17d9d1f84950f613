/* Chapter 11 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "11-speculative-fleet.h"

#include "memory.h"
#include "notebook.h"
#include "rollout.h"
#include "specdec.h"
#include "specmon.h"
#include "specs.h"

#include <math.h>
#include <stdio.h>

/* The built-in tables and three rows from them; 0, or -1 for an unknown key. */
typedef struct {
    gpu_table gt;
    model_table mt;
    const model_spec *target, *draft;
    const gpu_spec *gpu;
} lookup;

static int lookup_open(lookup *l, const char *target, const char *draft, const char *gpu)
{
    char err[256];
    if (gpu_table_builtin(&l->gt, err, sizeof err) != 0)
        return -1;
    if (model_table_builtin(&l->mt, err, sizeof err) != 0) {
        gpu_table_free(&l->gt);
        return -1;
    }
    l->target = target ? model_find(&l->mt, target) : NULL;
    l->draft = draft ? model_find(&l->mt, draft) : NULL;
    l->gpu = gpu ? gpu_find(&l->gt, gpu) : NULL;
    return 0;
}

static void lookup_close(lookup *l)
{
    gpu_table_free(&l->gt);
    model_table_free(&l->mt);
}

/* The largest batch the setup holds (draft time-sliced on the target's GPUs); -1 on bad input. */
static int setup_limit(const spec_setup *s, int gamma)
{
    spec_fit f;
    char err[256];
    return spec_memory_fit(s, memory_policy_default(), gamma, &f, err, sizeof err) == 0 ? f.max_batch : -1;
}

int ex11_max_batch(const char *target, const char *draft, const char *gpu, int tp, int context, int gamma)
{
    lookup l;
    if (gamma < 0 || context < 1 || lookup_open(&l, target, draft, gpu) != 0)
        return -1;
    int out = -1;
    if (l.target && l.draft && l.gpu) {
        spec_setup s = spec_setup_default(l.target, l.draft, l.gpu, tp, 1, context);
        out = setup_limit(&s, gamma);
    }
    lookup_close(&l);
    return out;
}

double ex11_speedup_at_batch(const char *target, const char *draft, const char *gpu, int tp, int batch,
                             int context, double alpha, int gamma)
{
    lookup l;
    if (gamma < 1 || lookup_open(&l, target, draft, gpu) != 0)
        return NAN;
    double out = NAN;
    if (l.target && l.draft && l.gpu) {
        spec_setup s = spec_setup_default(l.target, l.draft, l.gpu, tp, batch, context);
        spec_estimate e;
        char err[256];
        int limit = setup_limit(&s, gamma);
        /* nothing is timed for a batch that does not fit */
        if (batch >= 1 && batch <= limit && spec_estimate_compute(&s, alpha, gamma, &e, err, sizeof err) == 0)
            out = e.speedup_roofline;
    }
    lookup_close(&l);
    return out;
}

int ex11_break_even_batch(const char *target, const char *draft, const char *gpu, int tp, int context,
                          double alpha, int gamma, int batch_max)
{
    lookup l;
    if (gamma < 1 || lookup_open(&l, target, draft, gpu) != 0)
        return -1;
    int out = -1;
    if (l.target && l.draft && l.gpu) {
        spec_setup s = spec_setup_default(l.target, l.draft, l.gpu, tp, 1, context);
        char err[256];
        int limit = setup_limit(&s, gamma);
        if (limit >= 0)
            out = spec_break_even_batch(&s, alpha, gamma, batch_max < limit ? batch_max : limit, err, sizeof err);
    }
    lookup_close(&l);
    return out;
}

double ex11_draft_memory_per_gpu(const char *draft, int tp, int batch, int context)
{
    lookup l;
    if (tp < 1 || batch < 1 || context < 1 || lookup_open(&l, NULL, draft, NULL) != 0)
        return NAN;
    double out = NAN;
    if (l.draft)
        out = weight_bytes_per_gpu(l.draft, DT_BF16, tp) +
              kv_bytes_per_token_per_gpu(l.draft, DT_BF16, tp) * (double)batch * context;
    lookup_close(&l);
    return out;
}

double ex11_cusum_threshold(double arl0)
{
    return arl0 > 1.0 ? cusum_threshold_for_arl0(arl0) : NAN;
}

double ex11_cusum_llr(double alpha0, double alpha1, int gamma, int accepted)
{
    cusum_design d;
    if (cusum_design_make(alpha0, alpha1, gamma, 2.0, &d) != 0 || accepted < 0 || accepted > gamma)
        return NAN;
    return cusum_llr(&d, accepted);
}

double ex11_cusum_delay_bound(double alpha0, double alpha1, int gamma, double arl0)
{
    cusum_design d;
    if (cusum_design_make(alpha0, alpha1, gamma, arl0, &d) != 0)
        return NAN;
    return cusum_delay_bound(&d, alpha1);
}

double ex11_alpha_estimate(long accepted, long rejections)
{
    return spec_alpha_mle(accepted, rejections);
}

int ex11_rollout_next(int on, double predicted_speedup, long rounds)
{
    if ((on != 0 && on != 1) || isnan(predicted_speedup) || rounds < 0)
        return -1;
    rollout_policy p = rollout_policy_default();
    return rollout_next_state(&p, on, predicted_speedup, rounds);
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    /* 1: the crossing, searched within memory; gamma 2 does not lose before memory ends */
    const char *T = "llama3-70b", *D = "llama3.2-1b", *G = "h100";
    nb_value("ch11_ex1_s1", "%.2f", ex11_speedup_at_batch(T, D, G, 4, 1, 2048, 0.7, 4));
    nb_value("ch11_ex1_s128", "%.2f", ex11_speedup_at_batch(T, D, G, 4, 128, 2048, 0.7, 4));
    int fit4 = ex11_max_batch(T, D, G, 4, 2048, 4), fit2 = ex11_max_batch(T, D, G, 4, 2048, 2);
    int be4 = ex11_break_even_batch(T, D, G, 4, 2048, 0.7, 4, fit4);
    int be2 = ex11_break_even_batch(T, D, G, 4, 2048, 0.7, 2, fit2);
    if (fit4 < 1 || be4 < 1 || be2 != 0) {
        fprintf(stderr, "solution 11.1: expected a crossing within memory at gamma 4 and none at gamma 2 "
                        "(limit %d, crossings %d and %d)\n", fit4, be4, be2);
        return 1;
    }
    nb_value("ch11_ex1_fit", "%d", fit4);
    nb_value("ch11_ex1_be", "%d", be4);
    nb_value("ch11_ex1_fit_g2", "%d", fit2);
    nb_value("ch11_ex1_sfit_g2", "%.2f", ex11_speedup_at_batch(T, D, G, 4, fit2, 2048, 0.7, 2));
    nb_value("ch11_ex1_sfit_g4", "%.2f", ex11_speedup_at_batch(T, D, G, 4, fit4, 2048, 0.7, 4));
    {
        model_spec t = model_builtin("llama3-70b");
        gpu_spec h100 = gpu_builtin("h100");
        resident_model rm = {&t, precision_uniform(DT_BF16), 4};
        fit_check f;
        char err[256];
        if (memory_fit(&h100, memory_policy_default(), &rm, 1, 0, 1, 2048 + 4 + 1, &f, err, sizeof err) != 0) {
            fprintf(stderr, "solution 11.1: %s\n", err);
            return 1;
        }
        nb_value("ch11_ex1_fit_alone", "%d", f.max_batch);
    }
    /* 2 */
    nb_value("ch11_ex2_mem_1b_gb", "%.2f", ex11_draft_memory_per_gpu("llama3.2-1b", 4, 128, 2048) / 1e9);
    nb_value("ch11_ex2_mem_8b_gb", "%.2f", ex11_draft_memory_per_gpu("llama3-8b", 4, 128, 2048) / 1e9);
    {
        model_spec t = model_builtin("llama3-70b");
        nb_value("ch11_ex2_target_kv_seq_mb", "%.0f",
                 kv_bytes_per_token_per_gpu(&t, DT_BF16, 4) * 2048 / 1e6);
        nb_value("ch11_ex2_seqs_lost_8b", "%.0f",
                 ex11_draft_memory_per_gpu("llama3-8b", 4, 128, 2048) /
                     (kv_bytes_per_token_per_gpu(&t, DT_BF16, 4) * 2048));
    }
    /* 3 */
    nb_value("ch11_ex3_h", "%.2f", ex11_cusum_threshold(1e6));
    nb_value("ch11_ex3_h9", "%.2f", ex11_cusum_threshold(1e9));
    /* 4 */
    nb_value("ch11_ex4_llr0", "%.3f", ex11_cusum_llr(0.8, 0.6, 4, 0));
    nb_value("ch11_ex4_llr1", "%.3f", ex11_cusum_llr(0.8, 0.6, 4, 1));
    nb_value("ch11_ex4_llr3", "%.3f", ex11_cusum_llr(0.8, 0.6, 4, 3));
    nb_value("ch11_ex4_llr4", "%.3f", ex11_cusum_llr(0.8, 0.6, 4, 4));
    /* 5 */
    nb_value("ch11_ex5_delay_6", "%.0f", ex11_cusum_delay_bound(0.8, 0.6, 4, 1e6));
    nb_value("ch11_ex5_delay_9", "%.0f", ex11_cusum_delay_bound(0.8, 0.6, 4, 1e9));
    nb_value("ch11_ex5_delay_g8", "%.0f", ex11_cusum_delay_bound(0.8, 0.6, 8, 1e6));
    /* 6 */
    nb_value("ch11_ex6_mle", "%.3f", ex11_alpha_estimate(2500, 600));
    nb_value("ch11_ex6_examined", "%d", 2500 + 600);
    nb_value("ch11_ex6_proposed", "%d", 1000 * 4);
    nb_value("ch11_ex6_naive", "%.3f", 2500.0 / (1000 * 4));
    /* 7 */
    nb_value("ch11_ex7_a", "%d", ex11_rollout_next(0, 1.08, 5000));
    nb_value("ch11_ex7_b", "%d", ex11_rollout_next(1, 1.08, 5000));
    nb_value("ch11_ex7_c", "%d", ex11_rollout_next(0, 1.50, 200));
    nb_value("ch11_ex7_d", "%d", ex11_rollout_next(1, 0.97, 200));
    return 0;
}
#endif
