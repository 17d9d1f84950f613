/* Chapter 6 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "06-many-fine-tunes.h"

#include "lora.h"
#include "memory.h"
#include "notebook.h"
#include "specs.h"

#include <math.h>
#include <stdio.h>

/* A configuration from keys; 0, or -1 for anything the library refuses. */
static int config(const char *model_key, int rank, const char *targets, int tp, model_spec *m, lora_config *c)
{
    lora_targets t;
    char err[256];
    if (model_lookup(model_key, m) != 0 || !targets || lora_targets_parse(targets, &t, err, sizeof err) != 0)
        return -1;
    *c = (lora_config){m, rank, t, DT_BF16, tp};
    return lora_config_check(c, err, sizeof err);
}

double ex06_adapter_params(const char *model_key, int rank, const char *targets)
{
    model_spec m;
    lora_config c;
    lora_size s;
    char err[256];
    if (config(model_key, rank, targets, 1, &m, &c) != 0 || lora_adapter_size(&c, &s, err, sizeof err) != 0)
        return NAN;
    return s.params;
}

double ex06_adapter_bytes_per_gpu(const char *model_key, int rank, const char *targets, int tp)
{
    model_spec m;
    lora_config c;
    lora_size s;
    char err[256];
    if (config(model_key, rank, targets, tp, &m, &c) != 0 || lora_adapter_size(&c, &s, err, sizeof err) != 0)
        return NAN;
    return s.bytes_per_gpu;
}

int ex06_max_batch_with_slots(const char *model_key, const char *gpu_key, int tp, int slot_rank, const char *targets,
                              int slots, int context)
{
    model_spec m;
    gpu_spec g;
    lora_config c;
    fit_check f;
    char err[256];
    if (config(model_key, slot_rank, targets, tp, &m, &c) != 0 || gpu_lookup(gpu_key, &g) != 0 || slots < 0 ||
        context < 1)
        return -1;
    if (lora_memory_fit(&g, memory_policy_default(), precision_uniform(DT_BF16), &c, slots, 1, context, &f, err,
                        sizeof err) != 0)
        return -1;
    return f.max_batch;
}

double ex06_step_ratio(const char *model_key, const char *gpu_key, int tp, int rank, const char *targets, int batch,
                       int context, int distinct, double launch_us)
{
    model_spec m;
    gpu_spec g;
    lora_config c;
    lora_step_cost r;
    char err[256];
    if (config(model_key, rank, targets, tp, &m, &c) != 0 || gpu_lookup(gpu_key, &g) != 0 || !(launch_us >= 0))
        return NAN;
    /* a step is timed only if the batch fits beside one slot per distinct adapter */
    fit_check f;
    if (batch < 1 || context < 1 || distinct < 1 ||
        lora_memory_fit(&g, memory_policy_default(), precision_uniform(DT_BF16), &c, distinct, batch, context, &f,
                        err, sizeof err) != 0 ||
        !f.fits)
        return NAN;
    lora_step_shape s = {batch, context, distinct, launch_us * 1e-6, 0};
    if (lora_step_cost_compute(&g, precision_uniform(DT_BF16), &c, &s, &r, err, sizeof err) != 0)
        return NAN;
    return r.ratio;
}

double ex06_bgmv_intensity(int batch, int distinct, double weight_elem_bytes)
{
    if (batch < 1 || distinct < 1 || distinct > batch || !(weight_elem_bytes > 0))
        return NAN;
    lora_op sh, ex;
    lora_bgmv_ops(batch, 4096, 4096, 16, distinct, weight_elem_bytes, 2, &sh, &ex);
    return sh.flop / sh.weight_bytes; /* the shape cancels: 2 B / (D x bytes) */
}

double ex06_expected_distinct(int adapters, double zipf_s, int batch)
{
    return lora_expected_distinct_zipf(adapters, zipf_s, batch);
}

int ex06_gpus_for_tenants(const char *model_key, int tp, int tenants, int copies)
{
    model_spec m;
    lora_config c;
    lora_tenancy t;
    char err[256];
    /* the adapter's shape does not change the count: any rank will do */
    if (config(model_key, 16, "q", tp, &m, &c) != 0 || (copies != 0 && copies != 1) ||
        lora_tenancy_compare(&c, precision_uniform(DT_BF16), tenants, &t, err, sizeof err) != 0)
        return -1;
    return copies ? t.copies_gpus : t.adapters_gpus;
}

double ex06_load_time(const char *model_key, const char *gpu_key, int tp, int rank, const char *targets)
{
    model_spec m;
    gpu_spec g;
    lora_config c;
    lora_size s;
    char err[256];
    if (config(model_key, rank, targets, tp, &m, &c) != 0 || gpu_lookup(gpu_key, &g) != 0 ||
        lora_adapter_size(&c, &s, err, sizeof err) != 0)
        return NAN;
    return lora_load_time(&g, &s);
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    /* 1: the GQA trap, 70B, rank 16 on q,k,v,o */
    double right = ex06_adapter_params("llama3-70b", 16, "q,k,v,o");
    double square = 80.0 * 4 * 16 * (8192 + 8192); /* the blog's: k and v as 8192 x 8192 */
    nb_value("ch06_ex1_params_m", "%.2f", right / 1e6);
    nb_value("ch06_ex1_square_m", "%.2f", square / 1e6);
    nb_value("ch06_ex1_over_pct", "%.0f", 100 * (square / right - 1));
    nb_value("ch06_ex1_mb", "%.1f", 2 * right / MB);
    nb_value("ch06_ex1_8b_all_m", "%.2f", ex06_adapter_params("llama3-8b", 16, "all") / 1e6);
    /* 2: per GPU under TP */
    double whole = 2 * right;
    double g4 = ex06_adapter_bytes_per_gpu("llama3-70b", 16, "q,k,v,o", 4);
    double g8 = ex06_adapter_bytes_per_gpu("llama3-70b", 16, "q,k,v,o", 8);
    nb_value("ch06_ex2_tp4_mb", "%.1f", g4 / MB);
    nb_value("ch06_ex2_tp8_mb", "%.1f", g8 / MB);
    nb_value("ch06_ex2_tp4_pct", "%.0f", 100 * g4 / whole);
    nb_value("ch06_ex2_tp8_pct", "%.0f", 100 * g8 / whole);
    /* 3: slots against the KV cache, 70B on 4 x H100, 4096 tokens, all seven at rank 64 */
    const int slots[] = {0, 16, 64};
    for (int i = 0; i < 3; i++) {
        char n[64];
        snprintf(n, sizeof n, "ch06_ex3_batch_s%d", slots[i]);
        nb_value(n, "%d", ex06_max_batch_with_slots("llama3-70b", "h100", 4, 64, "all", slots[i], 4096));
        snprintf(n, sizeof n, "ch06_ex3_batch16_s%d", slots[i]);
        nb_value(n, "%d", ex06_max_batch_with_slots("llama3-70b", "h100", 4, 16, "q,k,v,o", slots[i], 4096));
    }
    nb_value("ch06_ex3_slot_mb", "%.0f", ex06_adapter_bytes_per_gpu("llama3-70b", 64, "all", 4) / MB);
    /* 4: 1% of memory, 0% of time?  70B on 4 x H100, batch 64, D 8, rank 16 q,k,v,o */
    nb_value("ch06_ex4_ratio", "%.3f", ex06_step_ratio("llama3-70b", "h100", 4, 16, "q,k,v,o", 64, 4096, 8, 2.5));
    nb_value("ch06_ex4_ratio_ops", "%.3f", ex06_step_ratio("llama3-70b", "h100", 4, 16, "q,k,v,o", 64, 4096, 8, 0));
    nb_value("ch06_ex4_ratio_d64", "%.3f",
             ex06_step_ratio("llama3-70b", "h100", 4, 16, "q,k,v,o", 64, 4096, 64, 2.5));
    nb_value("ch06_ex4_ratio_b1", "%.3f", ex06_step_ratio("llama3-70b", "h100", 4, 16, "q,k,v,o", 1, 4096, 1, 2.5));
    model_spec m70 = model_builtin("llama3-70b");
    nb_value("ch06_ex4_weights_pct", "%.1f", 100 * 8 * g4 / weight_bytes_per_gpu(&m70, DT_BF16, 4));
    /* 5: intensity and padded ranks */
    nb_value("ch06_ex5_i_d1", "%.0f", ex06_bgmv_intensity(64, 1, 2));
    nb_value("ch06_ex5_i_d8", "%.0f", ex06_bgmv_intensity(64, 8, 2));
    nb_value("ch06_ex5_i_d64", "%.0f", ex06_bgmv_intensity(64, 64, 2));
    nb_value("ch06_ex5_pad8", "%.3f", ex06_step_ratio("llama3-70b", "h100", 4, 8, "q,k,v,o", 64, 4096, 8, 2.5));
    nb_value("ch06_ex5_pad64", "%.3f", ex06_step_ratio("llama3-70b", "h100", 4, 64, "q,k,v,o", 64, 4096, 8, 2.5));
    nb_value("ch06_ex5_pad64_ops", "%.3f", ex06_step_ratio("llama3-70b", "h100", 4, 64, "q,k,v,o", 64, 4096, 8, 0));
    nb_value("ch06_ex5_pad8_ops", "%.3f", ex06_step_ratio("llama3-70b", "h100", 4, 8, "q,k,v,o", 64, 4096, 8, 0));
    /* 6: popularity */
    nb_value("ch06_ex6_uniform", "%.1f", ex06_expected_distinct(300, 0.0, 64));
    nb_value("ch06_ex6_zipf1", "%.1f", ex06_expected_distinct(300, 1.0, 64));
    nb_value("ch06_ex6_zipf1_b8", "%.2f", ex06_expected_distinct(300, 1.0, 8));
    nb_value("ch06_ex6_uniform_b8", "%.2f", ex06_expected_distinct(300, 0.0, 8));
    /* 7: copies against adapters, and a miss */
    nb_value("ch06_ex7_load_ms", "%.2f", 1e3 * ex06_load_time("llama3-70b", "h100", 4, 16, "q,k,v,o"));
    nb_value("ch06_ex7_load_all64_ms", "%.1f", 1e3 * ex06_load_time("llama3-70b", "h100", 4, 64, "all"));
    /* (c) against the printed step of about 20 ms */
    nb_value("ch06_ex7_miss_pct", "%.0f", 100 * ex06_load_time("llama3-70b", "h100", 4, 16, "q,k,v,o") / 20e-3);
    nb_value("ch06_ex7_miss_all64_pct", "%.0f", 100 * ex06_load_time("llama3-70b", "h100", 4, 64, "all") / 20e-3);
    return 0;
}
#endif
