/* Achieved rates (rates.h), their fits (fit.h) and the one pricing function
 * (pricing.h): synthetic tables with known parameters are recovered, the
 * formulas match hand arithmetic, and a GPU row without rates prices the
 * roofline exactly. */
#include "comm.h"
#include "fit.h"
#include "pricing_internal.h"
#include "rate_table.h"
#include "request.h"
#include "transformer.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(rates, achieved_rate_by_hand)
{
    /* t0 2 us, half the peak, half the bandwidth, q = 1 (no overlap):
     * 1e12 FLOP at 0.5 x 1e15 = 2 ms; 1e9 B at 0.5 x 1e12 = 2 ms; sum 4 ms + 2 us */
    op_rate r = {.t0 = 2e-6, .flop_frac = 0.5, .byte_frac = 0.5, .blend = 1};
    cr_assert_float_eq(op_rate_time(&r, 1e12, 1e9, 0, 0, 1e15, 1e12), 4.002e-3, 1e-12);
    /* q = 2: sqrt(2) x 2 ms = 2.828427 ms */
    r.blend = 2;
    cr_assert_float_eq(op_rate_time(&r, 1e12, 1e9, 0, 0, 1e15, 1e12), 2e-6 + 2e-3 * sqrt(2.0), 1e-12);
    /* a large q is the max: 64th root of 2 is 1.0109, so within 1.1 % of 2 ms */
    r.blend = 64;
    double t = op_rate_time(&r, 1e12, 1e9, 0, 0, 1e15, 1e12) - 2e-6;
    cr_assert(t > 2e-3 && t < 2e-3 * 1.011, "t %g", t);
    /* the fixed cost alone for no work */
    cr_assert_float_eq(op_rate_time(&r, 0, 0, 0, 0, 1e15, 1e12), 2e-6, 1e-18);
}

Test(rates, link_rate_picks_the_faster_line)
{
    /* one-shot 3 us + b / 100 GB/s; two-shot 20 us + b / 400 GB/s; they cross where
     * 3e-6 + b/1e11 = 20e-6 + b/4e11, b (1/1e11 - 1/4e11) = 17e-6, b = 17e-6 / 7.5e-12 = 2.2667 MB */
    link_rate l = {3e-6, 1e11, 20e-6, 4e11};
    cr_assert_float_eq(link_rate_time(&l, 1e3), 3e-6 + 1e3 / 1e11, 1e-15);
    cr_assert_float_eq(link_rate_time(&l, 1e8), 20e-6 + 1e8 / 4e11, 1e-12);
    double cross = 17e-6 / 7.5e-12;
    cr_assert_float_eq(link_rate_time(&l, cross), 3e-6 + cross / 1e11, 1e-12);
}

/* A synthetic GEMM table on an H100-like device: M 1..8192 against three
 * weight shapes, timed exactly by a rate with known parameters. */
static int synthetic_gemms(const op_rate *truth, rate_point *p)
{
    const double peak = 989.4e12, bw = 3.35e12;
    const int shapes[][2] = {{4096, 4096}, {4096, 28672}, {14336, 4096}, {1024, 8192}};
    int n = 0;
    for (int s = 0; s < 4; s++)
        for (int m = 1; m <= 8192; m *= 2) {
            op_cost op = gemm_op_cost(m, shapes[s][0], shapes[s][1], DT_BF16, DT_BF16, DT_BF16);
            double bytes = op_bytes(&op);
            p[n] = (rate_point){op.flop, bytes, peak, bw, op_rate_time(truth, op.flop, bytes, 0, 0, peak, bw), 0, 0, 0};
            n++;
        }
    return n;
}

Test(rates, gemm_fit_recovers_known_parameters)
{
    const op_rate truth = {.t0 = 3.6e-6, .flop_frac = 0.78, .byte_frac = 0.83, .blend = 3.9};
    rate_point p[64];
    int n = synthetic_gemms(&truth, p);
    op_rate r = {.t0 = 1e-6, .flop_frac = 0.5, .byte_frac = 0.5, .blend = 2}; /* a start far from the truth */
    fit_summary s;
    char err[256];
    cr_assert_eq(fit_op_rate(p, n, &r, &s, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.t0 / truth.t0, 1, 0.01, "t0 %g", r.t0);
    cr_assert_float_eq(r.flop_frac / truth.flop_frac, 1, 0.01, "flop_frac %g", r.flop_frac);
    cr_assert_float_eq(r.byte_frac / truth.byte_frac, 1, 0.01, "byte_frac %g", r.byte_frac);
    cr_assert_float_eq(r.blend / truth.blend, 1, 0.01, "blend %g", r.blend);
    cr_assert(s.worst_abs_err < 1e-3, "worst %g", s.worst_abs_err);
    cr_assert_eq(s.points, n);
}

Test(rates, a_kernel_timed_with_the_op_is_priced_apart)
{
    /* The table times each GEMM with a 6.5 us kernel of its own (a cast before it): measured =
     * op + 6.5 us.  Told so (extra), the fit recovers the op's own 3.6 us fixed cost; not told,
     * it folds the cast in, 3.6 + 6.5 = 10.1 us at the smallest sizes. */
    const op_rate truth = {.t0 = 3.6e-6, .flop_frac = 0.78, .byte_frac = 0.83, .blend = 3.9};
    rate_point p[64];
    int n = synthetic_gemms(&truth, p);
    for (int i = 0; i < n; i++) {
        p[i].time += 6.5e-6;
        p[i].extra = 6.5e-6;
    }
    op_rate r = {.t0 = 1e-6, .flop_frac = 0.5, .byte_frac = 0.5, .blend = 2};
    fit_summary s;
    char err[256];
    cr_assert_eq(fit_op_rate(p, n, &r, &s, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.t0 / truth.t0, 1, 0.01, "t0 %g", r.t0);
    cr_assert(s.median_abs_err < 1e-3, "%g", s.median_abs_err);
    for (int i = 0; i < n; i++)
        p[i].extra = 0;
    op_rate folded = {.t0 = 1e-6, .flop_frac = 0.5, .byte_frac = 0.5, .blend = 2};
    cr_assert_eq(fit_op_rate(p, n, &folded, &s, err, sizeof err), 0, "%s", err);
    cr_assert(folded.t0 > 8e-6, "t0 %g", folded.t0);
    /* a time priced apart that is not less than the time is refused */
    p[3].extra = p[3].time;
    cr_assert_eq(fit_op_rate(p, n, &r, &s, err, sizeof err), -1);
}

Test(rates, fit_converges_with_a_parameter_on_its_bound)
{
    /* kernels timed with a blend below 1 (slower than no overlap at all): the fit's best
     * blend is its lower bound, q = 1, and the descent must hold it there and settle in
     * tens of steps, not crawl along the bound to the iteration limit (300) */
    const op_rate truth = {.t0 = 5e-6, .flop_frac = 0.6, .byte_frac = 0.7, .blend = 0.7};
    rate_point p[64];
    int n = synthetic_gemms(&truth, p);
    op_rate r = {.t0 = 1e-6, .flop_frac = 0.5, .byte_frac = 0.5, .blend = 2};
    fit_summary s;
    char err[256];
    cr_assert_eq(fit_op_rate(p, n, &r, &s, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.blend, 1, 1e-3, "blend %.9g", r.blend);
    cr_assert(s.iterations < 100, "%d iterations", s.iterations);
}

Test(rates, gemm_fit_shrugs_off_outliers)
{
    /* a tenth of the kernels run 3x slow (a bad kernel choice): the soft-L1 loss
     * keeps the fit near the truth for the rest */
    const op_rate truth = {.t0 = 3.0e-6, .flop_frac = 0.75, .byte_frac = 0.85, .blend = 3};
    rate_point p[64];
    int n = synthetic_gemms(&truth, p);
    for (int i = 0; i < n; i += 10)
        p[i].time *= 3;
    op_rate r = {.t0 = 1e-6, .flop_frac = 0.5, .byte_frac = 0.5, .blend = 2};
    fit_summary s;
    char err[256];
    cr_assert_eq(fit_op_rate(p, n, &r, &s, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.byte_frac / truth.byte_frac, 1, 0.05, "byte_frac %g", r.byte_frac);
    cr_assert_float_eq(r.flop_frac / truth.flop_frac, 1, 0.05, "flop_frac %g", r.flop_frac);
    cr_assert(s.median_abs_err < 0.02, "median %g", s.median_abs_err);
}

Test(rates, decode_attention_regimes_by_hand)
{
    /* 1e8 B over 100 work items, no FLOPs, on 1e12 B/s: tm = 1e8 / (0.5 x 1e12) = 200 us;
     * the items' setup 100 x 10 ns = 1 us; one item's 1e6 B at a quarter of the bandwidth,
     * 1e6 / 2.5e11 = 4 us.  q = 64 is the max to double precision here ((1/200)^64 ~ 0). */
    op_rate r = {.t0 = 2e-6, .t_item = 1e-8, .flop_frac = 0.5, .byte_frac = 0.5, .blend = 64, .item_frac = 0.25,
                 .t_long = 3e-6};
    /* a short cache: the setup hides under the read; 2 + 4 + 200 us */
    cr_assert_float_eq(op_rate_time(&r, 0, 1e8, 100, 64, 1e15, 1e12), 206e-6, 1e-15);
    /* a long one: setup, the long path's 3 us and the read add; 2 + 4 + 3 + 1 + 200 us */
    cr_assert_float_eq(op_rate_time(&r, 0, 1e8, 100, 4096, 1e15, 1e12), 210e-6, 1e-15);
    /* no span: the formula of every other class, 2 + 1 + 200 us */
    cr_assert_float_eq(op_rate_time(&r, 0, 1e8, 100, 0, 1e15, 1e12), 203e-6, 1e-15);
}

Test(rates, fused_halves_price_the_whole_kernel)
{
    /* the cost model counts fused attention as two ops, each with half the bytes and
     * items and half the fixed costs: the two halves must sum to the kernel's time */
    op_rate r = {.t0 = 8e-6, .t_item = 3e-8, .flop_frac = 0.06, .byte_frac = 0.9, .blend = 2, .item_frac = 0.8,
                 .t_long = 3e-6};
    rate_model m;
    memset(&m, 0, sizeof m);
    m.op[RC_ATTN_DECODE_BF16] = r;
    m.has_op[RC_ATTN_DECODE_BF16] = 1;
    gpu_spec g = gpu_builtin("h100");
    g.rates = &m;
    const double flop = 4e9, bytes = 2e8, items = 64, peak = 989.4e12;
    for (double span = 100; span < 1e4; span *= 10) {
        double whole = op_rate_time(&r, flop, bytes, items, span, peak, g.mem_bw);
        double half = price_compute_items(&g, RC_ATTN_DECODE_BF16, flop / 2, bytes / 2, items / 2, span, peak, 0.5,
                                          NULL);
        cr_assert_float_eq(2 * half / whole, 1, 1e-12, "span %g: %g against %g", span, 2 * half, whole);
    }
}

Test(rates, attention_fit_recovers_the_work_item_cost)
{
    /* decode attention of 32 query / 8 KV heads over batches 1..1024 and contexts
     * 64..32k (both sides of the one-tile boundary), timed exactly by a rate whose work
     * items (a sequence's KV head) cost 25 ns each, one item drawing at most 90 % of the
     * bandwidth and a long cache costing 3 us more: the fit must find all seven */
    const op_rate truth = {.t0 = 9e-6,
                           .t_item = 25e-9,
                           .flop_frac = 0.3,
                           .byte_frac = 0.8,
                           .blend = 8,
                           .item_frac = 0.9,
                           .t_long = 3e-6};
    rate_point p[128];
    int n = 0;
    for (int b = 1; b <= 1024; b *= 4)
        for (int ctx = 64; ctx <= 32768; ctx *= 2) {
            op_cost a[2];
            attention_op_costs(b, ctx - 1, 1, 32, 8, 128, DT_BF16, DT_BF16, a);
            double flop = a[0].flop + a[1].flop, bytes = op_bytes(&a[0]) + op_bytes(&a[1]);
            double items = a[0].items + a[1].items; /* b x 8 */
            p[n++] = (rate_point){flop,  bytes, 989.4e12, 3.35e12, op_rate_time(&truth, flop, bytes, items, a[0].span,
                                                                                989.4e12, 3.35e12),
                                  items, a[0].span, 0};
        }
    cr_assert_float_eq(p[0].items, 8, 1e-12);
    cr_assert_float_eq(p[0].span, 64, 1e-12); /* the new token is the 64th position attended */
    op_rate r = {.t0 = 3e-6, .t_item = 1e-9, .flop_frac = 0.8, .byte_frac = 0.5, .blend = 2};
    fit_summary s;
    char err[256];
    cr_assert_eq(fit_op_rate(p, n, &r, &s, err, sizeof err), 0, "%s", err);
    cr_assert(s.worst_abs_err < 1e-3, "worst %g", s.worst_abs_err);
    cr_assert_float_eq(r.t_item / truth.t_item, 1, 0.01, "t_item %g", r.t_item);
    cr_assert_float_eq(r.byte_frac / truth.byte_frac, 1, 0.01, "byte_frac %g", r.byte_frac);
    cr_assert_float_eq(r.t0 / truth.t0, 1, 0.01, "t0 %g", r.t0);
    cr_assert_float_eq(r.item_frac / truth.item_frac, 1, 0.01, "item_frac %g", r.item_frac);
    cr_assert_float_eq(r.t_long / truth.t_long, 1, 0.01, "t_long %g", r.t_long);
}

Test(rates, fit_refuses_bad_points)
{
    rate_point p[8] = {{0}};
    op_rate r = {0};
    fit_summary s;
    char err[256];
    cr_assert_eq(fit_op_rate(p, 3, &r, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "cannot fit"), "%s", err);
    for (int i = 0; i < 8; i++)
        p[i] = (rate_point){1e9, 1e6, 1e15, 1e12, i == 5 ? 0 : 1e-5, 0, 0, 0};
    cr_assert_eq(fit_op_rate(p, 8, &r, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "point 6"), "%s", err);
}

Test(rates, link_fit_recovers_two_lines)
{
    const link_rate truth = {2.7e-6, 2.6e11, 30e-6, 3.3e11};
    link_point p[24];
    int n = 0;
    for (double b = 256; b <= 1.1e9; b *= 2)
        p[n] = (link_point){b, link_rate_time(&truth, b)}, n++;
    link_rate l;
    fit_summary s;
    char err[256];
    cr_assert_eq(fit_link_rate(p, n, &l, &s, err, sizeof err), 0, "%s", err);
    /* the curve is what the fit must reproduce: within 1 % at every point */
    cr_assert(s.worst_abs_err < 0.01, "worst %g", s.worst_abs_err);
    cr_assert_float_eq(l.latency1 / truth.latency1, 1, 0.01, "latency1 %g", l.latency1);
    cr_assert_float_eq(l.bandwidth2 / truth.bandwidth2, 1, 0.01, "bandwidth2 %g", l.bandwidth2);
}

Test(rates, summary_by_hand)
{
    double e[5] = {0.1, -0.3, 0.05, 0.2, -0.02};
    fit_summary s;
    summarize_errors(e, 5, &s);
    /* |e| sorted: 0.02 0.05 0.1 0.2 0.3; signed sorted: -0.3 -0.02 0.05 0.1 0.2 */
    cr_assert_float_eq(s.median_abs_err, 0.1, 1e-15);
    cr_assert_float_eq(s.worst_abs_err, 0.3, 1e-15);
    cr_assert_float_eq(s.median_err, 0.05, 1e-15);
}

Test(pricing, no_rates_is_the_roofline)
{
    gpu_spec g = gpu_builtin("h100");
    cr_assert_null(g.rates);
    bound_kind b1, b2;
    double peak = gpu_peak_flops(&g, DT_BF16);
    cr_assert_eq(price_compute(&g, RC_GEMM_BF16, 1e12, 1e9, peak, 1, &b1), roofline_time(1e12, 1e9, peak, g.mem_bw, &b2));
    cr_assert_eq(b1, b2);
}

Test(pricing, a_decode_step_with_rates_by_hand)
{
    /* rates with no fixed cost, byte share 0.5, a sharp blend: a memory-bound decode
     * step of LLaMA-3-8B at batch 1 takes about twice its roofline */
    rate_model m = {0};
    for (int c = 0; c < RC_COUNT; c++) {
        m.op[c] = (op_rate){.t0 = 1e-15, .flop_frac = 1.0, .byte_frac = 0.5, .blend = 64};
        m.has_op[c] = 1;
    }
    gpu_spec g = gpu_builtin("h100");
    model_spec mod = model_builtin("llama3-8b");
    step_shape s = decode_shape(1, 1024, 1, precision_uniform(DT_BF16));
    step_cost roof, cal;
    char err[256];
    cr_assert_eq(decoder_step_cost(&mod, &g, &s, &roof, err, sizeof err), 0, "%s", err);
    g.rates = &m;
    cr_assert_eq(decoder_step_cost(&mod, &g, &s, &cal, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(cal.time / roof.time, 2, 0.03, "ratio %g", cal.time / roof.time);
    /* the byte and FLOP counts do not change, only their price */
    cr_assert_eq(cal.bytes, roof.bytes);
    cr_assert_eq(cal.flop, roof.flop);
}

Test(pricing, fused_attention_halves_share_one_fixed_cost)
{
    /* decode attention for one short sequence is all fixed cost: 10 us in the rate,
     * 5 us on each of the two ops the cost model counts */
    rate_model m = {0};
    m.op[RC_ATTN_DECODE_BF16] = (op_rate){.t0 = 10e-6, .flop_frac = 1, .byte_frac = 1, .blend = 64};
    m.has_op[RC_ATTN_DECODE_BF16] = 1;
    op_cost a[2];
    attention_op_costs(1, 1, 1, 32, 8, 128, DT_BF16, DT_BF16, a);
    gpu_spec g = gpu_builtin("h100");
    g.rates = &m;
    double peak = gpu_peak_flops(&g, DT_BF16);
    double t = price_op(&a[0], &g, peak, 1, NULL) + price_op(&a[1], &g, peak, 1, NULL);
    /* bytes of each op: K (or V) of the 2 attended positions 2 x 8 x 128 x 2 = 4096, the new
     * token's written 2048, Q (or the output) 32 x 128 x 2 = 8192: 14,336 B; both 28,672 B,
     * 8.559 ns at 3.35 TB/s (their ~33 kFLOP take 0.03 ns at the peak and vanish in the blend) */
    cr_assert_float_eq(t, 10e-6 + 28672 / 3.35e12, 2e-12, "t %g", t);
}

Test(pricing, calibrated_allreduce_uses_the_tp_curve)
{
    rate_model m = {0};
    m.allreduce[rate_tp_slot(4)] = (link_rate){3e-6, 1e11, 25e-6, 2.3e11};
    m.has_allreduce[rate_tp_slot(4)] = 1;
    gpu_spec g = gpu_builtin("h100");
    g.rates = &m;
    /* 64 KiB at TP 4: the one-shot line, 3e-6 + 65536 / 1e11 = 3.65536 us */
    cr_assert_float_eq(price_allreduce(&g, 4, 65536), 3.65536e-6, 1e-12);
    /* an all-gather to 1 MB is priced as an all-reduce of 0.5 MB: 3e-6 + 5e5 / 1e11 = 8 us */
    cr_assert_float_eq(price_allgather(&g, 4, 1e6), 8e-6, 1e-12);
    /* TP 2 has no curve here: the ring of the GPU row (comm.h) */
    cr_assert_eq(price_allreduce(&g, 2, 65536), allreduce_time(&g, 2, 65536));
}

Test(request, closed_loop_ttft_by_hand)
{
    /* p = 20 ms prefill, d = 8 ms decode step, prefills busy 25 % of the time:
     * half a step 4 ms + M/D/1 wait 0.25 x 20 / (2 x 0.75) = 3.3333 ms + 20 ms = 27.3333 ms */
    cr_assert_float_eq(closed_loop_ttft(20e-3, 8e-3, 0.25), 27.33333333e-3, 1e-9);
    /* an idle prefill queue: half a step and the prefill */
    cr_assert_float_eq(closed_loop_ttft(20e-3, 8e-3, 0), 24e-3, 1e-15);
}

Test(rate_table, rows_round_trip)
{
    rate_model m = {0};
    snprintf(m.name, sizeof m.name, "test:one");
    snprintf(m.gpu, sizeof m.gpu, "h100");
    m.op[RC_GEMM_BF16] = (op_rate){.t0 = 3.5e-6, .flop_frac = 0.78, .byte_frac = 0.83, .blend = 3.9};
    m.has_op[RC_GEMM_BF16] = 1;
    m.allreduce[2] = (link_rate){3.2e-6, 4.2e10, 3.3e-5, 2.4e11};
    m.has_allreduce[2] = 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rate_model_write(f, &m, NULL, NULL, 1);
    fclose(f);
    rate_model back;
    char err[256];
    cr_assert_eq(rate_model_parse(buf, "mem", "test:one", &back, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(back.op[RC_GEMM_BF16].t0, 3.5e-6, 1e-12);
    cr_assert_float_eq(back.op[RC_GEMM_BF16].blend, 3.9, 1e-9);
    cr_assert_float_eq(back.allreduce[2].bandwidth2, 2.4e11, 1e3);
    cr_assert_eq(back.has_op[RC_GEMM_FP8], 0);
    cr_assert_eq(rate_model_parse(buf, "mem", "test:other", &back, err, sizeof err), 1);
    free(buf);
}

Test(rate_table, builtin_names_and_defaults)
{
    rate_model m;
    char err[512];
    cr_assert_eq(rate_model_builtin("published:h100_sxm/trtllm", &m, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(m.gpu, "h100");
    cr_assert(m.has_op[RC_GEMM_BF16] && m.has_op[RC_ATTN_DECODE_BF16] && m.has_allreduce[rate_tp_slot(8)]);
    cr_assert_eq(rate_model_default("h200", &m), 0);
    cr_assert_str_eq(m.name, "published:h200_sxm/trtllm");
    cr_assert_eq(rate_model_default("a100", &m), -1);
    cr_assert_eq(rate_model_builtin("published:nope", &m, err, sizeof err), -1);
    cr_assert(strstr(err, "published:h100_sxm/trtllm"), "%s", err);
}
