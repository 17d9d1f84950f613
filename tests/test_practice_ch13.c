/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 13's exercise variants: seed 0 is the printed book (answers
 * worked by hand below from the exercise text and the configs), and for 200
 * seeds the inputs stay in range, the answers are judged as
 * tests/practice_seeds.h says, and each exercise keeps its shape: latent
 * attention's cache the smallest of full attention's, more experts need
 * more tokens, a cached prefix holds more requests. */
#include "practice_seeds.h"

#include <string.h>

Test(practice_ch13, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(13, 0, &s), 0);
    /* 8,192 tokens in bf16: DeepSeek-V3 61 x (512 + 64) x 2 x 8192 =
     * 575,668,224 B; Qwen3 2 x 94 x 4 x 128 x 2 x 8192 = 1,577,058,304;
     * gpt-oss 2 x 8 x 64 x 2 x (18 x 8192 + 18 x 128) = 306,708,480 */
    cr_expect_eq(seeds_input_of(&s, "ch13_ex1_context"), 8192);
    expect_rel(seeds_answer_of(&s, "13.1(a)"), 575.668224, 1e-12);
    expect_rel(seeds_answer_of(&s, "13.1(b)"), 1577.058304, 1e-12);
    expect_rel(seeds_answer_of(&s, "13.1(c)"), 306.70848, 1e-12);
    /* 64 tokens, top 8 of 256: 256 (1 - (31/32)^64) = 222.44; 90 %: ln 0.1 /
     * ln(31/32) = 72.52 -> 73, and for 128 experts ln 0.1 / ln(15/16) =
     * 35.68 -> 36 */
    cr_expect_eq(seeds_input_of(&s, "ch13_ex3_tokens"), 64);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex3_share"), 90);
    expect_rel(seeds_answer_of(&s, "13.3(a)"), 256 * (1 - pow(31.0 / 32, 64)), 1e-9);
    cr_expect_eq(seeds_answer_of(&s, "13.3(b)"), 73);
    cr_expect_eq(seeds_answer_of(&s, "13.3(c)"), 36);
    /* a token reaches 8 (1 - C(224,8)/C(256,8)) = 8 x 0.6618315 GPUs of an
     * 8-GPU group (32 experts each), 7/8 of them others: 4.6328205 vectors of
     * 7168 fp8 values, x 64 tokens = 2,125,315.67 B; over four nodes (8
     * experts a GPU) 32 (1 - 0.7729125) 31/32 = 7.0397124 others: 3,229,482.15 B;
     * over NVLink 4.8 us + 2,125,315.67 / 450e9 s = 4.8 + 4.722924 us */
    cr_expect_eq(seeds_input_of(&s, "ch13_ex4_tokens"), 64);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex4_nodes"), 4);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex4_gpus"), 32);
    expect_rel(seeds_answer_of(&s, "13.4(a)"), 2.12531567, 1e-8);
    expect_rel(seeds_answer_of(&s, "13.4(b)"), 3.22948215, 1e-8);
    expect_rel(seeds_answer_of(&s, "13.4(c)"), 4.8 + 4.722924, 1e-6);
    /* t_p 0.2 s, t_d 25 ms, C 100, 512 out: TPOT 25 + 99 x 200 / 511 =
     * 63.7476 ms; the split: prefill 2 / 0.2 = 10, decode 2 x 100 / (511 x
     * 0.025) = 15.66: 10; four replicas 4 x 100 / (20 + 12.775) = 12.2044 */
    cr_expect_eq(seeds_input_of(&s, "ch13_ex5_prefill"), 0.2);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex5_decode_ms"), 25);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex5_output"), 512);
    expect_rel(seeds_answer_of(&s, "13.5(a)"), 25 + 99 * 200.0 / 511, 1e-12);
    expect_rel(seeds_answer_of(&s, "13.5(b)"), 10, 1e-12);
    expect_rel(seeds_answer_of(&s, "13.5(c)"), 400 / 32.775, 1e-12);
    /* 60e9 / (4352 x 131072) = 105.18; (60e9 - 3072 x 131072) / (1280 x
     * 131072) = 355.22; 90 %: own 4352 - floor(0.9 x 3072) = 1588 tokens,
     * 59,597,346,816 / 208,142,336 = 286.33 */
    cr_expect_eq(seeds_input_of(&s, "ch13_ex6_prompt"), 4096);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex6_output"), 256);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex6_prefix"), 3072);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex6_hit"), 90);
    cr_expect_eq(seeds_answer_of(&s, "13.6(a)"), 105);
    cr_expect_eq(seeds_answer_of(&s, "13.6(b)"), 355);
    cr_expect_eq(seeds_answer_of(&s, "13.6(c)"), 286);
    /* 13.2 at 8,192 tokens (worked in test_13): 128 requests on EP 8 (16 a GPU
     * beside 98.9 GB of weights) and TP 8 (83.9 GB and all 128 latents of
     * 0.288 GB); 512 on EP 8, no TP degree (147 GB of latents on each GPU);
     * 1,024 need EP 16 */
    cr_expect_eq(seeds_input_of(&s, "ch13_ex2_context"), 8192);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex2_low"), 128);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex2_mid"), 512);
    cr_expect_eq(seeds_input_of(&s, "ch13_ex2_high"), 1024);
    cr_expect_eq(seeds_answer_of(&s, "13.2(a1)"), 8);
    cr_expect_eq(seeds_answer_of(&s, "13.2(a2)"), 8);
    cr_expect_eq(seeds_answer_of(&s, "13.2(b1)"), 8);
    cr_expect_eq(seeds_answer_of(&s, "13.2(b2)"), 0);
    cr_expect_eq(seeds_answer_of(&s, "13.2(c)"), 16);
    cr_expect_eq(s.n_parts, 20);
}

Test(practice_ch13, hand_answers_to_three_figures_pass)
{
    practice_set s;
    practice_build(13, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"13.1(a)", 576},  {"13.1(b)", 1580}, {"13.1(c)", 307},  {"13.3(a)", 222},  {"13.3(b)", 73},
                {"13.3(c)", 36},   {"13.4(a)", 2.13}, {"13.4(b)", 3.23}, {"13.4(c)", 9.52}, {"13.5(a)", 63.7},
                {"13.5(b)", 10},   {"13.5(c)", 12.2}, {"13.6(a)", 105},  {"13.6(b)", 355},  {"13.6(c)", 286}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
}

Test(practice_ch13, part_slips_are_recognised)
{
    practice_set s;
    practice_build(13, 0, &s);
    /* the latent without its RoPE key: 61 x 512 x 2 x 8192 = 511.7 MB; 64
     * query heads for Qwen3: 16 x 1577 MB; gpt-oss without windows: 36 x
     * 2048 x 8192 = 604.0 MB; 64 x 8 = 512 experts, capped at 256; a linear
     * 90 % of 256 / 8 = 28.8 -> 29; each (token, expert) copy sent apart:
     * 64 x 8 x 7/8 x 7168 = 3.211 MB; the own GPU counted: 2.1253 x 8/7 =
     * 2.429 MB; the bytes without the latency 4.723 us; decode steps alone 25 ms; the split at
     * its faster pool 15.66; one replica 3.051; 60 GiB: 112; all hits 355 */
    const seeds_slip slips[] = {{"13.1(a)", 511.7, "RoPE"},      {"13.1(b)", 25233, "KV heads"}, {"13.1(c)", 604.0, "window"},
                 {"13.3(a)", 256, "share experts"}, {"13.3(b)", 29, "1 - (1 - k/E)^T"}, {"13.3(b)", 72, "round up"},
                 {"13.4(a)", 3.211, "once to each GPU"}, {"13.4(a)", 2.429, "own GPU"}, {"13.4(c)", 4.723, "latency"},  {"13.5(a)", 25, "prefills"},
                 {"13.5(b)", 15.66, "slower"},    {"13.5(c)", 3.051, "four replicas"}, {"13.6(a)", 112, "GiB"},
                 {"13.6(c)", 355, "share"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch13, two_hundred_seeds_stay_meaningful)
{
    int slips = 0, distinct = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s;
        cr_assert_eq(practice_build(13, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        if (seed > 0) {
            practice_set again;
            practice_build(13, seed, &again);
            seeds_check_set(&s, &again);
        }
        slips += seeds_check_slips(&s);
        unsigned long long sd = (unsigned long long)seed;
        /* 13.1: a latent of 576 values a layer against Qwen3's 2048 and
         * gpt-oss's 1024, half of them windowed */
        cr_expect(seeds_answer_of(&s, "13.1(a)") < seeds_answer_of(&s, "13.1(b)"));
        cr_expect(seeds_answer_of(&s, "13.1(c)") < seeds_answer_of(&s, "13.1(b)"));
        /* 13.3: a share of at most 256 experts; 256 experts need at least the
         * tokens 128 do at the same top 8 */
        cr_expect(seeds_answer_of(&s, "13.3(a)") <= 256);
        cr_expect(seeds_answer_of(&s, "13.3(b)") >= seeds_answer_of(&s, "13.3(c)"), "seed %llu", sd);
        /* 13.4: a wider group sends more, the dispatch costs more than its latency */
        cr_expect(seeds_answer_of(&s, "13.4(b)") > seeds_answer_of(&s, "13.4(a)"));
        cr_expect(seeds_answer_of(&s, "13.4(c)") > 4.8);
        /* 13.5: prefills lengthen the TPOT past the decode step */
        cr_expect(seeds_answer_of(&s, "13.5(a)") > seeds_input_of(&s, "ch13_ex5_decode_ms"));
        /* 13.6: the prefix shorter than the prompt; caching holds more */
        cr_expect(seeds_input_of(&s, "ch13_ex6_prefix") < seeds_input_of(&s, "ch13_ex6_prompt"), "seed %llu", sd);
        double none = seeds_answer_of(&s, "13.6(a)"), all = seeds_answer_of(&s, "13.6(b)");
        double some = seeds_answer_of(&s, "13.6(c)");
        cr_expect(none <= some && some <= all, "seed %llu: %g %g %g", sd, none, some, all);
        /* 13.2, by the bytes: fp8 weights per GPU with the experts over n,
         * 671,026,404,352 - 653,908,770,816 (1 - 1/n); 61 x 576 B a token of
         * latent; 0.9 x 143,771 MiB usable, of which the activation reserve
         * takes at most 2 GB.  The count found holds its share of the
         * sequences; half of it does not, even without the reserve */
        double ctx2 = seeds_input_of(&s, "ch13_ex2_context"), usable = 0.9 * 143771 * 1048576.0;
        double seq_b = 61 * 576 * ctx2, all_w = 671026404352.0;
        const char *ep_ids[3] = {"13.2(a1)", "13.2(b1)", "13.2(c)"};
        const double ep_load[3] = {seeds_input_of(&s, "ch13_ex2_low"), seeds_input_of(&s, "ch13_ex2_mid"),
                                   seeds_input_of(&s, "ch13_ex2_high")};
        for (int k = 0; k < 3; k++) {
            double n = seeds_answer_of(&s, ep_ids[k]);
            cr_assert(n >= 8 && n <= 64, "seed %llu %s: %g", sd, ep_ids[k], n);
            cr_expect(all_w - 653908770816.0 * (1 - 1 / n) + ceil(ep_load[k] / n) * seq_b <= usable, "seed %llu", sd);
            double h = n / 2;
            cr_expect(all_w - 653908770816.0 * (1 - 1 / h) + ceil(ep_load[k] / h) * seq_b > usable - 2e9,
                      "seed %llu %s", sd, ep_ids[k]);
        }
        double tp = seeds_answer_of(&s, "13.2(a2)");
        cr_expect(tp >= 8 && all_w / tp + ep_load[0] * seq_b <= usable, "seed %llu: TP %g", sd, tp);
        cr_expect(all_w / (tp / 2) + ep_load[0] * seq_b > usable - 2e9, "seed %llu: TP %g", sd, tp);
        /* no TP degree: every GPU's copy of the latents alone is too much */
        cr_expect_eq(seeds_answer_of(&s, "13.2(b2)"), 0);
        cr_expect(all_w / 64 + ep_load[1] * seq_b > usable - 2e9, "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "13.2(c)") > seeds_answer_of(&s, "13.2(b1)"));
        if (seeds_answer_of(&s, "13.5(a)") != last)
            distinct++;
        last = seeds_answer_of(&s, "13.5(a)");
    }
    cr_expect(distinct >= 50, "only %d changes of 13.5 in 201 seeds", distinct);
    cr_expect(slips > 1000, "only %d slips checked", slips);
}
