/* Chapter 7's calibration on the one published measurement (vLLM issue
 * #41267: Qwen2.5-VL-7B, one H100, one 1080p image, 2718 prompt tokens,
 * prefill 0.126 s, 0.167 s of a 0.293 s TTFT outside it), checked from the
 * chapter's own program down: the model must give back its calibration
 * point, the efficiency is a share of the FLOP rate, and the prompt counts
 * each image's delimiters. */
#include <criterion/criterion.h>
#include <math.h>

#include "chapter_values.h"
#include "specs.h"
#include "vision.h"

#define NEAR(a, b, tol)                                                                                    \
    cr_assert(fabs((a) - (b)) <= (tol), "%s = %.9g, expected %.9g (abs. tol. %g)", #a, (double)(a), (double)(b), \
              (double)(tol))

/* A roofline ratio (41.9 / 126 = 33%) applied to the FLOP rate alone gives
 * 37.4 / 0.333 + 4.5 = 116.9 ms, not the 126 it came from; the calibrated
 * model must reproduce 167, 126 and 293 ms. */
Test(ch07, calibration_gives_back_its_point)
{
    NEAR(chapter_value("ch07/images", "ch07_m_cal_enc_ms"), 167, 0);
    NEAR(chapter_value("ch07/images", "ch07_m_cal_pre_ms"), 126, 0);
    NEAR(chapter_value("ch07/images", "ch07_m_cal_ttft_ms"), 293, 0);
}

/* 37.0 TFLOP at 989.4 TFLOP/s is 37.40 ms; the memory-bound rest (4.5 ms)
 * keeps its bandwidth, so the FLOPs ran at 37.4 / (126 - 4.5) = 30.8% of
 * peak, not 33%. */
Test(ch07, prefill_efficiency_is_a_share_of_the_flop_rate)
{
    double flop_ms = chapter_value("ch07/images", "ch07_m_pre_flop_ms");
    double mem_ms = chapter_value("ch07/images", "ch07_m_pre_mem_ms");
    NEAR(flop_ms, 37.0e12 / 989.4e12 * 1e3, 0.1);
    NEAR(chapter_value("ch07/images", "ch07_m_lm_eff_pct"), 100 * flop_ms / (126 - mem_ms), 0.15);
    NEAR(chapter_value("ch07/images", "ch07_m_lm_ratio_pct"), 100 * (flop_ms + mem_ms) / 126, 0.6);
}

/* 1920 x 1080 -> 1932 x 1092 px, 69 x 39 = 2691 tokens, between
 * <|vision_start|> and <|vision_end|>: 2693 in the prompt, and the measured
 * 2718 leaves 25 text and other special tokens. */
Test(ch07, prompt_counts_the_delimiters)
{
    NEAR(chapter_value("ch07/images", "ch07_tok1080_qwen2vl"), 2691, 0);
    NEAR(chapter_value("ch07/images", "ch07_delims"), 2, 0);
    NEAR(chapter_value("ch07/images", "ch07_m_text"), 25, 0);
    NEAR(chapter_value("ch07/images", "ch07_m_prompt"), 2718, 0);
    vision_spec v;
    cr_assert_eq(vision_lookup("llava-1.5-7b", &v), 0);
    cr_assert_eq(vision_delimiter_tokens(&v), 0, "LLaVA's features replace its <image> token");
    cr_assert_eq(vision_lookup("internvl2.5-8b", &v), 0);
    cr_assert_eq(vision_delimiter_tokens(&v), 2, "<img> and </img>");
}

/* A measured time shorter than the roofline at peak has no efficiency. */
Test(ch07, calibration_refuses_a_time_faster_than_peak)
{
    gpu_spec g = gpu_builtin("h100");
    vision_spec v;
    model_spec m;
    cr_assert_eq(vision_lookup("qwen2.5-vl-7b", &v), 0);
    cr_assert_eq(vision_lm_lookup(&v, &m), 0);
    vision_request q = vision_request_default(&v, &m, &g);
    double ee, le;
    char err[256];
    cr_assert_eq(vision_calibrate(&q, 1e-6, 0.126, &ee, &le, err, sizeof err), -1);
    cr_assert(strstr(err, "shorter than the roofline") != NULL, "%s", err);
    cr_assert_eq(vision_calibrate(&q, 0.167, 0.126, &ee, &le, err, sizeof err), 0, "%s", err);
    cr_assert(ee > 0 && ee < 1 && le > 0 && le < 1);
}
