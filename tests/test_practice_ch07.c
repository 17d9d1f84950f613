/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 7's exercise variants: seed 0 is the printed book (answers worked
 * by hand below from the exercise text and the configs), and for 200 seeds
 * the inputs stay in range, the answers are judged as tests/practice_seeds.h
 * says, and each exercise keeps its regime: the request fits, the shares
 * are shares, the prompts per step fall as images are added. */
#include "practice_seeds.h"

#include <string.h>

#define expect_rel(got, want, rel)                                                                        \
    do {                                                                                                  \
        double g_ = (got), w_ = (want);                                                                   \
        cr_expect(fabs(g_ - w_) <= (rel) * fabs(w_), "%s: got %.10g, want %.10g", #got, g_, w_);          \
    } while (0)
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
    cr_expect_eq(s.n_parts, 17);
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
    const struct {
        const char *id;
        double given;
        const char *word;
    } slips[] = {{"7.4(a)", 6504, "cross-attention"}, {"7.4(a)", 100, "<|image|>"},
                 {"7.4(b1)", 886.2, "cross-attention layers"}, {"7.4(b1)", 46.66, "cross-attention KV"},
                 {"7.5(a)", 364.9, "4, not 2"},       {"7.5(a)", 348.5, "attention term"},
                 {"7.5(c)", 4, "square"},             {"7.7(a)", 41, "round down"},
                 {"7.7(b1)", 3, "text tokens"},        {"7.2(a1)", 10764, "28 x 28"},
                 {"7.2(a2)", 1280, "rounds down"},     {"7.2(b1)", 77, "grows it"}};
    for (size_t i = 0; i < sizeof slips / sizeof slips[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, slips[i].id)->judge, slips[i].given);
        cr_expect_eq(r.verdict, VERDICT_SLIP, "%s: %g judged %s", slips[i].id, slips[i].given,
                     judge_verdict_name(r.verdict));
        cr_expect(strstr(r.hint, slips[i].word) != NULL, "%s: hint '%s'", slips[i].id, r.hint);
    }
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
        if (kv != last)
            distinct++;
        last = kv;
    }
    cr_expect(distinct >= 50, "only %d changes of 7.4 in 201 seeds", distinct);
    cr_expect(slips > 1000, "only %d slips checked", slips);
}
