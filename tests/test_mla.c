/* Latent attention (MLA): the kernel's op records by hand, its classes and
 * its peak in the pricing door, and the fit of the measured MLA tables
 * (calib/published_mla.c) on synthetic tables of known parameters. */
#include "fit.h"
#include "pricing_internal.h"
#include "published.h"
#include "transformer.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scratch_dir.h"

TestSuite(mla, .init = scratch_suite_make, .fini = scratch_suite_remove);

Test(mla, absorbed_kernel_by_hand)
{
    /* 2 sequences, 3 cached positions, 1 new token, 16 heads, latent 512 + rope 64, fp8 cache,
     * bf16 activations.  pairs = 3 x 1 + 1 x 2 / 2 = 4 per sequence and head.
     * scores: 2 x 2 x 16 x 576 x 4 + 5 x 2 x 16 x 4 = 147456 + 640 = 148096 FLOPs;
     * values: 2 x 2 x 16 x 512 x 4 = 131072.  The latent is read once, on the scores:
     * 2 x (3 + 1) x 576 x 1 B = 4608 B.  Q: 2 x 16 x 576 x 2 = 36864 B; out 2 x 16 x 512 x 2 = 32768 B.
     * Items: each sequence's 16 heads fill one 64-row tile, 2 in all, half on each op. */
    mla_shape k = {2, 3, 1, 16, 512, 64, 128, 128, DT_FP8, DT_BF16, 1};
    op_cost a[2];
    mla_kernel_op_costs(&k, a);
    cr_expect_float_eq(a[0].flop, 148096, 1e-9);
    cr_expect_float_eq(a[1].flop, 131072, 1e-9);
    cr_expect_float_eq(a[0].kv_bytes, 4608, 1e-9);
    cr_expect_float_eq(a[1].kv_bytes, 0, 1e-9);
    cr_expect_float_eq(a[0].act_bytes, 36864, 1e-9);
    cr_expect_float_eq(a[1].act_bytes, 32768, 1e-9);
    cr_expect_float_eq(a[0].items + a[1].items, 2, 1e-12);
    cr_expect_float_eq(a[0].span, 4, 1e-12);
    cr_expect_float_eq(a[0].fixed_share + a[1].fixed_share, 1, 1e-12);
    cr_expect_eq(a[0].rate, RC_MLA_DECODE_FP8);
    k.kv = DT_BF16;
    mla_kernel_op_costs(&k, a);
    cr_expect_eq(a[1].rate, RC_MLA_DECODE_BF16);
}

Test(mla, expanded_kernel_by_hand)
{
    /* a 256-token prompt, 16 heads of nope 128 + rope 64 keys and 128-wide values:
     * pairs = 256 x 257 / 2 = 32896; scores 2 x 16 x 192 x 32896 + 5 x 16 x 32896
     * = 202113024 + 2631680 = 204744704 FLOPs; values 2 x 16 x 128 x 32896 = 134742016.
     * Items: 16 heads x 2 tiles of 128 rows = 32. */
    mla_shape k = {1, 0, 256, 16, 512, 64, 128, 128, DT_BF16, DT_BF16, 0};
    op_cost a[2];
    mla_kernel_op_costs(&k, a);
    cr_expect_float_eq(a[0].flop, 204744704, 1e-6);
    cr_expect_float_eq(a[1].flop, 134742016, 1e-6);
    cr_expect_float_eq(a[0].items + a[1].items, 32, 1e-12);
    cr_expect_float_eq(a[0].span, 0, 1e-12);
    cr_expect_eq(a[0].rate, RC_MLA_PREFILL);
}

Test(mla, the_step_prices_the_kernel_at_the_bf16_peak)
{
    /* DeepSeek-V3 in fp8 (weights, compute, cache) at TP 1, 8 sequences of 4096: every one of
     * the 128 heads scores against the latent, 2 x 128 x 576 FLOPs per 576 cached bytes, an
     * intensity of 256 FLOP/B: compute-bound at the bf16 peak (ridge near 206 on an H200),
     * memory-bound at the fp8 one.  The roofline must take the bf16 peak. */
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    step_shape s = {0};
    s.tp = 1;
    s.batch = 8;
    s.context = 4096;
    s.new_tokens = 1;
    s.prec = (precision){.weights = DT_FP8, .kv = DT_FP8, .act = DT_BF16, .compute = DT_FP8};
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    cr_assert_gt(n, 0);
    int seen = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(ops[i].name, "attn_score") != 0)
            continue;
        seen = 1;
        cr_expect_eq(ops[i].rate, RC_MLA_DECODE_FP8);
        double bf16 = gpu_peak_flops(&g, DT_BF16), fp8 = gpu_peak_flops(&g, DT_FP8);
        double t = price_op(&ops[i], &g, fp8, 1, NULL);
        double want = fmax(ops[i].flop / bf16, op_bytes(&ops[i]) / g.mem_bw);
        cr_expect_float_eq(t / want, 1, 1e-12, "%g against %g", t, want);
        cr_expect_gt(ops[i].flop / bf16, op_bytes(&ops[i]) / g.mem_bw, "the shape must be compute-bound");
    }
    cr_expect(seen, "no attn_score op");
}

/* A synthetic table written the way the importer writes it, timed by a known rate. */
static void write_table(const char *file, int decode, const op_rate *truth, const gpu_spec *g)
{
    const model_spec m = model_builtin("deepseek-v3");
    char path[512];
    snprintf(path, sizeof path, "%s/%s", scratch_dir, file);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "# measurement: %s\n# kind: published\n%s\theads\tkv_dtype\ttime_s\n", decode ? "mla_decode" : "mla_prefill",
            decode ? "batch\tcontext" : "batch\tprompt");
    const double peak = gpu_peak_flops(g, DT_BF16);
    for (int b = 1; b <= 1024; b *= 4)
        for (int len = decode ? 64 : 16; len <= 32768; len *= 2)
            for (int heads = 16; heads <= 128; heads *= 8)
                for (int kvi = 0; kvi < 2; kvi++) {
                    dtype kv = kvi ? DT_FP8 : DT_BF16;
                    mla_shape k = {b, decode ? len - 1 : 0, decode ? 1 : len, heads, m.kv_lora_rank, m.qk_rope_dim,
                                   m.qk_nope_dim, m.v_head_dim, kv, DT_BF16, decode};
                    op_cost a[2];
                    mla_kernel_op_costs(&k, a);
                    double t = op_rate_time(truth, a[0].flop + a[1].flop, op_bytes(&a[0]) + op_bytes(&a[1]),
                                            a[0].items + a[1].items, a[0].span, peak, g->mem_bw);
                    /* the other cache dtype's rows take twice as long: they must not reach the fit */
                    if (decode && kv == DT_BF16)
                        t *= 2;
                    fprintf(f, "%d\t%d\t%d\t%s\t%.9e\n", b, len, heads, kvi ? "fp8" : "bf16", t);
                }
    fclose(f);
}

static void expect_recovered(const op_rate *r, const op_rate *truth, int spans)
{
    cr_expect_float_eq(r->t0 / truth->t0, 1, 0.01, "t0 %g", r->t0);
    cr_expect_float_eq(r->t_item / truth->t_item, 1, 0.01, "t_item %g", r->t_item);
    cr_expect_float_eq(r->flop_frac / truth->flop_frac, 1, 0.01, "flop_frac %g", r->flop_frac);
    cr_expect_float_eq(r->byte_frac / truth->byte_frac, 1, 0.01, "byte_frac %g", r->byte_frac);
    if (spans) {
        cr_expect_float_eq(r->item_frac / truth->item_frac, 1, 0.01, "item_frac %g", r->item_frac);
        cr_expect_float_eq(r->t_long / truth->t_long, 1, 0.01, "t_long %g", r->t_long);
    }
}

Test(mla, decode_fit_recovers_known_parameters)
{
    const op_rate truth = {.t0 = 13e-6, .t_item = 50e-9, .flop_frac = 0.7, .byte_frac = 0.85, .blend = 4,
                           .item_frac = 0.6, .t_long = 3e-6};
    gpu_spec g = gpu_builtin("h200");
    write_table("mla_decode.tsv", 1, &truth, &g);
    rate_point *p;
    int n;
    char err[512];
    cr_assert_eq(published_rate_points(scratch_dir, RC_MLA_DECODE_FP8, &g, &p, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 6 * 10 * 2, "fp8 rows only: 6 batches x 10 contexts x 2 head counts, got %d", n);
    op_rate r = {3e-6, 1e-9, 0.8, 0.8, 2, 1, 1e-6};
    fit_summary s;
    cr_assert_eq(fit_op_rate(p, n, &r, &s, err, sizeof err), 0, "%s", err);
    free(p);
    cr_expect_lt(s.worst_abs_err, 1e-3, "worst %g", s.worst_abs_err);
    expect_recovered(&r, &truth, 1);
}

Test(mla, prefill_fit_recovers_known_parameters)
{
    const op_rate truth = {.t0 = 16e-6, .t_item = 20e-9, .flop_frac = 0.65, .byte_frac = 0.7, .blend = 3};
    gpu_spec g = gpu_builtin("h100");
    write_table("mla_prefill.tsv", 0, &truth, &g);
    rate_point *p;
    int n;
    char err[512];
    cr_assert_eq(published_rate_points(scratch_dir, RC_MLA_PREFILL, &g, &p, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 6 * 12 * 2 * 2, "both cache dtypes: 6 batches x 12 prompts x 2 head counts x 2, got %d", n);
    op_rate r = {3e-6, 1e-9, 0.8, 0.8, 2, 1, 1e-6};
    fit_summary s;
    cr_assert_eq(fit_op_rate(p, n, &r, &s, err, sizeof err), 0, "%s", err);
    free(p);
    cr_expect_lt(s.worst_abs_err, 1e-3, "worst %g", s.worst_abs_err);
    expect_recovered(&r, &truth, 0);
}

Test(mla, a_set_without_mla_tables_has_no_points)
{
    gpu_spec g = gpu_builtin("h100");
    rate_point *p;
    int n = -1;
    char err[512];
    cr_assert_eq(published_rate_points(scratch_dir, RC_MLA_DECODE_BF16, &g, &p, &n, err, sizeof err), 0, "%s", err);
    cr_expect_eq(n, 0);
    free(p);
}

/* A calibration without the latent attention classes (vLLM's sets hold only
 * whole MLA modules) prices the absorbed decode kernel in its decode
 * attention class: the kernel streams the cached latent, one read per
 * sequence, as a GQA decode kernel streams K and V, not as prefill's
 * compute-bound tiles (whose fitted byte share is not a streaming rate).
 * Kimi-K2.5 at TP 8: 64 sequences, 1536 cached positions, 8 heads, bf16.
 * Scores: pairs = 1536 + 1 = 1537; FLOPs 2 x 64 x 8 x 576 x 1537 + 5 x 64 x 8 x 1537
 * = 906,559,488 + 3,934,720 = 910,494,208; bytes: the latent 64 x 1537 x 576 x 2
 * = 113,319,936 plus Q 64 x 8 x 576 x 2 = 589,824.  A decode class of t0 10 us,
 * no items, no tail, flop share 1, byte share 0.5, blend 1 at span 1537 > 128:
 *     t = 10 us / 2 (half the kernel's fixed cost) + FLOP / peak + bytes / (0.5 bw). */
Test(mla, decode_without_its_class_prices_in_the_decode_attention_class)
{
    gpu_spec g = gpu_builtin("h200");
    rate_model r = {0};
    r.op[RC_ATTN_DECODE_BF16] = (op_rate){10e-6, 0, 1.0, 0.5, 1, 0, 0};
    r.has_op[RC_ATTN_DECODE_BF16] = 1;
    r.op[RC_ATTN_PREFILL] = (op_rate){20e-6, 0, 1.0, 0.25, 1, 0, 0};
    r.has_op[RC_ATTN_PREFILL] = 1;
    g.rates = &r;
    mla_shape k = {64, 1536, 1, 8, 512, 64, 128, 128, DT_BF16, DT_BF16, 1};
    op_cost a[2];
    mla_kernel_op_costs(&k, a);
    const double peak = gpu_peak_flops(&g, DT_BF16);
    const double flop = 910494208.0, bytes = 113319936.0 + 589824.0;
    const double hand = 5e-6 + flop / peak + bytes / (0.5 * g.mem_bw);
    const double got = price_op(&a[0], &g, peak, 1, NULL);
    cr_expect_float_eq(got, hand, 1e-9 * hand, "%g s against %g by hand", got, hand);
}
