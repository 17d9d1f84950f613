/* Chapter 3 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "03-batching-in-practice.h"

#include "memory.h"
#include "notebook.h"
#include "packing.h"
#include "batch_vs_sequential.h"
#include "specs.h"
#include "window.h"

#include <math.h>
#include <stdio.h>

long ex03_pack_offsets(const int *lengths, int n, long *cu)
{
    if (!cu || (n > 0 && !lengths))
        return -1;
    return pack_offsets(lengths, n, cu);
}

static int lengths_ok(const int *lengths, int n)
{
    if (n < 0 || (n > 0 && !lengths))
        return 0;
    for (int i = 0; i < n; i++)
        if (lengths[i] < 0)
            return 0;
    return 1;
}

double ex03_padding_waste(const int *lengths, int n)
{
    return lengths_ok(lengths, n) ? padding_cost_padded(lengths, n).waste : NAN;
}

double ex03_bucketed_waste(const int *lengths, int n, const int *edges, int nbuckets)
{
    padding_cost c;
    if (!lengths_ok(lengths, n) || !edges || padding_cost_bucketed(lengths, n, edges, nbuckets, &c) != 0)
        return NAN;
    return c.waste;
}

int ex03_bucket_batches(const int *lengths, int n, const int *edges, int nbuckets)
{
    padding_cost c;
    if (!lengths_ok(lengths, n) || !edges || padding_cost_bucketed(lengths, n, edges, nbuckets, &c) != 0)
        return -1;
    return c.batches;
}

double ex03_attention_ratio(const int *lengths, int n, const int *edges, int nbuckets)
{
    padding_cost c;
    if (!lengths_ok(lengths, n) || n < 1 || !edges || padding_cost_bucketed(lengths, n, edges, nbuckets, &c) != 0 ||
        !(c.attn_pairs > 0))
        return NAN;
    return padding_cost_padded(lengths, n).attn_pairs / c.attn_pairs;
}

static int window(double lambda, double w, int b, window_stats *s)
{
    window_params p = {lambda, w, b};
    char err[128];
    return window_expected(&p, s, err, sizeof err);
}

double ex03_expected_batch(double lambda, double w, int max_batch)
{
    window_stats s;
    return window(lambda, w, max_batch, &s) ? NAN : s.mean_batch;
}

double ex03_mean_wait(double lambda, double w, int max_batch)
{
    window_stats s;
    return window(lambda, w, max_batch, &s) ? NAN : s.mean_wait;
}

double ex03_mean_dispatch(double lambda, double w, int max_batch)
{
    window_stats s;
    return window(lambda, w, max_batch, &s) ? NAN : s.mean_close;
}

double ex03_window_for_wait(double lambda, int max_batch, double wait_budget)
{
    window_stats s;
    if (!(wait_budget > 0) || window(lambda, 0, max_batch, &s))
        return NAN;
    /* The mean wait grows with the window: bracket the budget, then bisect. */
    double lo = 0, hi = wait_budget;
    while (window(lambda, hi, max_batch, &s) == 0 && s.mean_wait <= wait_budget) {
        lo = hi;
        hi *= 2;
        if (hi > 1e9) /* a batch of one never waits: any window meets the budget */
            return INFINITY;
    }
    for (int i = 0; i < 100 && hi - lo > 1e-12; i++) {
        double mid = (lo + hi) / 2;
        if (window(lambda, mid, max_batch, &s) == 0 && s.mean_wait <= wait_budget)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

double ex03_seq_over_batch(const char *model_key, const char *gpu_key, int n, int prompt, int output)
{
    model_spec m;
    gpu_spec g;
    if (model_lookup(model_key, &m) || gpu_lookup(gpu_key, &g))
        return NAN;
    serve_workload w = {n, prompt, output, 1, precision_uniform(DT_BF16)};
    serve_result seq, one;
    char err[256];
    resident_model rm = {&m, w.prec, 1};
    fit_check f;
    if (n < 1 || memory_fit(&g, memory_policy_default(), &rm, 1, 0, n, prompt + output, &f, err, sizeof err) ||
        !f.fits)
        return NAN; /* the batch's KV cache must be held */
    if (serve_sequential(&m, &g, &w, &seq, err, sizeof err) || serve_one_batch(&m, &g, &w, &one, err, sizeof err))
        return NAN;
    return seq.total / one.total;
}

int ex03_kv_cap(const char *model_key, const char *gpu_key, int context, double usable_fraction,
                double reserve_bytes)
{
    model_spec m;
    gpu_spec g;
    if (model_lookup(model_key, &m) || gpu_lookup(gpu_key, &g) || context < 1 || !(usable_fraction > 0) ||
        usable_fraction > 1 || !(reserve_bytes >= 0))
        return -1;
    /* The library's fit check; the reserve, given in bytes, is an extra
     * fixed allocation rather than a token count. */
    memory_policy pol = {usable_fraction, 0, 0, 0};
    resident_model rm = {&m, precision_uniform(DT_BF16), 1};
    fit_check f;
    char err[256];
    if (memory_fit(&g, pol, &rm, 1, reserve_bytes, 1, context, &f, err, sizeof err) != 0)
        return -1;
    return f.max_batch;
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    /* 1. Offsets. */
    int len1[] = {5, 3, 8, 1};
    long cu[5];
    nb_value("ch03_ex_total", "%ld", ex03_pack_offsets(len1, 4, cu));
    nb_value("ch03_ex_cu", "%ld, %ld, %ld, %ld, %ld", cu[0], cu[1], cu[2], cu[3], cu[4]);
    nb_value("ch03_ex_index_2_2", "%ld", cu[2] + 2);
    nb_value("ch03_ex_slots_1", "%d", 4 * max_length(len1, 4));
    nb_value("ch03_ex_waste_1", "%.1f%%", 100 * ex03_padding_waste(len1, 4));

    /* 2. Buckets. */
    int len2[] = {40, 60, 100, 250, 300, 900, 1000, 4000};
    int edges[] = {128, 512, 2048, 8192};
    padding_cost pc = padding_cost_padded(len2, 8), bc;
    padding_cost_bucketed(len2, 8, edges, 4, &bc);
    nb_value("ch03_ex_tokens_2", "%ld", pc.tokens);
    nb_value("ch03_ex_slots_2", "%ld", pc.slots);
    nb_value("ch03_ex_waste_2", "%.1f%%", 100 * ex03_padding_waste(len2, 8));
    nb_value("ch03_ex_bucket_slots_2", "%ld", bc.slots);
    nb_value("ch03_ex_bucket_waste_2", "%.1f%%", 100 * ex03_bucketed_waste(len2, 8, edges, 4));
    nb_value("ch03_ex_bucket_batches_2", "%d", bc.batches);
    nb_value("ch03_ex_attn_ratio_2", "%.1f", pc.attn_pairs / bc.attn_pairs);

    /* 3 and 4. Light and heavy load. */
    nb_value("ch03_ex_light_batch", "%.3f", ex03_expected_batch(20, 0.050, 16));
    nb_value("ch03_ex_light_wait_ms", "%.2f", 1e3 * ex03_mean_wait(20, 0.050, 16));
    nb_value("ch03_ex_heavy_batch", "%.3f", ex03_expected_batch(2000, 0.050, 16));
    nb_value("ch03_ex_heavy_wait_ms", "%.2f", 1e3 * ex03_mean_wait(2000, 0.050, 16));
    nb_value("ch03_ex_heavy_close_ms", "%.2f", 1e3 * (ex03_expected_batch(2000, 0.050, 16) - 1) / 2000);

    /* 5. The window for a 20 ms budget at 100/s, B = 32; and B = 4. */
    double w5 = ex03_window_for_wait(100, 32, 0.020);
    nb_value("ch03_ex_budget_window_ms", "%.1f", 1e3 * w5);
    nb_value("ch03_ex_budget_batch", "%.2f", ex03_expected_batch(100, w5, 32));
    double w5b = ex03_window_for_wait(1000, 4, 0.020);
    nb_value("ch03_ex_budget_window_b4", "%s", isinf(w5b) ? "any window" : "a finite window");
    nb_value("ch03_ex_b4_wait_ms", "%.2f", 1e3 * ex03_mean_wait(1000, 1.0, 4));

    /* 6. Sequential over batch on datasheet rates. */
    nb_value("ch03_ex_ratio_16", "%.1f", ex03_seq_over_batch("llama3-8b", "h100", 16, 256, 128));
    {
        model_spec m;
        gpu_spec g, l40s;
        if (model_lookup("llama3-8b", &m) || gpu_lookup("h100", &g) || gpu_lookup("l40s", &l40s))
            return 1;
        serve_workload w = {16, 256, 128, 1, precision_uniform(DT_BF16)};
        serve_result one, all;
        char err[256];
        if (serve_batch(&m, &g, &w, 1, &one, err, sizeof err) || serve_batch(&m, &g, &w, 16, &all, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        nb_value("ch03_ex_stream_gb", "%.1f", (weight_bytes(&m, DT_BF16) - 2.0 * m.vocab * m.hidden) / GB);
        nb_value("ch03_ex_single_step_ms", "%.2f", 1e3 * one.decode / 127);
        nb_value("ch03_ex_batch_step_ms", "%.2f", 1e3 * all.decode / 127);
        nb_value("ch03_ex_single_prefill_ms", "%.1f", 1e3 * one.prefill);
        nb_value("ch03_ex_batch_prefill_ms", "%.0f", 1e3 * all.prefill);
        nb_value("ch03_ex_l40s_slower", "%.1f", g.mem_bw / l40s.mem_bw);
        nb_value("ch03_ex_light_mu", "%.0f", 20 * 0.050);
    }
    nb_value("ch03_ex_ratio_16_long", "%.1f", ex03_seq_over_batch("llama3-8b", "h100", 16, 4096, 128));

    /* 7. KV cap. */
    nb_value("ch03_ex_h100_tbs", "%.2f", gpu_builtin("h100").mem_bw / TB);
    nb_value("ch03_ex_l40s_tbs", "%.3f", gpu_builtin("l40s").mem_bw / TB);
    {
        model_spec m8 = model_builtin("llama3-8b");
        nb_value("ch03_ex_kv_tok_kib", "%.0f", kv_bytes_per_token(&m8, DT_BF16) / KiB);
    }
    nb_value("ch03_ex_h100_datasheet_gb", "%.0f", gpu_builtin("h100").mem_bytes_datasheet / GB);
    nb_value("ch03_ex_h100_driver_gb", "%.1f", gpu_builtin("h100").mem_bytes / GB);
    nb_value("ch03_ex_l40s_driver_gb", "%.1f", gpu_builtin("l40s").mem_bytes / GB);
    nb_value("ch03_ex_cap_768", "%d", ex03_kv_cap("llama3-8b", "h100", 768, 0.9, 5e9));
    nb_value("ch03_ex_cap_8k", "%d", ex03_kv_cap("llama3-8b", "h100", 8192, 0.9, 5e9));
    nb_value("ch03_ex_cap_8k_l40s", "%d", ex03_kv_cap("llama3-8b", "l40s", 8192, 0.9, 5e9));
    return 0;
}
#endif
