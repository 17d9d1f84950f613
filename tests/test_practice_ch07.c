/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 7's exercise variants: seed 0 is the printed book (answers worked
 * by hand below from the exercise text and the configs), and for 200 seeds
 * the inputs stay in range, the answers are judged as tests/practice_seeds.h
 * says, and each exercise keeps its regime: the request fits, the shares
 * are shares, the prompts per step fall as images are added. */
#include "practice_seeds.h"

#include <string.h>

#include "specs.h"

/* Qwen2-VL's smart_resize, worked here from the preprocessor's definition
 * independently of the library: each side to the nearest multiple of 28
 * (half to even), then, past max_pixels, both scaled by sqrt(h w / max) and
 * floored to 28 px, or, under min_pixels, scaled up and ceiled; a token per
 * 28 x 28 px. */
static double qwen_by_hand(double w, double h, double min_pixels, double max_pixels)
{
    double hb = nearbyint(h / 28) * 28, wb = nearbyint(w / 28) * 28;
    if (hb * wb > max_pixels) {
        double beta = sqrt(h * w / max_pixels);
        hb = fmax(28, floor(h / beta / 28) * 28), wb = fmax(28, floor(w / beta / 28) * 28);
    } else if (hb * wb < min_pixels) {
        double beta = sqrt(min_pixels / (h * w));
        hb = ceil(h * beta / 28) * 28, wb = ceil(w * beta / 28) * 28;
    }
    return (hb / 28) * (wb / 28);
}

/* LLaVA-NeXT's anyres count, worked here from the released preprocessor
 * (select_best_resolution, unpad_image) independently of the library: the
 * pinpoint (height, width) that keeps the most pixels, then the least
 * waste, the first of any tie; its grid of 24 features a 336 px tile; the
 * padding rows or columns cut; a newline a row; the base image's 576. */
static double llava_next_by_hand(double w, double h)
{
    const int pin[5][2] = {{336, 672}, {672, 336}, {672, 672}, {1008, 336}, {336, 1008}};
    int best = 0;
    double keep = -1, waste = 0;
    for (int i = 0; i < 5; i++) {
        double scale = fmin(pin[i][1] / w, pin[i][0] / h);
        double eff = fmin(floor(w * scale) * floor(h * scale), w * h), wasted = pin[i][0] * pin[i][1] - eff;
        if (eff > keep || (eff == keep && wasted < waste))
            best = i, keep = eff, waste = wasted;
    }
    double rows = pin[best][0] / 336 * 24, cols = pin[best][1] / 336 * 24;
    if (w / h > cols / rows)
        rows -= 2 * floor((rows - floor(h * (cols / w))) / 2);
    else
        cols -= 2 * floor((cols - floor(w * (rows / h))) / 2);
    return rows * cols + rows + 576;
}

/* InternVL2.5's dynamic tiling, worked from its dynamic_preprocess: the
 * grid i x j (i j <= max_tiles) whose aspect is closest to the image's,
 * a tie going to the larger grid when the image has more than half its
 * pixels; 256 tokens a 448 px tile, and a thumbnail past one tile. */
static double internvl_by_hand(double w, double h, int max_tiles)
{
    double aspect = w / h, best_diff = 1e9;
    int bi = 1, bj = 1;
    for (int n = 1; n <= max_tiles; n++) /* grids in order of their tiles */
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++) {
                if (i * j != n)
                    continue;
                double diff = fabs(aspect - (double)i / j);
                if (diff < best_diff)
                    best_diff = diff, bi = i, bj = j;
                else if (diff == best_diff && w * h > 0.5 * 448 * 448 * i * j)
                    bi = i, bj = j;
            }
    return 256.0 * (bi * bj + (bi * bj > 1));
}

/* Qwen2.5-VL-7B's encoder over n patches at a GPU's bf16 peak (the
 * derivation of test_07.c's 7.6): 32 layers of 19,686,400 parameters, the
 * 1,505,280 of the patch embedding, full attention in 4 layers and 64-patch
 * windows in 28, the projector on n / 4 merged tokens. */
static double qwen25_encoder_flop(double n)
{
    return 2 * 32 * 19686400.0 * n + 2 * 1505280.0 * n + 4 * n * 1280 * (4 * n + 28 * 64) +
           2 * (5120.0 * 5120 + 5120.0 * 3584) * (n / 4);
}

/* Sharded over tp: a tp-th of the compute, and 2 x 32 ring all-reduces of
 * n x 1280 x 2 B, each the link's latency plus 2 (tp - 1) / tp of the bytes
 * over its bandwidth. */
static double qwen25_sharded(double n, double peak, double link_bw, double latency, int tp)
{
    return qwen25_encoder_flop(n) / peak / tp + 64 * (latency + 2.0 * (tp - 1) / tp * n * 1280 * 2 / link_bw);
}

Test(practice_ch07, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(7, 0, &s), 0);
    /* Qwen2-VL, 1920 x 1080: 39 x 69 = 2691 tokens; under 1280 x 28 x 28 =
     * 1,003,520 px, beta = sqrt(2,073,600 / 1,003,520) = 1.43747: floor(26.8)
     * = 26 by floor(47.7) = 47, 1222.  The 300 x 200 icon: 7 x 11 = 77; grown
     * to 256 x 28 x 28 = 200,704 px, beta = 1.82895: ceil(13.06) = 14 by
     * ceil(19.6) = 20, 280 */
    cr_expect_eq(seeds_input_of(&s, "ch07_ex2_width"), 1920);
    cr_expect_eq(seeds_input_of(&s, "ch07_ex2_height"), 1080);
    cr_expect_eq(seeds_input_of(&s, "ch07_ex2_cap"), 1280);
    cr_expect_eq(seeds_input_of(&s, "ch07_ex2_icon_w"), 300);
    cr_expect_eq(seeds_input_of(&s, "ch07_ex2_icon_h"), 200);
    cr_expect_eq(seeds_answer_of(&s, "7.2(a1)"), 2691);
    cr_expect_eq(seeds_answer_of(&s, "7.2(a2)"), 1222);
    cr_expect_eq(seeds_answer_of(&s, "7.2(b1)"), 280);
    cr_expect_eq(seeds_answer_of(&s, "7.2(b2)"), 77);
    cr_expect_eq(seeds_input_of(&s, "ch07_ex4_text_tokens"), 100);
    cr_expect_eq(seeds_input_of(&s, "ch07_ex4_output_tokens"), 256);
    /* Llama-3.2-11B-Vision: one <|image|> token; a 1080p image is 2 x 2 tiles
     * of 1601 tokens = 6404 in cross-attention KV.  Self-attention KV per
     * token 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B; cross
     * 2 x 8 layers x 8 x 128 x 2 B = 32,768 B per image token.
     * (101 + 256) x 131072 = 46,792,704; 6404 x 32768 = 209,846,272;
     * 256,638,976 B in all, the image 81.767 % of it.  One 560 px tile:
     * 46,792,704 + 1601 x 32768 = 99,254,272.  No image: 356 x 131072 =
     * 46,661,632 */
    cr_expect_eq(seeds_answer_of(&s, "7.4(a)"), 101);
    expect_rel(seeds_answer_of(&s, "7.4(b1)"), 256.638976, 1e-12);
    expect_rel(seeds_answer_of(&s, "7.4(b2)"), 100 * 209846272.0 / 256638976.0, 1e-12);
    expect_rel(seeds_answer_of(&s, "7.4(c1)"), 99.254272, 1e-12);
    expect_rel(seeds_answer_of(&s, "7.4(c2)"), 46.661632, 1e-12);
    /* CLIP ViT-L/14 at 336 px: 24 x 24 patches + 1 = 577 tokens.  P = 24 x
     * (4 x 1024^2 + 2 x 1024 x 4096) = 301,989,888; 2 P 577 = 348,496,330,752,
     * 4 x 24 x 577^2 x 1024 = 32,728,252,416: 381,224,583,168 FLOP, 8.585 %
     * attention.  Four tiles as one sequence, 2305 tokens: 2 P 2305 =
     * 1,392,173,383,680 + 4 x 24 x 2305^2 x 1024 = 522,291,609,600 =
     * 1,914,464,993,280: 5.02188 passes */
    cr_expect_eq(seeds_input_of(&s, "ch07_ex5_side"), 336);
    cr_expect_eq(seeds_input_of(&s, "ch07_ex5_tokens"), 577);
    cr_expect_eq(seeds_input_of(&s, "ch07_ex5_patches"), 576);
    expect_rel(seeds_answer_of(&s, "7.5(a)"), 381.224583168, 1e-12);
    expect_rel(seeds_answer_of(&s, "7.5(b)"), 100 * 32728252416.0 / 381224583168.0, 1e-12);
    expect_rel(seeds_answer_of(&s, "7.5(c)"), 1914464993280.0 / 381224583168.0, 1e-12);
    /* 8192 tokens a step, 200 of text: 40 text prompts (40.96); Qwen2-VL's
     * 1080p image is 39 x 69 = 2691 tokens: 8192 / 2891 = 2.83 -> 2, three
     * images 8273 > 8192 -> 0; LLaVA-1.5 200 + 3 x 576 = 1928 -> 4;
     * Llama 3.2 Vision 203 -> 40 */
    cr_expect_eq(seeds_input_of(&s, "ch07_ex7_budget"), 8192);
    cr_expect_eq(seeds_input_of(&s, "ch07_ex7_text_tokens"), 200);
    cr_expect_eq(seeds_answer_of(&s, "7.7(a)"), 40);
    cr_expect_eq(seeds_answer_of(&s, "7.7(b1)"), 2);
    cr_expect_eq(seeds_answer_of(&s, "7.7(b2)"), 0);
    cr_expect_eq(seeds_answer_of(&s, "7.7(c1)"), 4);
    cr_expect_eq(seeds_answer_of(&s, "7.7(c2)"), 40);
    /* 7.1: 672 x 672 is one 48 x 48 grid with a newline a row and the base
     * image: 2304 + 48 + 576 = 2928; 1920 x 1080 on the same pinpoint keeps
     * 28 rows: 28 x 48 + 28 + 576 = 1948; 336 x 336 on 336 x 672, 24 columns
     * kept: 576 + 24 + 576 = 1176 */
    cr_expect_eq(seeds_answer_of(&s, "7.1(a)"), 2928);
    cr_expect_eq(seeds_answer_of(&s, "7.1(b)"), 1948);
    cr_expect_eq(seeds_answer_of(&s, "7.1(c)"), 1176);
    /* 7.3: 1920 x 1080 (1.78) on 4 x 2 tiles and a thumbnail, 9 x 256 = 2304;
     * up to 6, 2 x 1 and a thumbnail, 768; 800 x 600 on 4 x 3, 13 x 256 = 3328 */
    cr_expect_eq(seeds_answer_of(&s, "7.3(a1)"), 2304);
    cr_expect_eq(seeds_answer_of(&s, "7.3(a2)"), 768);
    cr_expect_eq(seeds_answer_of(&s, "7.3(b)"), 3328);
    /* 7.6: 1920 x 1080 is 78 x 138 = 10,764 patches; at 989.4 TFLOP/s; the
     * L40S at 362.05 TFLOP/s over PCIe (32 GB/s, 20 us) */
    double t1 = qwen25_encoder_flop(10764) / 989.4e12;
    expect_rel(seeds_answer_of(&s, "7.6(a1)"), 1e3 * t1, 1e-9);
    expect_rel(seeds_answer_of(&s, "7.6(a2)"), 1e3 * qwen25_sharded(10764, 989.4e12, 450e9, 4.8e-6, 2), 1e-9);
    expect_rel(seeds_answer_of(&s, "7.6(a3)"), 1e3 * qwen25_sharded(10764, 989.4e12, 450e9, 4.8e-6, 4), 1e-9);
    expect_rel(seeds_answer_of(&s, "7.6(b1)"), 1e3 * t1, 1e-9);
    expect_rel(seeds_answer_of(&s, "7.6(b2)"), 4e3 * qwen25_sharded(10764, 989.4e12, 450e9, 4.8e-6, 4), 1e-9);
    expect_rel(seeds_answer_of(&s, "7.6(c1)"), 1e3 * qwen25_sharded(10764, 362.05e12, 32e9, 20e-6, 4), 1e-9);
    expect_rel(seeds_answer_of(&s, "7.6(c2)"), 1e3 * qwen25_encoder_flop(10764) / 362.05e12, 1e-9);
    cr_expect_eq(s.n_parts, 30);
}

Test(practice_ch07, hand_answers_to_three_figures_pass)
{
    practice_set s;
    practice_build(7, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"7.4(a)", 101},   {"7.4(b1)", 257}, {"7.4(b2)", 81.8}, {"7.4(c1)", 99.3}, {"7.4(c2)", 46.7},
                {"7.5(a)", 381},   {"7.5(b)", 8.59}, {"7.5(c)", 5.02},  {"7.7(a)", 40},    {"7.7(b1)", 2},
                {"7.7(b2)", 0},    {"7.7(c1)", 4},   {"7.7(c2)", 40},
                {"7.2(a1)", 2691}, {"7.2(a2)", 1222}, {"7.2(b1)", 280}, {"7.2(b2)", 77}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
}

Test(practice_ch07, part_slips_are_recognised)
{
    practice_set s;
    practice_build(7, 0, &s);
    /* 6404 image tokens in the prompt: 6504; the image's tokens at all 32
     * layers: 46,792,704 + 6404 x 131072 = 886.18 MB; text-only KV for the
     * request: 46.66 MB; attention without its factor 2: 348.50 + 16.36 =
     * 364.86 GFLOP; four tiles as four passes: 4; rounding 8192 / 200 up: 41 */
    const seeds_slip slips[] = {{"7.4(a)", 6504, "cross-attention"}, {"7.4(a)", 100, "<|image|>"},
                 {"7.4(b1)", 886.2, "cross-attention layers"}, {"7.4(b1)", 46.66, "cross-attention KV"},
                 {"7.5(a)", 364.9, "4, not 2"},       {"7.5(a)", 348.5, "attention term"},
                 {"7.5(c)", 4, "square"},             {"7.7(a)", 41, "round down"},
                 {"7.7(b1)", 3, "text tokens"},        {"7.2(a1)", 10764, "28 x 28"},
                 {"7.2(a2)", 1280, "rounds down"},     {"7.2(b1)", 77, "grows it"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch07, two_hundred_seeds_stay_meaningful)
{
    int slips = 0, distinct = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s;
        cr_assert_eq(practice_build(7, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        if (seed > 0) {
            practice_set again;
            practice_build(7, seed, &again);
            seeds_check_set(&s, &again);
        }
        slips += seeds_check_slips(&s);
        /* 7.2: the counts by hand; the lower max_pixels shrinks the image,
         * min_pixels grows the icon */
        double w = seeds_input_of(&s, "ch07_ex2_width"), h = seeds_input_of(&s, "ch07_ex2_height");
        double cap = seeds_input_of(&s, "ch07_ex2_cap") * 784;
        double iw = seeds_input_of(&s, "ch07_ex2_icon_w"), ih = seeds_input_of(&s, "ch07_ex2_icon_h");
        cr_expect_eq(seeds_answer_of(&s, "7.2(a1)"), qwen_by_hand(w, h, 3136, 12845056), "seed %llu", (unsigned long long)seed);
        cr_expect_eq(seeds_answer_of(&s, "7.2(a2)"), qwen_by_hand(w, h, 3136, cap), "seed %llu", (unsigned long long)seed);
        cr_expect_eq(seeds_answer_of(&s, "7.2(b1)"), qwen_by_hand(iw, ih, 200704, 12845056));
        cr_expect_eq(seeds_answer_of(&s, "7.2(b2)"), qwen_by_hand(iw, ih, 3136, 12845056));
        cr_expect(seeds_answer_of(&s, "7.2(a2)") < seeds_answer_of(&s, "7.2(a1)"));
        cr_expect(seeds_answer_of(&s, "7.2(b1)") > seeds_answer_of(&s, "7.2(b2)"));
        /* 7.4: the request's KV is under a GB (it fits beside the weights:
         * practice_build fails otherwise); the image's share is a share; a
         * smaller image and no image hold less */
        double kv = seeds_answer_of(&s, "7.4(b1)");
        cr_expect(kv > 0 && kv < 1000, "seed %llu: %g MB", (unsigned long long)seed, kv);
        double share = seeds_answer_of(&s, "7.4(b2)");
        cr_expect(share > 0 && share < 100);
        cr_expect(seeds_answer_of(&s, "7.4(c2)") < seeds_answer_of(&s, "7.4(c1)"));
        cr_expect(seeds_answer_of(&s, "7.4(c1)") < kv);
        /* 7.5: a square of 14 px patches plus the class token; one sequence
         * of four tiles costs between the linear 4 and the quadratic 16 */
        double side = seeds_input_of(&s, "ch07_ex5_side");
        cr_expect_eq(seeds_input_of(&s, "ch07_ex5_patches"), (side / 14) * (side / 14));
        cr_expect_eq(seeds_input_of(&s, "ch07_ex5_tokens"), seeds_input_of(&s, "ch07_ex5_patches") + 1);
        double x4 = seeds_answer_of(&s, "7.5(c)");
        cr_expect(x4 > 4 && x4 < 16, "seed %llu: %g", (unsigned long long)seed, x4);
        /* 7.7: more image tokens, fewer prompts; at least one text prompt per step */
        cr_expect(seeds_answer_of(&s, "7.7(a)") >= seeds_answer_of(&s, "7.7(c2)"));
        cr_expect(seeds_answer_of(&s, "7.7(c2)") > seeds_answer_of(&s, "7.7(c1)"));
        cr_expect(seeds_answer_of(&s, "7.7(b1)") >= seeds_answer_of(&s, "7.7(b2)"));
        cr_expect(seeds_answer_of(&s, "7.7(b1)") >= 1);
        /* 7.1: the printed squares, and a wide screenshot by hand, under the square's count */
        double w1 = seeds_input_of(&s, "ch07_ex1_width"), h1 = seeds_input_of(&s, "ch07_ex1_height");
        cr_expect(w1 > h1);
        cr_expect_eq(seeds_answer_of(&s, "7.1(b)"), llava_next_by_hand(w1, h1), "seed %llu: %g x %g",
                     (unsigned long long)seed, w1, h1);
        cr_expect(seeds_answer_of(&s, "7.1(b)") < seeds_answer_of(&s, "7.1(a)"));
        cr_expect_eq(seeds_answer_of(&s, "7.1(a)"), llava_next_by_hand(672, 672));
        cr_expect_eq(seeds_answer_of(&s, "7.1(c)"), llava_next_by_hand(336, 336));
        /* 7.3: by hand; the 4:3 photo outgrows the screenshot */
        double w3 = seeds_input_of(&s, "ch07_ex3_width"), h3 = seeds_input_of(&s, "ch07_ex3_height");
        int cap3 = (int)seeds_input_of(&s, "ch07_ex3_cap");
        double pw = seeds_input_of(&s, "ch07_ex3_photo_w"), ph = seeds_input_of(&s, "ch07_ex3_photo_h");
        cr_expect_eq(seeds_answer_of(&s, "7.3(a1)"), internvl_by_hand(w3, h3, 12), "seed %llu", (unsigned long long)seed);
        cr_expect_eq(seeds_answer_of(&s, "7.3(a2)"), internvl_by_hand(w3, h3, cap3), "seed %llu",
                     (unsigned long long)seed);
        cr_expect_eq(seeds_answer_of(&s, "7.3(b)"), internvl_by_hand(pw, ph, 12));
        cr_expect(pw * ph < w3 * h3 && seeds_answer_of(&s, "7.3(b)") > seeds_answer_of(&s, "7.3(a1)"));
        /* 7.6: by hand to the tolerance (windows at the image's edge pad);
         * sharding never reaches tp times, and over PCIe it loses */
        double w6 = seeds_input_of(&s, "ch07_ex6_width"), h6 = seeds_input_of(&s, "ch07_ex6_height");
        double n6 = nearbyint(h6 / 28) * 2 * nearbyint(w6 / 28) * 2;
        expect_rel(seeds_answer_of(&s, "7.6(a1)"), 1e3 * qwen25_encoder_flop(n6) / 989.4e12, 0.01);
        expect_rel(seeds_answer_of(&s, "7.6(a3)"), 1e3 * qwen25_sharded(n6, 989.4e12, 450e9, 4.8e-6, 4), 0.01);
        expect_rel(seeds_answer_of(&s, "7.6(c1)"), 1e3 * qwen25_sharded(n6, 362.05e12, 32e9, 20e-6, 4), 0.01);
        cr_expect(seeds_answer_of(&s, "7.6(a3)") > seeds_answer_of(&s, "7.6(a1)") / 4);
        cr_expect(seeds_answer_of(&s, "7.6(b1)") < seeds_answer_of(&s, "7.6(b2)"));
        cr_expect(seeds_answer_of(&s, "7.6(c1)") > seeds_answer_of(&s, "7.6(c2)"));
        if (kv != last)
            distinct++;
        last = kv;
    }
    cr_expect(distinct >= 50, "only %d changes of 7.4 in 201 seeds", distinct);
    cr_expect(slips > 1000, "only %d slips checked", slips);
}
