/* Sequential against one batch, from the step model.  Brackets come from
 * hand arithmetic on LLaMA-3-8B's published shape (config.json: 32 layers,
 * hidden 4096, 8 KV heads of 128, vocabulary 128256; 8.03 B parameters) and
 * the H100 SXM datasheet (989.4 TFLOP/s dense bf16, 3.35 TB/s). */
#include "serve.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

static serve_workload workload(int n, int prompt, int output)
{
    serve_workload w = {n, prompt, output, 1, precision_uniform(DT_BF16)};
    return w;
}

Test(serve, single_decode_is_weight_bound)
{
    /* Batch 1, prompt 512, 256 tokens: 255 decode steps.  Each reads the weights:
     * 8.03e9 params less the 525.3e6 embedding rows it does not stream
     * (128256 * 4096), at 2 bytes: 15.01 GB / 3.35 TB/s = 4.48 ms.  The KV cache
     * adds at most 767 tokens * 131072 B (2*32*8*128*2) = 0.10 GB, and the
     * activations little: each step lies in [4.48, 4.48 * 1.12] ms.  (Had the
     * whole embedding table been streamed, 16.06 GB -> 4.79 ms, still inside.) */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    serve_workload w = workload(1, 512, 256);
    serve_result r;
    char err[160];
    cr_assert_eq(serve_batch(&m, &g, &w, 1, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.steps, 256, "one prefill and 255 decode steps");
    double per_step = r.decode / 255;
    cr_expect(per_step >= 4.48e-3 && per_step <= 4.48e-3 * 1.12, "decode step %g s", per_step);
}

Test(serve, batch_prefill_is_compute_bound)
{
    /* 32 prompts of 512 = 16384 tokens, about 2 * 7.50e9 FLOP each (every weight
     * but the embedding gather) = 2.46e14 FLOP / 989.4e12 = 0.249 s at least.
     * Attention (32 layers * 32 seqs * 4 * 32 heads * 128 * 131328 causal pairs =
     * 2.2e12 FLOP) and the memory-bound elementwise ops add some; allow 25%. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    serve_workload w = workload(32, 512, 1);
    serve_result r;
    char err[160];
    cr_assert_eq(serve_one_batch(&m, &g, &w, &r, err, sizeof err), 0, "%s", err);
    cr_expect(r.prefill >= 0.249 && r.prefill <= 0.249 * 1.25, "prefill %g s", r.prefill);
    cr_expect_float_eq(r.decode, 0, 1e-15, "one output token: no decode step");
}

Test(serve, batch_decode_costs_only_the_extra_kv)
{
    /* Decode at batch 32 against batch 1, both memory-bound (batch 32 is an
     * intensity of ~32 FLOP/B, far below the H100's 295).  Per step, weights
     * 15.01 GB are shared; the KV read grows to 32 sequences at a mean context
     * of 512 + 127 = 639: 32 * 639 * 131072 B = 2.68 GB (batch 1: 0.084 GB).
     * Ratio (15.01 + 2.68)/(15.01 + 0.084) = 1.172; allow 4%. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    serve_workload w = workload(32, 512, 256);
    serve_result one, all;
    char err[160];
    cr_assert_eq(serve_batch(&m, &g, &w, 1, &one, err, sizeof err), 0, "%s", err);
    cr_assert_eq(serve_one_batch(&m, &g, &w, &all, err, sizeof err), 0, "%s", err);
    double ratio = all.decode / one.decode;
    cr_expect(fabs(ratio - 1.172) < 0.04 * 1.172, "decode ratio %g", ratio);
}

Test(serve, sequential_is_n_single_requests)
{
    /* N requests one after another: the k-th finishes at k t1, so the total is
     * N t1 and the mean latency (N+1)/2 t1; 4 requests -> 4 t1 and 2.5 t1. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    serve_workload w = workload(4, 128, 16);
    serve_result one, seq;
    char err[160];
    cr_assert_eq(serve_batch(&m, &g, &w, 1, &one, err, sizeof err), 0, "%s", err);
    cr_assert_eq(serve_sequential(&m, &g, &w, &seq, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(seq.total, 4 * one.total, 1e-12);
    cr_expect_float_eq(seq.mean_latency, 2.5 * one.total, 1e-12);
    cr_expect_float_eq(seq.tokens_per_s, 4 * 16 / seq.total, 1e-9);
}

Test(serve, derating_both_rates_doubles_the_time)
{
    /* Each op takes max(flop/P, bytes/BW): halving P and BW doubles every term. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    gpu_spec half = gpu_derated(&g, 0.5, 0.5);
    serve_workload w = workload(8, 256, 32);
    serve_result a, b;
    char err[160];
    cr_assert_eq(serve_one_batch(&m, &g, &w, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(serve_one_batch(&m, &half, &w, &b, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(b.total, 2 * a.total, 1e-9 * a.total);
}

Test(serve, bad_workloads_are_named)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    serve_result r;
    char err[160] = "";
    serve_workload w = workload(4, 0, 16);
    cr_expect_eq(serve_sequential(&m, &g, &w, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "prompt") != NULL, "%s", err);
    w = workload(0, 16, 16);
    cr_expect_eq(serve_one_batch(&m, &g, &w, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "batch") != NULL, "%s", err);
    w = workload(2, 16, 16);
    w.tp = 3; /* 32 heads do not split over 3 GPUs */
    cr_expect_eq(serve_one_batch(&m, &g, &w, &r, err, sizeof err), -1);
    cr_expect(strlen(err) > 0);
}

Test(serve, batch_times_grow_slowly_with_the_batch)
{
    /* Batch times are serve_batch's totals, so entry 1 is one request's time,
     * and while decode is weight-bound a batch of 8 costs little more than a
     * batch of 1: per step the weights (15.01 GB) dominate the KV of 8
     * sequences at ~160 tokens (8*160*131072 B = 0.17 GB), a ~1% increase;
     * prefill of 8*128 tokens is 1024*15 GFLOP = 15 TFLOP, 15 ms against
     * ~4.5 ms for one.  So t[7]/t[0] lies in [1, 1.2]. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    serve_workload w = workload(1, 128, 64);
    double t[8];
    serve_result one;
    char err[160];
    cr_assert_eq(serve_batch_times(&m, &g, &w, 8, t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(serve_batch(&m, &g, &w, 1, &one, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(t[0], one.total, 1e-15);
    for (int n = 1; n < 8; n++)
        cr_expect_geq(t[n], t[n - 1], "batch times never shrink with n");
    cr_expect(t[7] / t[0] >= 1 && t[7] / t[0] <= 1.2, "t8/t1 = %g", t[7] / t[0]);
    cr_expect_eq(serve_batch_times(&m, &g, &w, 0, t, err, sizeof err), -1);
}
