/* Chapter 1 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "01-decode-roofline.h"

#include "memory.h"
#include "notebook.h"
#include "roofline.h"
#include "specs.h"
#include "transformer.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double ex01_ridge(const char *gpu_key, const char *compute_dtype)
{
    gpu_spec g;
    dtype c;
    if (gpu_lookup(gpu_key, &g) != 0 || dtype_parse(compute_dtype, &c) != 0)
        return NAN;
    double peak = gpu_peak_flops(&g, c);
    return peak > 0 ? ridge_intensity(peak, g.mem_bw) : NAN;
}

double ex01_ridge_swapped(const char *cores_gpu, const char *memory_gpu, const char *compute_dtype)
{
    gpu_spec cores, mem;
    dtype c;
    if (gpu_lookup(cores_gpu, &cores) != 0 || gpu_lookup(memory_gpu, &mem) != 0 || dtype_parse(compute_dtype, &c) != 0)
        return NAN;
    double peak = gpu_peak_flops(&cores, c);
    return peak > 0 ? ridge_intensity(peak, mem.mem_bw) : NAN;
}

double ex01_ridge_batch(const char *gpu_key, const char *weight_dtype, const char *compute_dtype)
{
    dtype w, c;
    gpu_spec g;
    if (gpu_lookup(gpu_key, &g) != 0 || dtype_parse(weight_dtype, &w) != 0 || dtype_parse(compute_dtype, &c) != 0)
        return NAN;
    precision p = {w, w, c, c, WF_AS_DTYPE, WF_AS_DTYPE};
    double b = ridge_batch(&g, p); /* ridge * bytes-per-weight / 2 */
    return b > 0 ? b : NAN;
}

double ex01_kv_bytes_per_token(const char *model_key, const char *kv_dtype)
{
    model_spec m;
    dtype kv;
    if (model_lookup(model_key, &m) != 0 || dtype_parse(kv_dtype, &kv) != 0)
        return NAN;
    return kv_bytes_per_token(&m, kv);
}

double ex01_head_sizing_error(const char *model_key)
{
    model_spec m;
    if (model_lookup(model_key, &m) != 0 || m.kv_heads < 1)
        return NAN;
    return (double)m.heads / m.kv_heads;
}

int ex01_max_batch(const char *model_key, const char *gpu_key, int tp, int context,
                   const char *weight_dtype, const char *kv_dtype, double usable_fraction,
                   double reserve_bytes)
{
    model_spec m;
    gpu_spec g;
    dtype w, kv;
    char err[256];
    if (model_lookup(model_key, &m) != 0 || gpu_lookup(gpu_key, &g) != 0 || dtype_parse(weight_dtype, &w) != 0 ||
        dtype_parse(kv_dtype, &kv) != 0 || context < 1 || !(usable_fraction > 0 && usable_fraction <= 1) ||
        !(reserve_bytes >= 0))
        return -1;
    /* The library's fit check, with the reserve given in bytes as the
     * exercise states it (extra fixed allocation) instead of a token count. */
    precision p = {w, kv, DT_BF16, DT_BF16, WF_AS_DTYPE, WF_AS_DTYPE};
    memory_policy pol = {usable_fraction, 0, 0, 0};
    resident_model rm = {&m, p, tp};
    fit_check f;
    if (memory_fit(&g, pol, &rm, 1, reserve_bytes, 1, context, &f, err, sizeof err) != 0)
        return -1;
    return f.max_batch;
}

/* Everything stored and computed in the dtype named. */
static int parse_uniform(const char *name, precision *out)
{
    dtype d;
    if (dtype_parse(name, &d) != 0)
        return -1;
    *out = precision_uniform(d);
    return 0;
}

/* Cost of a decode step with everything stored in one dtype. */
static int step(const char *model_key, const char *gpu_key, int tp, int batch, int context, const char *dt,
                step_cost *out)
{
    model_spec m;
    gpu_spec g;
    dtype d;
    char err[256];
    if (model_lookup(model_key, &m) != 0 || gpu_lookup(gpu_key, &g) != 0 || dtype_parse(dt, &d) != 0)
        return -1;
    step_shape s = decode_shape(batch, context, tp, precision_uniform(d));
    return decoder_step_cost(&m, &g, &s, out, err, sizeof err);
}

double ex01_kv_to_weight_ratio(const char *model_key, int tp, int batch, int context, const char *dtype)
{
    step_cost c;
    /* Byte counts do not depend on the GPU; any with a rate for dtype will do. */
    if (step(model_key, "h100", tp, batch, context, dtype, &c) != 0)
        return NAN;
    return c.kv_bytes / c.weight_bytes;
}

double ex01_step_time(const char *model_key, const char *gpu_key, int tp, int batch, int context,
                      const char *dtype)
{
    model_spec m;
    gpu_spec g;
    precision p;
    step_cost c;
    char err[256];
    if (model_lookup(model_key, &m) != 0 || gpu_lookup(gpu_key, &g) != 0 || parse_uniform(dtype, &p) != 0 ||
        batch < 1)
        return NAN;
    /* a step whose KV cache cannot be held is no answer (default policy) */
    resident_model rm = {&m, p, tp};
    fit_check f;
    if (memory_fit(&g, memory_policy_default(), &rm, 1, 0, batch, context, &f, err, sizeof err) != 0 || !f.fits)
        return NAN;
    return step(model_key, gpu_key, tp, batch, context, dtype, &c) == 0 ? c.time : NAN;
}

double ex01_step_intensity(const char *model_key, int tp, int batch, int context, const char *dtype)
{
    step_cost c;
    /* FLOPs and bytes do not depend on the GPU; any with a rate for dtype will do. */
    return step(model_key, "h100", tp, batch, context, dtype, &c) == 0 ? c.intensity : NAN;
}

double ex01_total_params(const char *model_key)
{
    model_spec m;
    return model_lookup(model_key, &m) == 0 ? model_params(&m).total : NAN;
}

double ex01_active_params(const char *model_key)
{
    model_spec m;
    return model_lookup(model_key, &m) == 0 ? model_params(&m).active : NAN;
}

double ex01_decode_weight_bytes(const char *model_key, int batch, const char *dtype)
{
    step_cost c;
    return step(model_key, "h100", 1, batch, 1, dtype, &c) == 0 ? c.weight_bytes : NAN;
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    /* 1. Ridges. */
    nb_value("ch01_ex_ridge_b200_bf16", "%.0f", ex01_ridge("b200", "bf16"));
    nb_value("ch01_ex_ridge_mi300x_bf16", "%.0f", ex01_ridge("mi300x", "bf16"));
    nb_value("ch01_ex_ridge_h100_bf16", "%.0f", ex01_ridge("h100", "bf16"));
    nb_value("ch01_ex_ridge_h200_bf16", "%.0f", ex01_ridge("h200", "bf16"));
    nb_value("ch01_ex_ridge_l40s_bf16", "%.0f", ex01_ridge("l40s", "bf16"));
    /* the printed pair with their memories swapped */
    nb_value("ch01_ex_swap_b200_mi300x_bf16", "%.0f", ex01_ridge_swapped("b200", "mi300x", "bf16"));
    nb_value("ch01_ex_swap_b200_mi300x_fp8", "%.0f", ex01_ridge_swapped("b200", "mi300x", "fp8"));
    nb_value("ch01_ex_swap_mi300x_b200_bf16", "%.0f", ex01_ridge_swapped("mi300x", "b200", "bf16"));
    nb_value("ch01_ex_swap_mi300x_b200_fp8", "%.0f", ex01_ridge_swapped("mi300x", "b200", "fp8"));
    nb_value("ch01_ex_swap_b200_gain", "%.2f",
             ex01_ridge_swapped("b200", "mi300x", "bf16") / ex01_ridge("b200", "bf16"));

    /* 2. KV per token, MHA against GQA, and what 40 GB holds at 4k. */
    double kv13 = ex01_kv_bytes_per_token("llama2-13b", "bf16");
    double kv8 = ex01_kv_bytes_per_token("llama3-8b", "bf16");
    nb_value("ch01_ex_kv_llama2_13b", "%.0f", kv13);
    nb_value("ch01_ex_kv_llama2_13b_kib", "%.0f", kv13 / KiB);
    nb_value("ch01_ex_kv_llama3_8b", "%.0f", kv8);
    nb_value("ch01_ex_kv_llama3_8b_kib", "%.0f", kv8 / KiB);
    nb_value("ch01_ex_kv_ratio_13b_8b", "%.2f", kv13 / kv8);
    nb_value("ch01_ex_seqs_40gb_4k_13b", "%.0f", floor(40e9 / (kv13 * 4096)));
    nb_value("ch01_ex_seqs_40gb_4k_8b", "%.0f", floor(40e9 / (kv8 * 4096)));

    /* 3. LLaMA-3-8B on one H200 at 8k context, under the chapter's policy:
     * 90% usable, the activations of an 8192-token step held back (in
     * bytes rounded to the MB, the figure the exercises print). */
    model_spec m8 = model_builtin("llama3-8b");
    model_spec m70 = model_builtin("llama3-70b");
    gpu_spec h200 = gpu_builtin("h200");
    memory_policy chapter = memory_policy_default();
    double res8 = round(activation_bytes(&m8, chapter.activation_tokens, chapter.sampled_tokens, DT_BF16, 1) / 1e6) * 1e6;
    double res70_tp8 =
        round(activation_bytes(&m70, chapter.activation_tokens, chapter.sampled_tokens, DT_BF16, 8) / 1e6) * 1e6;
    double res70_tp4 =
        round(activation_bytes(&m70, chapter.activation_tokens, chapter.sampled_tokens, DT_BF16, 4) / 1e6) * 1e6;
    nb_value("ch01_ex_8b_reserve_gb", "%.3f", res8 / GB);
    nb_value("ch01_ex_70b_tp8_reserve_gb", "%.3f", res70_tp8 / GB);
    nb_value("ch01_ex_70b_tp4_reserve_gb", "%.3f", res70_tp4 / GB);
    nb_value("ch01_ex_gqa_8b", "%d", m8.heads / m8.kv_heads);
    nb_value("ch01_ex_w8b_gb", "%.2f", weight_bytes(&m8, DT_BF16) / GB);
    {
        /* the same fit check ex01_max_batch makes, for the budget it leaves */
        memory_policy pol = {0.9, 0, 0, 0};
        resident_model rm = {&m8, precision_uniform(DT_BF16), 1};
        fit_check f;
        char e[256];
        if (memory_fit(&h200, pol, &rm, 1, res8, 1, 8192, &f, e, sizeof e) != 0) {
            fprintf(stderr, "%s\n", e);
            return 1;
        }
        nb_value("ch01_ex_h200_driver_gb", "%.1f", f.capacity / GB);
        nb_value("ch01_ex_h200_datasheet_gb", "%.0f", h200.mem_bytes_datasheet / GB);
        nb_value("ch01_ex_h200_usable_gb", "%.1f", f.usable / GB);
        nb_value("ch01_ex_8b_h200_left_gb", "%.2f", f.kv_budget / GB);
        nb_value("ch01_ex_h100_driver_gb", "%.1f", gpu_builtin("h100").mem_bytes / GB);
    }
    nb_value("ch01_ex_8b_seq_8k_gb", "%.3f", kv_bytes_per_sequence(&m8, DT_BF16, 8192) / GB);
    int b8 = ex01_max_batch("llama3-8b", "h200", 1, 8192, "bf16", "bf16", 0.9, res8);
    nb_value("ch01_ex_8b_h200_8k_batch", "%d", b8);
    int ridge_h200 = (int)lround(ex01_ridge_batch("h200", "bf16", "bf16"));
    nb_value("ch01_ex_8b_h200_reaches_ridge", "%s", b8 >= ridge_h200 ? "yes" : "no");
    nb_value("ch01_ex_8b_h200_8k_kv_ratio", "%.1f", ex01_kv_to_weight_ratio("llama3-8b", 1, b8, 8192, "bf16"));

    /* 4. LLaMA-3-70B on 8 x H200 at 4k. */
    int b70 = ex01_max_batch("llama3-70b", "h200", 8, 4096, "bf16", "bf16", 0.9, res70_tp8);
    int ridge_b = (int)lround(ex01_ridge_batch("h200", "bf16", "bf16"));
    nb_value("ch01_ex_70b_h200_w_gpu_gb", "%.2f", weight_bytes_per_gpu(&m70, DT_BF16, 8) / GB);
    nb_value("ch01_ex_70b_kv_tok_gpu", "%.0f", kv_bytes_per_token_per_gpu(&m70, DT_BF16, 8));
    nb_value("ch01_ex_70b_seq_4k_gpu_mb", "%.1f", kv_bytes_per_token_per_gpu(&m70, DT_BF16, 8) * 4096 / MB);
    nb_value("ch01_ex_70b_h200_tp8_4k_batch", "%d", b70);
    nb_value("ch01_ex_h200_ridge_batch", "%d", ridge_b);
    nb_value("ch01_ex_70b_h200_ridge_fits", "%s", b70 >= ridge_b ? "yes" : "no");
    nb_value("ch01_ex_70b_h200_ridge_kv_ratio", "%.2f", ex01_kv_to_weight_ratio("llama3-70b", 8, ridge_b, 4096, "bf16"));
    step_cost c;
    char err[256];
    step_shape s = decode_shape(ridge_b, 4096, 8, precision_uniform(DT_BF16));
    if (decoder_step_cost(&m70, &h200, &s, &c, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    nb_value("ch01_ex_70b_h200_ridge_intensity", "%.0f", c.intensity);
    nb_value("ch01_ex_70b_h200_ridge_bound", "%s", bound_name(c.bound));
    if (b70 >= ridge_b) /* a step time only for a batch that fits */
        nb_value("ch01_ex_70b_h200_ridge_step_ms", "%.1f", c.time * 1e3);

    /* 5. int8 weights and KV for 70B on 4 x H100 at 4k. */
    int bb = ex01_max_batch("llama3-70b", "h100", 4, 4096, "bf16", "bf16", 0.9, res70_tp4);
    int bi = ex01_max_batch("llama3-70b", "h100", 4, 4096, "int8", "int8", 0.9, res70_tp4);
    nb_value("ch01_ex_70b_h100_tp4_bf16_batch", "%d", bb);
    nb_value("ch01_ex_70b_h100_tp4_int8_batch", "%d", bi);
    nb_value("ch01_ex_70b_h100_tp4_w_bf16_gb", "%.2f", weight_bytes_per_gpu(&m70, DT_BF16, 4) / GB);
    nb_value("ch01_ex_70b_h100_tp4_w_int8_gb", "%.2f", weight_bytes_per_gpu(&m70, DT_INT8, 4) / GB);
    nb_value("ch01_ex_ridge_batch_h100_bf16", "%.0f", ex01_ridge_batch("h100", "bf16", "bf16"));
    nb_value("ch01_ex_ridge_batch_h100_w8a16", "%.0f", ex01_ridge_batch("h100", "int8", "bf16"));
    nb_value("ch01_ex_ridge_batch_h100_w8a8", "%.0f", ex01_ridge_batch("h100", "int8", "int8"));
    nb_value("ch01_ex_ridge_h100_int8", "%.0f", ex01_ridge("h100", "int8"));

    /* 6. Per-user and aggregate tokens/s, 70B on 4 x H100 at 4k. */
    double t1 = ex01_step_time("llama3-70b", "h100", 4, 1, 4096, "bf16");
    double t64 = ex01_step_time("llama3-70b", "h100", 4, 64, 4096, "bf16");
    nb_value("ch01_ex_step_b1_ms", "%.1f", t1 * 1e3);
    nb_value("ch01_ex_step_b64_ms", "%.1f", t64 * 1e3);
    nb_value("ch01_ex_user_tps_b1", "%.0f", 1 / t1);
    nb_value("ch01_ex_user_tps_b64", "%.0f", 1 / t64);
    nb_value("ch01_ex_total_tps_b64", "%.0f", 64 / t64);
    nb_value("ch01_ex_b64_gain", "%.1f", (64 / t64) / (1 / t1));
    nb_value("ch01_ex_b64_slowdown", "%.2f", t64 / t1);

    /* 7. Mixtral 8x7B: active against total, and bytes per step. */
    nb_value("ch01_ex_mixtral_total_b", "%.1f", ex01_total_params("mixtral-8x7b") / 1e9);
    nb_value("ch01_ex_mixtral_active_b", "%.1f", ex01_active_params("mixtral-8x7b") / 1e9);
    double w1 = ex01_decode_weight_bytes("mixtral-8x7b", 1, "bf16");
    double w4 = ex01_decode_weight_bytes("mixtral-8x7b", 4, "bf16");
    double w64 = ex01_decode_weight_bytes("mixtral-8x7b", 64, "bf16");
    nb_value("ch01_ex_mixtral_bytes_b1_gb", "%.1f", w1 / GB);
    nb_value("ch01_ex_mixtral_bytes_b4_gb", "%.1f", w4 / GB);
    nb_value("ch01_ex_mixtral_bytes_b64_gb", "%.1f", w64 / GB);
    nb_value("ch01_ex_mixtral_bytes_ratio", "%.2f", w64 / w1);
    return 0;
}
#endif
