/* Chapter 2 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "02-measure-it.h"

#include "ceilings.h"
#include "gemm_model.h"
#include "measure_ref.h"
#include "memory.h"
#include "notebook.h"
#include "specs.h"
#include "transformer.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double ex02_stream_bandwidth(const char *kernel, double elements, double elem_bytes, double seconds)
{
    if (!kernel || !(elements > 0) || !(elem_bytes > 0) || !(seconds > 0))
        return NAN;
    for (int k = 0; k < STREAM_KIND_COUNT; k++)
        if (strcmp(kernel, stream_kind_name((stream_kind)k)) == 0)
            return stream_bytes((stream_kind)k, elements, elem_bytes) / seconds;
    return NAN;
}

double ex02_gemm_time(const char *gpu_key, double m, double n, double k)
{
    gpu_spec g;
    if (gpu_lookup(gpu_key, &g) != 0 || !(m > 0) || !(n > 0) || !(k > 0))
        return NAN;
    return gemm_predicted_time(m, n, k, 2, 2, gpu_peak_flops(&g, DT_BF16), g.mem_bw, NULL);
}

double ex02_knee_batch(const char *gpu_key, double n, double k)
{
    gpu_spec g;
    if (gpu_lookup(gpu_key, &g) != 0 || !(n > 0) || !(k > 0))
        return NAN;
    return gemm_knee_batch(n, k, 2, 2, gpu_peak_flops(&g, DT_BF16), g.mem_bw);
}

double ex02_median_abs_error(const double *predicted, const double *measured, int n)
{
    if (!predicted || !measured || n <= 0)
        return NAN;
    for (int i = 0; i < n; i++)
        if (!(measured[i] > 0))
            return NAN;
    return error_summary_of(predicted, measured, n).median_abs;
}

double ex02_dram_fraction(double bytes_read, double bytes_written, double seconds, double ceiling)
{
    if (!(bytes_read >= 0) || !(bytes_written >= 0) || !(seconds > 0) || !(ceiling > 0))
        return NAN;
    return (bytes_read + bytes_written) / seconds / ceiling;
}

double ex02_attention_floor(const char *model_key, int context, int batch, double read_bandwidth)
{
    model_spec m;
    if (model_lookup(model_key, &m) != 0 || context <= 0 || batch <= 0 || !(read_bandwidth > 0))
        return NAN;
    return kv_bytes_per_sequence(&m, DT_BF16, context) * batch / read_bandwidth;
}

double ex02_launch_idle_share(int kernels, double per_launch, double gpu_busy)
{
    if (kernels <= 0 || !(per_launch >= 0) || !(gpu_busy > 0))
        return NAN;
    double host = kernels * per_launch;
    return host > gpu_busy ? 1 - gpu_busy / host : 0;
}

#ifndef NB_EXERCISE_TEST
/* Kernels one decode step launches: one per op, per layer where it repeats. */
static int step_kernels(const model_spec *m, const step_shape *s)
{
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, s, ops, DECODER_MAX_OPS), total = 0;
    for (int i = 0; i < n; i++)
        total += op_repeats(m, &ops[i]);
    return n < 0 ? -1 : total;
}

int main(void)
{
    published_ceilings pub;
    if (published_ceilings_for("h200", &pub) != 0)
        return 1;
    nb_value("ex02_h200_read_tbs", "%.2f", pub.read_bw / TB);
    /* 1. BabelStream on an H200: 2^28 floats per array. */
    double n28 = 268435456;
    nb_value("ex02_copy_tbs", "%.2f", ex02_stream_bandwidth("copy", n28, 4, 0.536e-3) / TB);
    nb_value("ex02_read_tbs", "%.2f", ex02_stream_bandwidth("read", n28, 4, 0.240e-3) / TB);
    nb_value("ex02_copy_as_read_tbs", "%.2f", ex02_stream_bandwidth("read", n28, 4, 0.536e-3) / TB);
    nb_value("ex02_array_gb", "%.2f", n28 * 4 / GB);
    nb_value("ex02_copy_pct_ds", "%.0f", 100 * ex02_stream_bandwidth("copy", n28, 4, 0.536e-3) / (4.8 * TB));

    /* 2. The knee of the square and of a TP-8 shard on H100 and H200. */
    nb_value("ex02_knee_h100_square", "%.0f", ex02_knee_batch("h100", 8192, 8192));
    nb_value("ex02_knee_h200_square", "%.0f", ex02_knee_batch("h200", 8192, 8192));
    model_spec m70 = model_builtin("llama3-70b");
    nb_value("ex02_down_tp8_k", "%d", m70.ffn / 8);
    nb_value("ex02_knee_h200_down_tp8", "%.0f", ex02_knee_batch("h200", m70.hidden, m70.ffn / 8.0));
    gpu_spec h200 = gpu_builtin("h200");
    nb_value("ex02_ridge_h200", "%.0f", ridge_intensity(gpu_peak_flops(&h200, DT_BF16), h200.mem_bw));
    gpu_spec h100_ds = gpu_builtin("h100");
    nb_value("ex02_ridge_h100", "%.0f", ridge_intensity(gpu_peak_flops(&h100_ds, DT_BF16), h100_ds.mem_bw));

    /* 3. LLaMA-3-70B gate+up at TP 4 on the H200 datasheet. */
    double gu_n = 2.0 * m70.ffn / 4, gu_k = m70.hidden;
    nb_value("ex02_gateup_n", "%.0f", gu_n);
    nb_value("ex02_gateup_m1_us", "%.1f", ex02_gemm_time("h200", 1, gu_n, gu_k) * 1e6);
    nb_value("ex02_gateup_m512_us", "%.1f", ex02_gemm_time("h200", 512, gu_n, gu_k) * 1e6);
    nb_value("ex02_gateup_m512_vs_m1", "%.1f",
             ex02_gemm_time("h200", 512, gu_n, gu_k) / ex02_gemm_time("h200", 1, gu_n, gu_k));
    nb_value("ex02_gateup_m1_weight_mb", "%.1f", 2 * gu_n * gu_k / MB);
    nb_value("ex02_knee_h200_gateup", "%.0f", ex02_knee_batch("h200", gu_n, gu_k));

    /* 4. A prediction table for exercise 3's weight on the H200 datasheet.
     * The "measured" column is a stated stand-in, not a measurement: a
     * kernel at 90% of the bandwidth and 85% of the peak that overlaps the
     * two terms only partly, t = sqrt(t_mem^2 + t_compute^2). */
    //> ex02_table
    const int table_m[5] = {1, 64, 128, 256, 512};
    double pred[5], meas[5];
    double peak200 = gpu_peak_flops(&h200, DT_BF16);
    for (int i = 0; i < 5; i++) {
        gemm_work wk = gemm_work_of(table_m[i], gu_n, gu_k, 2, 2);
        double t_mem = wk.bytes / (0.90 * h200.mem_bw), t_comp = wk.flop / (0.85 * peak200);
        pred[i] = ex02_gemm_time("h200", table_m[i], gu_n, gu_k) * 1e6;
        meas[i] = sqrt(t_mem * t_mem + t_comp * t_comp) * 1e6;
    }
    //< ex02_table
    int worst = 0;
    for (int i = 0; i < 5; i++) {
        char name[48];
        snprintf(name, sizeof name, "ex02_table_m%d_pred", table_m[i]);
        nb_value(name, "%.1f", pred[i]);
        snprintf(name, sizeof name, "ex02_table_m%d_meas", table_m[i]);
        nb_value(name, "%.1f", meas[i]);
        snprintf(name, sizeof name, "ex02_table_m%d_err_pct", table_m[i]);
        nb_value(name, "%.1f", 100 * fabs(relative_error(pred[i], meas[i])));
        if (fabs(relative_error(pred[i], meas[i])) > fabs(relative_error(pred[worst], meas[worst])))
            worst = i;
    }
    nb_value("ex02_table_worst_m", "%d", table_m[worst]);
    nb_value("ex02_table_worst_pct", "%.1f", 100 * fabs(relative_error(pred[worst], meas[worst])));
    nb_value("ex02_table_median_pct", "%.1f", 100 * ex02_median_abs_error(pred, meas, 5));
    double abs_err[5];
    for (int i = 0; i < 5; i++)
        abs_err[i] = fabs(relative_error(pred[i], meas[i]));
    for (int i = 1; i < 5; i++) /* insertion sort: five numbers */
        for (int j = i; j > 0 && abs_err[j] < abs_err[j - 1]; j--) {
            double t = abs_err[j];
            abs_err[j] = abs_err[j - 1];
            abs_err[j - 1] = t;
        }
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "ex02_table_sorted_%d", i + 1);
        nb_value(name, "%.1f", 100 * abs_err[i]);
    }

    /* 5. A GEMV profile on an H200. */
    nb_value("ex02_gemv_frac_ds", "%.1f", 100 * ex02_dram_fraction(134.3e6, 16.4e3, 31.87e-6, 4.8 * TB));
    nb_value("ex02_gemv_frac_read", "%.1f", 100 * ex02_dram_fraction(134.3e6, 16.4e3, 31.87e-6, pub.read_bw));
    nb_value("ex02_gemv_tbs", "%.2f", ex02_dram_fraction(134.3e6, 16.4e3, 31.87e-6, 1) / TB);

    /* 6. Attention at 32k on an H200 (published read ceiling). */
    model_spec m8 = model_builtin("llama3-8b");
    nb_value("ex02_kv_token_70b_kb", "%.0f", kv_bytes_per_token(&m70, DT_BF16) / KB);
    nb_value("ex02_kv_70b_32k_gb", "%.1f", kv_bytes_per_sequence(&m70, DT_BF16, 32768) / GB);
    nb_value("ex02_heads_over_kv_70b", "%d", m70.heads / m70.kv_heads);
    nb_value("ex02_attn_70b_32k_ms", "%.2f", ex02_attention_floor("llama3-70b", 32768, 1, pub.read_bw) * 1e3);
    nb_value("ex02_attn_70b_32k_85_ms", "%.2f", ex02_attention_floor("llama3-70b", 32768, 1, pub.read_bw) / 0.85 * 1e3);
    nb_value("ex02_attn_8b_32k_b16_ms", "%.2f", ex02_attention_floor("llama3-8b", 32768, 16, pub.read_bw) * 1e3);
    /* what those sixteen contexts read, against whole models' weights */
    nb_value("ex02_kv_8b_32k_b16_gb", "%.1f", 16 * kv_bytes_per_sequence(&m8, DT_BF16, 32768) / GB);
    nb_value("ex02_w70_gb", "%.0f", weight_bytes(&m70, DT_BF16) / GB);
    nb_value("ex02_h200_usable_gb", "%.0f", h200.mem_bytes * memory_policy_default().usable_fraction / GB);
    nb_value("ex02_w8_gb", "%.0f", weight_bytes(&m8, DT_BF16) / GB);
    nb_value("ex02_kv_8b_b16_over_w70_pct", "%.0f",
             100 * 16 * kv_bytes_per_sequence(&m8, DT_BF16, 32768) / weight_bytes(&m70, DT_BF16));

    /* 7. Launch cost against a decode step of LLaMA-3-8B on one H100. */
    precision bf16 = precision_uniform(DT_BF16);
    gpu_spec h100 = gpu_builtin("h100");
    step_shape s1 = decode_shape(1, 1024, 1, bf16), s256 = decode_shape(256, 1024, 1, bf16);
    step_cost c1, c256;
    char err[256];
    if (decoder_step_cost(&m8, &h100, &s1, &c1, err, sizeof err) ||
        decoder_step_cost(&m8, &h100, &s256, &c256, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int kernels = step_kernels(&m8, &s1);
    nb_value("ex02_launch_kernels_8b", "%d", kernels);
    nb_value("ex02_launch_step_b1_ms", "%.2f", c1.time * 1e3);
    nb_value("ex02_launch_step_b256_ms", "%.2f", c256.time * 1e3);
    nb_value("ex02_launch_gpu_per_kernel_us", "%.1f", c1.time / kernels * 1e6);
    /* The GPU stays busy for 5 us kernels only if launches cost under that. */
    double tiny = kernels * 5e-6;
    nb_value("ex02_launch_tiny_busy_ms", "%.2f", tiny * 1e3);
    nb_value("ex02_launch_idle_b1_pct", "%.0f", 100 * ex02_launch_idle_share(kernels, 7e-6, c1.time));
    nb_value("ex02_launch_idle_tiny_pct", "%.0f", 100 * ex02_launch_idle_share(kernels, 7e-6, tiny));
    nb_value("ex02_launch_host_ms", "%.2f", kernels * 7e-6 * 1e3);
    return 0;
}
#endif
