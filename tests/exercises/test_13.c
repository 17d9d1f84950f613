/* Chapter 13 exercises: each expected number is derived by hand below from
 * the models' config files and the GPU table, never from the library's
 * output. */
#include "13-serving-todays-models.h"

#include <math.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=13 ONLY=N). */
Test(ex13, e1_whose_cache)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 61 x 576 x 2 x 8192 = 575,668,224 */
    ex_check_rel("13.1(a) DeepSeek-V3, one 8k sequence", ex13_kv_bytes_per_sequence("deepseek-v3", "bf16", 8192),
                 575668224.0, 1e-12);
    /* 2 x 94 x 4 x 128 x 2 x 8192 = 1,577,058,304 */
    ex_check_rel("13.1(b) Qwen3-235B-A22B", ex13_kv_bytes_per_sequence("qwen3-235b-a22b", "bf16", 8192),
                 1577058304.0, 1e-12);
    /* 2 x 8 x 64 x 2 x (18 x 8192 + 18 x 128) = 2048 x 149,760 = 306,708,480 */
    ex_check_rel("13.1(c) gpt-oss-120b", ex13_kv_bytes_per_sequence("gpt-oss-120b", "bf16", 8192), 306708480.0,
                 1e-12);
#endif
    ex_check_nan("13.1 an unknown model", ex13_kv_bytes_per_sequence("gpt-5", "bf16", 8192), "no such row");
}

/* fp8; H200 usable 0.9 x 143,771 MiB = 135.68 GB; an 8k sequence 61 x 576
 * x 8192 = 287,834,112 B; the activation reserve about 1.6 GB (tp 1) or
 * 0.3 GB (tp 8).  Weights per GPU with the experts over n: 671,026,404,352
 * - 653,908,770,816 (1 - 1/n): n = 4, 180.6 GB (too many); n = 8, 98.9 GB;
 * n = 16, 58.0 GB.  (a) 8 x 16 sequences: 98.9 + 4.6 + 1.6 < 135.7; TP 8:
 * 83.9 + 36.8 + 0.3 = 121.0 < 135.7, TP 4: 167.8 (no).  (b) EP 8 with 64
 * each: 98.9 + 18.4 + 1.6 = 118.9 fits; TP n holds all 512 latents, 147.4
 * GB, on every GPU: none.  (c) EP 8 with 128 each: 98.9 + 36.8 + 1.6 =
 * 137.3 > 135.7; EP 16: 58.0 + 18.4 + 1.6 fits. */
Test(ex13, e2_h200s_for_deepseek)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    ex_check_int("13.2(a) H200s, experts spread, 128 requests", ex13_h200s_for_deepseek(128, 8192, "ep"), 8);
    ex_check_int("13.2(a) H200s, tensor parallel, 128 requests", ex13_h200s_for_deepseek(128, 8192, "tp"), 8);
    ex_check_int("13.2(b) H200s, experts spread, 512 requests", ex13_h200s_for_deepseek(512, 8192, "ep"), 8);
    ex_check_int("13.2(b) H200s, tensor parallel, 512 requests", ex13_h200s_for_deepseek(512, 8192, "tp"), -1);
    ex_check_int("13.2(c) H200s, experts spread, 1,024 requests", ex13_h200s_for_deepseek(1024, 8192, "ep"), 16);
#endif
    ex_check_int("13.2 a layout that does not exist", ex13_h200s_for_deepseek(128, 8192, "pp"), -1);
}

Test(ex13, e3_experts_touched)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 256 (1 - (31/32)^64) = 256 (1 - 0.131084) = 222.442 */
    ex_check_near("13.3(a) experts 64 tokens touch", ex13_experts_touched(256, 8, 64), 222.4425, 1e-3);
    /* ln 0.1 / ln(31/32) = 72.52 -> 73;  ln 0.1 / ln(120/128) = 35.68 -> 36 */
    ex_check_int("13.3(b) tokens to touch 90%", ex13_tokens_to_cover(256, 8, 0.9), 73);
    ex_check_int("13.3(c) the same for 128 experts, top 8", ex13_tokens_to_cover(128, 8, 0.9), 36);
#endif
    ex_check_near("13.3 one token touches k", ex13_experts_touched(256, 8, 1), 8, 1e-9);
    ex_check_nan("13.3 top 9 of 8", ex13_experts_touched(8, 9, 4), "k exceeds the experts");
}

Test(ex13, e4_all_to_all)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* EP 8: a GPU holds 32 of 256 experts; a uniform top-8 misses it with
     * probability C(224,8)/C(256,8) = prod_{i<8} (224-i)/(256-i) = 0.338168500, so a token
     * reaches 8 x 0.661831500 = 5.294652 GPUs, 7/8 of them others: 4.6328205;
     * x 64 tokens x 7168 B = 2,125,315.67 B (unmerged: 64 x 8 x 7/8 x 7168 = 3,211,264).
     * EP 32: 8 experts a GPU, missed with prod (248-i)/(256-i) = 0.772912503; 32 x 0.227087497
     * x 31/32 = 7.0397124 others; x 64 x 7168 = 3,229,482.15 B. */
    ex_check_rel("13.4(a) dispatch bytes, one node", ex13_dispatch_bytes(64, 256, 8, 7168, 8, 1), 2125315.67, 1e-8);
    ex_check_rel("13.4(b) dispatch bytes, 32 GPUs", ex13_dispatch_bytes(64, 256, 8, 7168, 32, 1), 3229482.15, 1e-8);
    /* one expert a GPU, top 1: a token reaches exactly one GPU, another with probability 7/8: 7/8 x 10 x 4 */
    ex_check_near("13.4 top 1 of 8 over 8", ex13_dispatch_bytes(10, 8, 1, 4, 8, 1), 35, 1e-9);
#endif
    ex_check_near("13.4 nothing leaves a group of one", ex13_dispatch_bytes(64, 256, 8, 7168, 1, 1), 0, 0);
    ex_check_nan("13.4 experts not spread evenly", ex13_dispatch_bytes(64, 256, 8, 7168, 3, 1), "256 over 3 GPUs");
}

Test(ex13, e5_when_disaggregation_wins)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 0.025 + 99 x 0.2 / 511 = 0.025 + 0.0387476 = 0.0637476 */
    ex_check_near("13.5(a) aggregated TPOT", ex13_aggregated_tpot(0.2, 0.025, 100, 512), 0.0637476, 1e-6);
    /* prefill 2 / 0.2 = 10; decode 2 x 100 / (511 x 0.025) = 15.656: 10 */
    ex_check_near("13.5(b) the 8 + 8 split, requests/s", ex13_disagg_requests_per_s(0.2, 0.025, 100, 512, 8, 8, 4),
                  10, 1e-9);
    /* 4 x 100 / (20 + 12.775) = 12.2045 */
    ex_check_near("13.5(c) four aggregated replicas, requests/s",
                  ex13_aggregated_requests_per_s(0.2, 0.025, 100, 512, 16, 4), 400 / 32.775, 1e-9);
#endif
    ex_check_nan("13.5 a pool smaller than an instance", ex13_disagg_requests_per_s(0.2, 0.025, 100, 512, 2, 8, 4),
                 "not one instance");
}

Test(ex13, e6_shared_system_prompt)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 60e9 / (4352 x 131072 = 570,425,344) = 105.18 */
    ex_check_int("13.6(a) without prefix caching", ex13_prefix_max_concurrency(60e9, 131072, 4096, 256, 3072, 0), 105);
    /* (60e9 - 402,653,184) / (1280 x 131072 = 167,772,160) = 355.22 */
    ex_check_int("13.6(b) every request hits", ex13_prefix_max_concurrency(60e9, 131072, 4096, 256, 3072, 1), 355);
    /* own 4352 - 2764 = 1588: 59,597,346,816 / 208,142,336 = 286.33 */
    ex_check_int("13.6(c) 90% hit", ex13_prefix_max_concurrency(60e9, 131072, 4096, 256, 3072, 0.9), 286);
#endif
    ex_check_int("13.6 a prefix as long as the prompt", ex13_prefix_max_concurrency(60e9, 131072, 4096, 256, 4096, 1),
                 -1);
}

/* The variant of $NB_SEED (make exercise N=13 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_13.h"

EX_VARIANT_TEST(ex13, e1_variant, 13, kit_answers_13, 1)

Test(ex13, e2_variant)
{
    practice_set s = ex_variant(13);
    ex_check_kit_answers(&s, kit_answers_13(&s, 2));
    /* (b2): with tensor parallelism every GPU holds every sequence's latent,
     * more than an H200 has at the variant's load, whatever the degree */
    int mid = (int)ex_input(&s, "ch13_ex2_mid"), ctx = (int)ex_input(&s, "ch13_ex2_context");
    ex_check_int("13.2(b2) H200s, tensor parallel, the second load (-1: none fits)",
                 ex13_h200s_for_deepseek(mid, ctx, "tp"), -1);
}

EX_VARIANT_TEST(ex13, e3_variant, 13, kit_answers_13, 3)
EX_VARIANT_TEST(ex13, e4_variant, 13, kit_answers_13, 4)
EX_VARIANT_TEST(ex13, e5_variant, 13, kit_answers_13, 5)
EX_VARIANT_TEST(ex13, e6_variant, 13, kit_answers_13, 6)
