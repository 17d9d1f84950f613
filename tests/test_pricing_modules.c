/* The modules beyond the decoder price their work through pricing.h: one GEMM
 * (gemm_model), LoRA's shrink and expand, speculative heads, the vision
 * encoder and its all-reduces, a video request.  Each is checked against
 * hand arithmetic under a rate model built here with known parameters:
 *     t0 = 2 us, both achieved fractions 0.5, blend q = 64,
 *     all-reduce at TP 2: min(3 us + b / 100 GB/s, 20 us + b / 200 GB/s).
 * Halving both ceilings doubles every roofline term, so a lump of many
 * kernels (fixed share 0) takes 2 (tc^q + tm^q)^(1/q) -- twice its roofline
 * where one term dominates (the other's (r)^64 share is below 1e-30 for the
 * ratios r < 0.4 met here) -- and a single kernel adds t0. */
#include "gemm_model.h"
#include "lora.h"
#include "pricing.h"
#include "specdec.h"
#include "specs.h"
#include "video.h"
#include "vision.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

static rate_model known_rates(void)
{
    rate_model r;
    memset(&r, 0, sizeof r);
    strcpy(r.name, "test:known");
    for (int c = 0; c < RC_COUNT; c++) {
        r.op[c] = (op_rate){.t0 = 2e-6, .flop_frac = 0.5, .byte_frac = 0.5, .blend = 64};
        r.has_op[c] = 1;
    }
    r.allreduce[rate_tp_slot(2)] = (link_rate){3e-6, 100e9, 20e-6, 200e9};
    r.has_allreduce[rate_tp_slot(2)] = 1;
    return r;
}

static void assert_rel(double got, double want, double tol)
{
    cr_assert(fabs(got - want) <= tol * fabs(want), "got %.12g, want %.12g", got, want);
}

Test(pricing_modules, one_gemm_adds_its_fixed_cost)
{
    rate_model rm = known_rates();
    gpu_spec g;
    memset(&g, 0, sizeof g);
    g.mem_bw = 1e12;
    /* m 1, n = k = 4096, bf16 in and out: 2 x 4096^2 = 33,554,432 FLOP;
     * 2 (4096 + 4096^2) + 2 x 4096 = 33,570,816 B.  At 1 TB/s and 1 PFLOP/s:
     * roofline 33.570816 us (memory-bound); at half of each, 67.141632 us plus t0 = 69.141632 us. */
    bound_kind b;
    assert_rel(gemm_priced_time(&g, RC_GEMM_BF16, 1, 4096, 4096, 2, 2, 1e15, &b), 33.570816e-6, 1e-12);
    cr_assert_eq(b, BOUND_MEMORY);
    assert_rel(gemm_predicted_time(1, 4096, 4096, 2, 2, 1e15, 1e12, NULL), 33.570816e-6, 1e-12);
    g.rates = &rm;
    assert_rel(gemm_priced_time(&g, RC_GEMM_BF16, 1, 4096, 4096, 2, 2, 1e15, &b), 69.141632e-6, 1e-9);
    cr_assert_eq(b, BOUND_MEMORY); /* the roofline's verdict either way */
}

Test(pricing_modules, lora_ops_at_half_the_bandwidth_keep_one_launch_cost)
{
    rate_model rm = known_rates();
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    lora_config c = {&m, 16, LORA_TARGET(LORA_Q), DT_BF16, 1};
    precision p = precision_uniform(DT_BF16);
    lora_step_shape sh = {64, 4096, 8, 2e-6, 0};
    lora_step_cost roof, cal;
    char err[256];
    cr_assert_eq(lora_step_cost_compute(&g, p, &c, &sh, &roof, err, sizeof err), 0, "%s", err);
    g.rates = &rm;
    cr_assert_eq(lora_step_cost_compute(&g, p, &c, &sh, &cal, err, sizeof err), 0, "%s", err);
    /* test_lora.c works the bytes: q only, r 16, B 64, D 8: 1,574,912 B
     * (shrink) + 2,099,200 B (expand) a layer, memory-bound (5.3 and 4.0
     * FLOP/B against the ridge 295, unchanged when both ceilings halve), x 32
     * layers.  At half of 3.35 TB/s that is twice the roofline's time; the
     * kernels' fixed cost is --launch-us alone (2 us x 64), not t0 as well. */
    assert_rel(roof.time_ops, 32 * (1574912.0 + 2099200.0) / 3.35e12, 1e-12);
    assert_rel(cal.time_ops, 2 * 32 * (1574912.0 + 2099200.0) / 3.35e12, 1e-9);
    assert_rel(cal.time_launch, 64 * 2e-6, 1e-12);
    assert_rel(cal.time_launch, roof.time_launch, 0);
    /* the base step goes through price_op with the same rates: slower too */
    cr_assert(cal.base.time > roof.base.time);
}

Test(pricing_modules, spec_heads_are_a_lump_without_fixed_costs)
{
    rate_model rm = known_rates();
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    precision p = precision_uniform(DT_BF16);
    /* one residual head, hidden 4096: 4096^2 + 4096 = 16,781,312 parameters,
     * 2 B each = 33,562,624 B read and 2 x 16,781,312 FLOP for one token:
     * memory-bound, 33,562,624 / 3.35e12 = 10.0187 us; at half the bandwidth twice that */
    assert_rel(spec_heads_time(&m, &g, 1, 0, 1, 1, p), 33562624.0 / 3.35e12, 1e-12);
    g.rates = &rm;
    assert_rel(spec_heads_time(&m, &g, 1, 0, 1, 1, p), 2 * 33562624.0 / 3.35e12, 1e-9);
}

static vision_spec vision_row(const char *key)
{
    vision_spec v;
    cr_assert_eq(vision_lookup(key, &v), 0, "no vision row %s", key);
    return v;
}

Test(pricing_modules, vision_encoder_at_half_peak_and_the_all_reduce_curve)
{
    rate_model rm = known_rates();
    gpu_spec g = gpu_builtin("h100");
    vision_spec v = vision_row("qwen2.5-vl-7b");
    vision_image im;
    char err[256];
    cr_assert_eq(vision_image_tokens(&v, 1920, 1080, &im, err, sizeof err), 0, "%s", err);
    g.rates = &rm;
    vision_encoder_cost c;
    cr_assert_eq(vision_encoder_time(&v, &im, &g, precision_uniform(DT_BF16), 1.0, 2, &c, err, sizeof err), 0, "%s",
                 err);
    /* compute-bound (FLOP per byte in the thousands): FLOP / (0.5 x 989.4e12), no t0 for the lump */
    assert_rel(c.time, c.flop / (0.5 * 989.4e12), 1e-9);
    /* 2 x 32 all-reduces of 10764 x 1280 x 2 B = 27,555,840 B (test_vision.c):
     * one-shot 3 us + 275.5584 us, two-shot 20 us + 137.7792 us = 157.7792 us, the faster */
    assert_rel(c.time_comm, 64 * 157.7792e-6, 1e-9);
    assert_rel(c.time_sharded, c.time / 2 + 64 * 157.7792e-6, 1e-9);
}

Test(pricing_modules, video_lumps_double_at_half_the_ceilings)
{
    rate_model rm = known_rates();
    gpu_spec g = gpu_builtin("h100");
    video_model_table t;
    char err[256];
    cr_assert_eq(video_model_table_builtin(&t, err, sizeof err), 0, "%s", err);
    const video_model *w = NULL;
    for (int i = 0; i < t.n; i++)
        if (strcmp(t.rows[i].key, "wan2.1-14b") == 0)
            w = &t.rows[i];
    cr_assert(w != NULL);
    video_request r = video_request_default(w, &g);
    video_estimate roof, cal;
    cr_assert_eq(video_estimate_compute(&r, &roof, err, sizeof err), 0, "%s", err);
    gpu_spec gc = g;
    gc.rates = &rm;
    r.gpu = &gc;
    cr_assert_eq(video_estimate_compute(&r, &cal, err, sizeof err), 0, "%s", err);
    /* a forward is compute-bound by far (hundreds of TFLOP against 28 GB of
     * weights); the VAE is priced on its FLOPs alone: both exactly double */
    assert_rel(cal.t_forward, 2 * roof.t_forward, 1e-9);
    assert_rel(cal.t_vae, 2 * roof.t_vae, 1e-12);
    /* the text encoder may sit near its ridge: 2 max(tc, tm) <= t <= 2^(1 + 1/64) max(tc, tm) */
    cr_assert(cal.t_text >= 2 * roof.t_text * (1 - 1e-12) && cal.t_text <= pow(2, 1 + 1.0 / 64) * roof.t_text,
              "%g against %g", cal.t_text, roof.t_text);
    video_model_table_free(&t);
}
