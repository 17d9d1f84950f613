/* Sequential against one batch, from the step model.  Brackets come from
 * hand arithmetic on LLaMA-3-8B's published shape (config.json: 32 layers,
 * hidden 4096, 8 KV heads of 128, vocabulary 128256; 8.03 B parameters) and
 * the H100 SXM datasheet (989.4 TFLOP/s dense bf16, 3.35 TB/s). */
#include "batch_vs_sequential.h"

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
    /* Batch 1, prompt 512, 256 tokens: 255 decode steps, every op memory-bound.
     * Each streams the projection weights (8,030,261,248 - 525,336,576
     * embedding - 266,240 norm gains) * 2 B = 15,009,316,864, the gains
     * 532,480 and one embedding row 8,192: 15,009,857,536 B; activations
     * 32 * 323,584 + 545,792 = 10,900,480 B (norms, q/k/v, attention, o,
     * residuals, MLP widths; final norm, fp32 logits); KV at context c,
     * 131,072 (c + 2) B.  Over c = 511 + k, k = 1..255, sum (c + 2) =
     * 163,455: 3,851,717,667,840 B / 3.35e12 = 1.149766 s, 4.509 ms a step.
     * (Had the whole embedding table been streamed, 16.06 GB: 4.79 ms.) */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    serve_workload w = workload(1, 512, 256);
    serve_result r;
    char err[160];
    cr_assert_eq(serve_batch(&m, &g, &w, 1, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.steps, 256, "one prefill and 255 decode steps");
    double want = (255 * (15009857536.0 + 10900480.0) + 131072.0 * 163455) / 3.35e12;
    cr_expect(fabs(r.decode - want) <= 1e-9 * want, "decode %.9g s, hand %.9g s", r.decode, want);
}

Test(serve, batch_prefill_is_compute_bound)
{
    /* 32 prompts of 512 = 16384 tokens.  The projections are compute-bound:
     * 2 * 16384 * 7,504,658,432 (every weight but the embedding gather and
     * the norm gains) = 2.45913e14 FLOP / 989.4e12 = 248.547 ms.  Attention
     * is memory-bound (174 FLOP/B): per layer 2 ops * (2 * 33,554,432 KV +
     * 134,217,728 Q or output) B, * 32 / 3.35e12 = 3.846 ms.  Norms, residual
     * adds and SiLU-mul read and write 2 * (2*16384*4096*2 + 8192) + 2 *
     * 3*16384*4096*2 + 3*16384*14336*2 = 2,751,479,808 B a layer, * 32 /
     * 3.35e12 = 26.282 ms; the embedding and final norm 4 * 16384 * 4096 * 2
     * + 8192 B, 0.160 ms.  278.836 ms if every token got logits; a prefill
     * samples only each prompt's last position, so the head's share of the
     * projections, 2 * 16384 * 4096 * 128,256 / 989.4e12 = 17.398 ms, becomes
     * 32 positions' worth, memory-bound: the head read with 32 rows in and
     * fp32 logits out, (1,050,673,152 + 32 * 4096 * 2 + 32 * 128,256 * 4) /
     * 3.35e12 = 0.3185 ms.  261.757 ms; 0.1% for rounding. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    serve_workload w = workload(32, 512, 1);
    serve_result r;
    char err[160];
    cr_assert_eq(serve_one_batch(&m, &g, &w, &r, err, sizeof err), 0, "%s", err);
    double want = 2 * 16384 * 7504658432.0 / 989.4e12 + 32 * 2 * (2 * 33554432.0 + 134217728.0) / 3.35e12 +
                  32 * 2751479808.0 / 3.35e12 + (4 * 16384 * 4096 * 2.0 + 8192) / 3.35e12 -
                  2 * 16384 * 4096 * 128256.0 / 989.4e12 +
                  (1050673152.0 + 32 * 4096 * 2.0 + 32 * 128256 * 4.0) / 3.35e12;
    cr_expect(fabs(r.prefill - want) <= 1e-3 * want, "prefill %.6g s, hand %.6g s", r.prefill, want);
    cr_expect_float_eq(r.decode, 0, 1e-15, "one output token: no decode step");
}

Test(serve, batch_decode_costs_only_the_extra_kv)
{
    /* Decode at batch 32 against batch 1, both memory-bound (batch 32 is an
     * intensity of ~32 FLOP/B, far below the H100's 295).  Over the 255
     * steps the weights 255 * 15,009,857,536 B are shared (plus 31 more
     * embedding rows a step); KV 131,072 * 163,455 B and activations
     * 255 * 10,900,480 B are per sequence (see single_decode above).
     * Batch 1: 3,851,717,667,840 B; batch 32: 255 * (15,009,857,536 + 31 *
     * 8192) + 32 * (2,779,622,400 + 21,424,373,760) = 4,602,106,306,560 B.
     * Ratio 1.194819. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    serve_workload w = workload(32, 512, 256);
    serve_result one, all;
    char err[160];
    cr_assert_eq(serve_batch(&m, &g, &w, 1, &one, err, sizeof err), 0, "%s", err);
    cr_assert_eq(serve_one_batch(&m, &g, &w, &all, err, sizeof err), 0, "%s", err);
    double ratio = all.decode / one.decode;
    double want = (255 * (15009857536.0 + 31 * 8192) + 32 * (255 * 10900480.0 + 131072.0 * 163455)) /
                  (255 * (15009857536.0 + 10900480.0) + 131072.0 * 163455);
    cr_expect(fabs(ratio - want) < 1e-9 * want, "decode ratio %.9g, hand %.9g", ratio, want);
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
