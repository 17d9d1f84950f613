/* Chapter 7 exercises: each expected number is derived by hand below from
 * the preprocessors' rules and the configs, never from the library's output. */
#include "07-images-as-tokens.h"

#include <criterion/criterion.h>
#include <math.h>

/* |got - want| <= tol * |want|; false for NAN, so an untouched kit fails. */
#define assert_rel(got, want, tol)                                                                         \
    do {                                                                                                   \
        double g_ = (got), w_ = (want);                                                                    \
        cr_assert(fabs(g_ - w_) <= (tol) * fabs(w_), "got %.10g, want %.10g (rel tol %g)", g_, w_, (double)(tol)); \
    } while (0)

Test(ex07, the_2880_trap)
{
    /* 672 x 672: 2x2 grid = 48 x 48 features, nothing unpadded: 2304 + 48
     * newlines + 576 base = 2928, not 5 * 576 = 2880 */
    cr_assert_eq(ex07_llava_next_tokens(672, 672), 2928);
    /* 1920 x 1080: 672x672 pinpoint; rows 1080 * 48/1920 = 27, padding 10 a
     * side: 28 rows: 28*48 + 28 + 576 = 1948 */
    cr_assert_eq(ex07_llava_next_tokens(1920, 1080), 1948);
    /* 336 x 336: pinpoint 336x672 (first of the ties): 24 x 48, 12 columns
     * of padding a side: 24*24 + 24 + 576 = 1176 */
    cr_assert_eq(ex07_llava_next_tokens(336, 336), 1176);
    cr_assert_eq(ex07_llava_next_tokens(0, 10), -1);
}

Test(ex07, min_max_pixels_clamp)
{
    /* defaults: 39 x 69 = 2691 */
    cr_assert_eq(ex07_qwen_tokens(1920, 1080, 3136, 12845056), 2691);
    /* max_pixels 1280*28*28 = 1,003,520: 1092*1932 is over; beta =
     * sqrt(2073600 / 1003520) = 1.43747; floor(1080/1.43747/28 = 26.8) = 26,
     * floor(1920/1.43747/28 = 47.7) = 47: 26 * 47 = 1222 */
    cr_assert_eq(ex07_qwen_tokens(1920, 1080, 3136, 1280 * 28 * 28), 1222);
    /* 300 x 200 by default: round(7.14) = 7, round(10.7) = 11: 77 tokens */
    cr_assert_eq(ex07_qwen_tokens(300, 200, 3136, 12845056), 77);
    /* min_pixels 256*28*28 = 200,704: 196*308 = 60368 is under; beta =
     * sqrt(200704 / 60000) = 1.82895; ceil(200*1.82895/28 = 13.06) = 14,
     * ceil(300*1.82895/28 = 19.6) = 20: 280 */
    cr_assert_eq(ex07_qwen_tokens(300, 200, 256 * 28 * 28, 12845056), 280);
    cr_assert_eq(ex07_qwen_tokens(300, 200, 0, 100), -1);
}

Test(ex07, internvl_tiles)
{
    /* 1920 x 1080 (1.78): 4x2 (aspect 2, 8 tiles) + thumbnail = 9 * 256 */
    cr_assert_eq(ex07_internvl_tokens(1920, 1080, 12), 2304);
    /* at most 6 tiles: 4x2 is out; 2x1 (aspect 2) is closest: 3 * 256 */
    cr_assert_eq(ex07_internvl_tokens(1920, 1080, 6), 768);
    /* 800 x 600 is exactly 4:3, and 4x3 = 12 tiles is allowed: 13 * 256 */
    cr_assert_eq(ex07_internvl_tokens(800, 600, 12), 3328);
    cr_assert_eq(ex07_internvl_tokens(800, 600, 0), -1);
}

Test(ex07, cross_attention_tokens_are_not_context)
{
    /* one <|image|> token per image in the text */
    cr_assert_eq(ex07_cross_context_tokens(100, 1), 101);
    cr_assert_eq(ex07_cross_context_tokens(100, 3), 103);
    /* 1080p: 2x2 tiles of 1601 = 6404 cross tokens.  Self-attention KV per
     * token: 2 * 32 layers * 8 * 128 * 2 B = 131072; cross: 2 * 8 layers * 8 *
     * 128 * 2 B = 32768 per image token.
     * (101 + 256) * 131072 + 6404 * 32768 = 46,792,704 + 209,846,272 */
    assert_rel(ex07_cross_request_kv_bytes(100, 256, 1, 1920, 1080), 256638976.0, 1e-12);
    /* 560 x 560: one tile: 357 * 131072 + 1601 * 32768 */
    assert_rel(ex07_cross_request_kv_bytes(100, 256, 1, 560, 560), 357 * 131072.0 + 1601 * 32768.0, 1e-12);
    cr_assert(isnan(ex07_cross_request_kv_bytes(100, 256, -1, 560, 560)));
}

Test(ex07, vit_flops_by_hand)
{
    /* CLIP ViT-L/14-336: P = 24 (4 * 1024^2 + 2 * 1024 * 4096) = 301,989,888;
     * 2 P * 577 + 4 * 24 * 577^2 * 1024 = 348,496,330,752 + 32,728,252,416
     * = 381,224,583,168 */
    assert_rel(ex07_vit_flops(24, 1024, 4096, 577), 381224583168.0, 1e-12);
    cr_assert(isnan(ex07_vit_flops(0, 1024, 4096, 577)));
}

Test(ex07, does_tp_speed_up_the_vit)
{
    /* Qwen2.5-VL-7B, 1080p, H100 at peak (989.4 TFLOP/s; compute-bound).
     * FLOPs (test_vision.c): 2*32*19686400*10764 + 2*1505280*10764
     * + 4*10764*1280*(4*10764 + 28*64) + 2*(5120*5120 + 5120*3584)*2691 */
    double n = 10764;
    double flop = 2 * 32 * 19686400.0 * n + 2 * 1505280.0 * n + 4 * n * 1280 * (4 * n + 28 * 64) +
                  2 * (5120.0 * 5120 + 5120.0 * 3584) * 2691;
    double t1 = flop / 989.4e12;
    assert_rel(ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 1, 1, 0), t1, 1e-9);
    /* four images on 4 GPUs, one each: one image's time */
    assert_rel(ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 4, 4, 0), t1, 1e-9);
    /* sharded over 4: a quarter of the compute plus 2 * 32 all-reduces of
     * 10764 * 1280 * 2 B = 27.55584 MB, each 4.8 us + 1.5 * 27.55584e6 / 450e9 */
    double ar = 4.8e-6 + 1.5 * 27.55584e6 / 450e9;
    double shard = t1 / 4 + 64 * ar;
    assert_rel(ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 1, 4, 1), shard, 1e-9);
    assert_rel(ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 4, 4, 1), 4 * shard, 1e-9);
    cr_assert(isnan(ex07_encoder_seconds("qwen2.5-vl-7b", "tpu", 1920, 1080, 1, 1, 0)));
}

Test(ex07, requests_per_prefill_step)
{
    /* text: 8192 / 200 = 40; one 1080p image for Qwen2-VL: 200 + 2691 = 2891,
     * 8192 / 2891 = 2; three: 8273 > 8192: 0 (chunked) */
    cr_assert_eq(ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 0, 200, 8192), 40);
    cr_assert_eq(ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 1, 200, 8192), 2);
    cr_assert_eq(ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 3, 200, 8192), 0);
    /* LLaVA-1.5: 200 + 3 * 576 = 1928: 4; Llama 3.2: 203 tokens: 40 */
    cr_assert_eq(ex07_requests_per_step("llava-1.5-7b", 1920, 1080, 3, 200, 8192), 4);
    cr_assert_eq(ex07_requests_per_step("llama3.2-11b-vision", 1920, 1080, 3, 200, 8192), 40);
    cr_assert_eq(ex07_requests_per_step("nope", 1920, 1080, 3, 200, 8192), -1);
}
