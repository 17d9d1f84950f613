/* The `napkin image` subcommand: tokens and KV against hand arithmetic, the
 * TTFT adding up, and its errors (exit 2 naming the flag, exit 1 when one
 * request does not fit, naming the most images that do). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_run.h"


#define assert_rel(got, want, tol)                                                                          \
    do {                                                                                                    \
        double g_ = (got), w_ = (want);                                                                     \
        cr_assert(fabs(g_ - w_) <= (tol) * fabs(w_), "got %.10g, want %.10g", g_, w_);                     \
    } while (0)

Test(cli_image, qwen_1080p_two_images_tp2)
{
    char out[OUT_MAX];
    cr_assert_eq(run("image --model qwen2-vl-7b --width 1920 --height 1080 --images 2 --text-tokens 200 "
                     "--gpu h100 --tp 2 --preprocess 0.05 --format tsv", out, sizeof out), 0, "%s", out);
    /* round(1080/28) = 39, round(1920/28) = 69: 1092 x 1932 px, 2691 tokens */
    cr_assert_eq(tsv_value(out, "resized_width"), 1932);
    cr_assert_eq(tsv_value(out, "resized_height"), 1092);
    cr_assert_eq(tsv_value(out, "tokens_per_image"), 2691);
    /* each image sits between <|vision_start|> and <|vision_end|>: 2691 + 2 in the prompt;
     * 200 + 2 * 2693 = 5586; + 256 output = 5842 */
    cr_assert_eq(tsv_value(out, "context_tokens_per_image"), 2693);
    cr_assert_eq(tsv_value(out, "prompt_tokens"), 5586);
    cr_assert_eq(tsv_value(out, "context_tokens"), 5842);
    /* Qwen2 7B KV per token: 2 * 28 layers * 4 KV heads * 128 * 2 B = 57,344 */
    assert_rel(tsv_value(out, "kv_per_request"), 5842 * 57344.0, 1e-12);
    assert_rel(tsv_value(out, "text_kv_per_request"), 456 * 57344.0, 1e-12);
    /* the two images run one on each GPU: the request's encoder time is one
     * image's plus a small all-gather, not two images' */
    double one = tsv_value(out, "encoder_time_image"), req = tsv_value(out, "encoder_time");
    cr_assert(req > one && req < 1.1 * one, "encoder %g vs one image %g", req, one);
    /* TTFT adds up: preprocessing + encoder + prefill */
    assert_rel(tsv_value(out, "ttft"), 0.05 + req + tsv_value(out, "prefill_time"), 1e-9);
    /* at tp 2 each GPU holds half of every sequence's KV */
    double budget = tsv_value(out, "kv_budget");
    cr_assert_eq(tsv_value(out, "max_batch"), floor(budget / (5838 * 57344.0 / 2)));
    /* 8192 / 5582 = 1 request per prefill step */
    cr_assert_eq(tsv_value(out, "budget_requests"), 1);
}

Test(cli_image, families_by_hand)
{
    char out[OUT_MAX];
    /* LLaVA-1.5: 576 whatever the size; the encoder by hand (test_vision):
     * 2*23*12582912*577 + 2*602112*576 + 4*23*577^2*1024 + 2*20971520*576 */
    cr_assert_eq(run("image --model llava-1.5-7b --width 640 --height 480 --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_eq(tsv_value(out, "tokens_per_image"), 576);
    double flop = 2.0 * 23 * 12582912 * 577 + 2.0 * 602112 * 576 + 4.0 * 23 * 577 * 577 * 1024 + 2.0 * 20971520 * 576;
    assert_rel(tsv_value(out, "encoder_flop"), flop, 1e-12);
    /* LLaVA-NeXT at 672 x 672: 48*48 + 48 + 576 = 2928 (not 5 * 576) */
    cr_assert_eq(run("image --model llava-next-7b --width 672 --height 672 --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_eq(tsv_value(out, "tokens_per_image"), 2928);
    /* InternVL2.5 at 1920 x 1080: 4x2 tiles + thumbnail = 9 * 256 */
    cr_assert_eq(run("image --model internvl2.5-8b --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_eq(tsv_value(out, "tokens_per_image"), 2304);
    /* Llama 3.2 Vision: 4 tiles * 1601 in cross-attention KV, 1 token in the text */
    cr_assert_eq(run("image --model llama3.2-11b-vision --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_eq(tsv_value(out, "cross_tokens"), 6404);
    cr_assert_eq(tsv_value(out, "prompt_tokens"), 201);
    cr_assert(strstr(out, "cross-attention layers") != NULL);
}

Test(cli_image, max_pixels_clamp_is_stated)
{
    char out[OUT_MAX];
    /* 20000^2: round(714.3) = 714 -> 19992^2 > 12845056; beta = sqrt(4e8 /
     * 12845056) = 5.58036; floor(20000 / 5.58036 / 28 = 127.998) = 127: 3556 px,
     * 127^2 = 16129 tokens */
    cr_assert_eq(run("image --model qwen2-vl-7b --width 20000 --height 20000 --ttft-target 60 --format tsv", out,
                     sizeof out), 0, "%s", out);
    cr_assert_eq(tsv_value(out, "resized_width"), 3556);
    cr_assert_eq(tsv_value(out, "tokens_per_image"), 16129);
    cr_assert(strstr(out, "exceeds max_pixels") != NULL, "%s", out);
}

Test(cli_image, bad_input_names_the_flag)
{
    char out[OUT_MAX];
    cr_assert_eq(run("image --width 0", out, sizeof out), 2);
    cr_assert(strstr(out, "--width") != NULL, "%s", out);
    cr_assert_eq(run("image --height 200000", out, sizeof out), 2);
    cr_assert(strstr(out, "--height") != NULL, "%s", out);
    cr_assert_eq(run("image --model gpt4v", out, sizeof out), 2);
    cr_assert(strstr(out, "qwen2-vl-7b") && strstr(out, "llava-1.5-7b"), "%s", out);
    cr_assert_eq(run("image --width 10000 --height 20", out, sizeof out), 2);
    cr_assert(strstr(out, "aspect ratio") != NULL, "%s", out);
    cr_assert_eq(run("image --tp 3", out, sizeof out), 2);
    cr_assert_eq(run("image --ttft-target 0", out, sizeof out), 2);
    cr_assert_eq(run("image --preprocess x", out, sizeof out), 2);
    /* seconds from 0 to 3600, in the one number syntax of every flag: no sign, no hex */
    cr_assert_eq(run("image --preprocess 3601", out, sizeof out), 2);
    cr_assert(strstr(out, "--preprocess") && strstr(out, "0 to 3600"), "%s", out);
    cr_assert_eq(run("image --preprocess +1", out, sizeof out), 2);
    cr_assert_eq(run("image --ttft-target 0x1", out, sizeof out), 2);
    cr_assert(strstr(out, "--ttft-target") != NULL, "%s", out);
    cr_assert_eq(run("image --images 0 --text-tokens 0", out, sizeof out), 2);
    cr_assert_eq(run("image --gpu tpu", out, sizeof out), 2);
    cr_assert_eq(run("image --help", out, sizeof out), 0);
    cr_assert(strstr(out, "usage: napkin image") && strstr(out, "--format"), "%s", out);
}

Test(cli_image, a_request_that_does_not_fit_exits_1)
{
    char out[OUT_MAX];
    /* 1000 images of 4000 x 4000 = 16384 tokens each: 16.4 M tokens of KV */
    cr_assert_eq(run("image --model qwen2-vl-7b --images 1000 --width 4000 --height 4000", out, sizeof out), 1, "%s",
                 out);
    cr_assert(strstr(out, "does not fit") && strstr(out, "the most images per request that fit is"), "%s", out);
    /* and the named count does fit while one more does not */
    const char *p = strstr(out, "fit is ");
    int most = atoi(p + 7);
    char args[256];
    snprintf(args, sizeof args, "image --model qwen2-vl-7b --images %d --width 4000 --height 4000 --ttft-target 600",
             most);
    cr_assert_eq(run(args, out, sizeof out), 0, "%s", out);
    snprintf(args, sizeof args, "image --model qwen2-vl-7b --images %d --width 4000 --height 4000", most + 1);
    cr_assert_eq(run(args, out, sizeof out), 1, "%s", out);
}

Test(cli_image, json_and_text_only)
{
    char out[OUT_MAX];
    cr_assert_eq(run("image --model internvl2.5-8b --format json", out, sizeof out), 0, "%s", out);
    cr_assert_eq(out[0], '{');
    cr_assert(strstr(out, "\"compare\": [") != NULL);
    /* --images 0: no encoder section, the request is its text */
    cr_assert_eq(run("image --images 0 --text-tokens 300 --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_eq(tsv_value(out, "prompt_tokens"), 300);
    cr_assert(strstr(out, "encoder_flop") == NULL);
}
