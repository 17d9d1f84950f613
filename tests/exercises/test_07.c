/* Chapter 7 exercises: each expected number is derived by hand below from
 * the preprocessors' rules and the configs, never from the library's output. */
#include "07-images-as-tokens.h"

#include <math.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=07 ONLY=N). */
Test(ex07, e1_the_2880_trap)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 672 x 672: 2x2 grid = 48 x 48 features, nothing unpadded: 2304 + 48
     * newlines + 576 base = 2928, not 5 * 576 = 2880 */
    ex_check_int("7.1(a) LLaVA-NeXT tokens, 672 x 672", ex07_llava_next_tokens(672, 672), 2928);
    /* 1920 x 1080: 672x672 pinpoint; rows 1080 * 48/1920 = 27, padding 10 a
     * side: 28 rows: 28*48 + 28 + 576 = 1948 */
    ex_check_int("7.1(b) LLaVA-NeXT tokens, 1920 x 1080", ex07_llava_next_tokens(1920, 1080), 1948);
    /* 336 x 336: pinpoint 336x672 (first of the ties): 24 x 48, 12 columns
     * of padding a side: 24*24 + 24 + 576 = 1176 */
    ex_check_int("7.1(c) LLaVA-NeXT tokens, 336 x 336", ex07_llava_next_tokens(336, 336), 1176);
    /* 1024 x 768 (4:3): the 672x672 pinpoint; rows 768 * 48/1024 = 36, 6
     * padding rows a side cut: 36 * 48 + 36 + 576 = 2340 */
    ex_check_int("7.1(b) LLaVA-NeXT tokens, 1024 x 768", ex07_llava_next_tokens(1024, 768), 2340);
#endif
    ex_check_int("7.1 LLaVA-NeXT tokens, width 0", ex07_llava_next_tokens(0, 10), -1);
}

Test(ex07, e2_min_max_pixels_clamp)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* defaults: 39 x 69 = 2691 */
    ex_check_int("7.2(a) Qwen2-VL tokens, 1920 x 1080, default max_pixels",
                 ex07_qwen_tokens(1920, 1080, 3136, 12845056), 2691);
    /* max_pixels 1280*28*28 = 1,003,520: 1092*1932 is over; beta =
     * sqrt(2073600 / 1003520) = 1.43747; floor(1080/1.43747/28 = 26.8) = 26,
     * floor(1920/1.43747/28 = 47.7) = 47: 26 * 47 = 1222 */
    ex_check_int("7.2(a) Qwen2-VL tokens, 1920 x 1080, max_pixels 1280 x 28 x 28",
                 ex07_qwen_tokens(1920, 1080, 3136, 1280 * 28 * 28), 1222);
    /* 300 x 200 by default: round(7.14) = 7, round(10.7) = 11: 77 tokens */
    ex_check_int("7.2(b) Qwen2-VL tokens, 300 x 200, default min_pixels", ex07_qwen_tokens(300, 200, 3136, 12845056),
                 77);
    /* min_pixels 256*28*28 = 200,704: 196*308 = 60368 is under; beta =
     * sqrt(200704 / 60000) = 1.82895; ceil(200*1.82895/28 = 13.06) = 14,
     * ceil(300*1.82895/28 = 19.6) = 20: 280 */
    ex_check_int("7.2(b) Qwen2-VL tokens, 300 x 200, min_pixels 256 x 28 x 28",
                 ex07_qwen_tokens(300, 200, 256 * 28 * 28, 12845056), 280);
#endif
    ex_check_int("7.2 Qwen2-VL tokens, min_pixels 0 and max_pixels 100", ex07_qwen_tokens(300, 200, 0, 100), -1);
}

Test(ex07, e3_internvl_tiles)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 1920 x 1080 (1.78): 4x2 (aspect 2, 8 tiles) + thumbnail = 9 * 256 */
    ex_check_int("7.3(a) InternVL tokens, 1920 x 1080, up to 12 tiles", ex07_internvl_tokens(1920, 1080, 12), 2304);
    /* at most 6 tiles: 4x2 is out; 2x1 (aspect 2) is closest: 3 * 256 */
    ex_check_int("7.3(a) InternVL tokens, 1920 x 1080, up to 6 tiles", ex07_internvl_tokens(1920, 1080, 6), 768);
    /* 800 x 600 is exactly 4:3, and 4x3 = 12 tiles is allowed: 13 * 256 */
    ex_check_int("7.3(b) InternVL tokens, 800 x 600", ex07_internvl_tokens(800, 600, 12), 3328);
    /* 1440 x 900 (1.6): of the grids up to 12 tiles 3x2 (1.5) is closest: 7 * 256 */
    ex_check_int("7.3(a) InternVL tokens, 1440 x 900, up to 12 tiles", ex07_internvl_tokens(1440, 900, 12), 1792);
#endif
    ex_check_int("7.3 InternVL tokens, at most 0 tiles", ex07_internvl_tokens(800, 600, 0), -1);
}

Test(ex07, e4_cross_attention_tokens_are_not_context)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* one <|image|> token per image in the text */
    ex_check_int("7.4(a) self-attention prompt, one image", ex07_cross_context_tokens(100, 1), 101);
#endif
    ex_check_int("7.4 self-attention prompt, three images", ex07_cross_context_tokens(100, 3), 103);
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 1080p: 2x2 tiles of 1601 = 6404 cross tokens.  Self-attention KV per
     * token: 2 * 32 layers * 8 * 128 * 2 B = 131072; cross: 2 * 8 layers * 8 *
     * 128 * 2 B = 32768 per image token.
     * (101 + 256) * 131072 + 6404 * 32768 = 46,792,704 + 209,846,272 */
    ex_check_rel("7.4(b) KV bytes of the request, 1080p image", ex07_cross_request_kv_bytes(100, 256, 1, 1920, 1080),
                 256638976.0, 1e-12);
    /* 560 x 560: one tile: 357 * 131072 + 1601 * 32768 */
    ex_check_rel("7.4(c) KV bytes of the request, 560 x 560 image", ex07_cross_request_kv_bytes(100, 256, 1, 560, 560),
                 357 * 131072.0 + 1601 * 32768.0, 1e-12);
#endif
    ex_check_nan("7.4 -1 images", ex07_cross_request_kv_bytes(100, 256, -1, 560, 560),
                 "a count of images cannot be negative");
}

Test(ex07, e5_vit_flops_by_hand)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* CLIP ViT-L/14-336: P = 24 (4 * 1024^2 + 2 * 1024 * 4096) = 301,989,888;
     * 2 P * 577 + 4 * 24 * 577^2 * 1024 = 348,496,330,752 + 32,728,252,416
     * = 381,224,583,168 */
    ex_check_rel("7.5(a) CLIP ViT-L/14-336 FLOPs", ex07_vit_flops(24, 1024, 4096, 577), 381224583168.0, 1e-12);
#endif
    ex_check_nan("7.5 a ViT of 0 layers", ex07_vit_flops(0, 1024, 4096, 577), "a ViT needs at least one layer");
}

Test(ex07, e6_does_tp_speed_up_the_vit)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* Qwen2.5-VL-7B, 1080p, H100 at peak (989.4 TFLOP/s; compute-bound).
     * FLOPs (test_vision.c): 2*32*19686400*10764 + 2*1505280*10764
     * + 4*10764*1280*(4*10764 + 28*64) + 2*(5120*5120 + 5120*3584)*2691 */
    double n = 10764;
    double flop = 2 * 32 * 19686400.0 * n + 2 * 1505280.0 * n + 4 * n * 1280 * (4 * n + 28 * 64) +
                  2 * (5120.0 * 5120 + 5120.0 * 3584) * (n / 4); /* the projector: 2 x 2 patches merged */
    double t1 = flop / 989.4e12;
    ex_check_rel("7.6(a) encoder seconds, one image, one GPU",
                 ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 1, 1, 0), t1, 1e-9);
    /* four images on 4 GPUs, one each: one image's time */
    ex_check_rel("7.6(b) encoder seconds, four images, one a GPU",
                 ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 4, 4, 0), t1, 1e-9);
    /* sharded over 4: a quarter of the compute plus 2 * 32 all-reduces of
     * 10764 * 1280 * 2 B = 27.55584 MB, each 4.8 us + 1.5 * 27.55584e6 / 450e9 */
    double ar = 4.8e-6 + 1.5 * 27.55584e6 / 450e9;
    double shard = t1 / 4 + 64 * ar;
    ex_check_rel("7.6(a) encoder seconds, one image sharded over 4",
                 ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 1, 4, 1), shard, 1e-9);
    ex_check_rel("7.6(b) encoder seconds, four images each sharded over 4",
                 ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 4, 4, 1), 4 * shard, 1e-9);
#endif
    ex_check_nan("7.6 GPU \"tpu\"", ex07_encoder_seconds("qwen2.5-vl-7b", "tpu", 1920, 1080, 1, 1, 0),
                 "not a GPU in the table");
}

Test(ex07, e7_requests_per_prefill_step)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* text: 8192 / 200 = 40; one 1080p image for Qwen2-VL: 200 + 2691 = 2891,
     * 8192 / 2891 = 2; three: 8273 > 8192: 0 (chunked) */
    ex_check_int("7.7(a) text-only prompts per step", ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 0, 200, 8192),
                 40);
    ex_check_int("7.7(b) Qwen2-VL prompts per step, one image",
                 ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 1, 200, 8192), 2);
    ex_check_int("7.7(b) Qwen2-VL prompts per step, three images",
                 ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 3, 200, 8192), 0);
    /* LLaVA-1.5: 200 + 3 * 576 = 1928: 4; Llama 3.2: 203 tokens: 40 */
    ex_check_int("7.7(c) LLaVA-1.5 prompts per step, three images",
                 ex07_requests_per_step("llava-1.5-7b", 1920, 1080, 3, 200, 8192), 4);
    ex_check_int("7.7(c) Llama 3.2 Vision prompts per step, three images",
                 ex07_requests_per_step("llama3.2-11b-vision", 1920, 1080, 3, 200, 8192), 40);
#endif
    ex_check_int("7.7 model \"nope\" (not in the table)", ex07_requests_per_step("nope", 1920, 1080, 3, 200, 8192), -1);
}

/* The variant of $NB_SEED (make exercise N=07 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_07.h"

EX_VARIANT_TEST(ex07, e2_variant, 7, kit_answers_07, 2)
EX_VARIANT_TEST(ex07, e4_variant, 7, kit_answers_07, 4)
EX_VARIANT_TEST(ex07, e5_variant, 7, kit_answers_07, 5)
EX_VARIANT_TEST(ex07, e7_variant, 7, kit_answers_07, 7)
EX_VARIANT_TEST(ex07, e1_variant, 7, kit_answers_07, 1)
EX_VARIANT_TEST(ex07, e3_variant, 7, kit_answers_07, 3)
EX_VARIANT_TEST(ex07, e6_variant, 7, kit_answers_07, 6)
