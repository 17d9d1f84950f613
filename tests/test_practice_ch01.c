/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 1's exercise variants: seed 0 is the printed book (answers worked
 * by hand below from the exercise text, the datasheets in gpus.tsv and the
 * config.json shapes in models.tsv), hand answers to three figures pass, the
 * slips are recognised, and for 200 seeds every input stays in range, every
 * batch fits and 1.4's ridge batch fits its GPUs. */
#include "practice_seeds.h"
#include "specs.h"

#include <string.h>

Test(practice_ch01, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(1, 0, &s), 0);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex2_budget_gb"), 40);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex2_context"), 4096);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex3_context"), 8192);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex3_usable_pct"), 90);
    /* the chapter's reserve, an 8192-token step's activations on one GPU,
     * printed to the MB.  LLaMA-3-8B alone: (2*4096 + 32*128 + 2*8*128 +
     * 32*128 + 3*14336) * 2 B = 122,880 B a token, * 8192 = 1,006,632,960 B,
     * and fp32 logits and probabilities of 256 positions over 128,256 words,
     * 262,668,288 B: 1.269 GB.  LLaMA-3-70B at TP 8: 515,178,496 B, at TP 4:
     * 761,921,536 B (test_memory.c, tests/exercises/test_01.c) */
    expect_rel(seeds_input_of(&s, "ch01_ex3_reserve_gb"), 1.269, 1e-12);
    expect_rel(seeds_input_of(&s, "ch01_ex4_reserve_gb"), 0.515, 1e-12);
    expect_rel(seeds_input_of(&s, "ch01_ex5_reserve_gb"), 0.762, 1e-12);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex4_tp"), 8);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex5_tp"), 4);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex6_batch"), 64);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex7_small_batch"), 4);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex7_large_batch"), 64);
    /* 1.1 prints the B200 (2,250 and 4,500 TFLOP/s over 8.0 TB/s) and the
     * MI300X (1,307.4 and 2,614.9 over 5.3); 1.5 the H100, 81,559 MiB =
     * 85.52 GB from its driver */
    cr_expect_str_eq(practice_input_key(&s, "ch01_ex1_gpu_a"), "b200");
    cr_expect_str_eq(practice_input_key(&s, "ch01_ex1_gpu_b"), "mi300x");
    cr_expect_eq(seeds_input_of(&s, "ch01_ex1_a_bf16"), 2250);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex1_a_fp8"), 4500);
    expect_rel(seeds_input_of(&s, "ch01_ex1_a_tbs"), 8.0, 1e-12);
    expect_rel(seeds_input_of(&s, "ch01_ex1_b_bf16"), 1307.4, 1e-12);
    expect_rel(seeds_input_of(&s, "ch01_ex1_b_fp8"), 2614.9, 1e-12);
    expect_rel(seeds_input_of(&s, "ch01_ex1_b_tbs"), 5.3, 1e-12);
    cr_expect_str_eq(practice_input_key(&s, "ch01_ex5_gpu"), "h100");
    expect_rel(seeds_input_of(&s, "ch01_ex5_driver_gb"), 81559 * 1048576.0 / 1e9, 1e-9);
    /* ridges with the memories swapped, which section 1.3 does not print:
     * the B200's cores on the MI300X's 5.3 TB/s, 2250 / 5.3 = 424.53 and
     * 4500 / 5.3 = 849.06; the MI300X's on the B200's 8.0 TB/s,
     * 1307.4 / 8.0 = 163.43 and 2614.9 / 8.0 = 326.86 */
    expect_rel(seeds_answer_of(&s, "1.1(a1)"), 2250 / 5.3, 1e-9);
    expect_rel(seeds_answer_of(&s, "1.1(a2)"), 4500 / 5.3, 1e-9);
    expect_rel(seeds_answer_of(&s, "1.1(a3)"), 163.425, 1e-9);
    expect_rel(seeds_answer_of(&s, "1.1(a4)"), 326.8625, 1e-9);
    /* 2 x 40 x 40 x 128 x 2 = 819,200 B and 2 x 32 x 8 x 128 x 2 = 131,072 B;
     * 40e9 / (819,200 x 4,096) = 11.9 -> 11, 40e9 / (131,072 x 4,096) = 74.5 -> 74;
     * 32 heads over 8 KV heads: 4 */
    expect_rel(seeds_answer_of(&s, "1.2(a1)"), 819200, 1e-12);
    expect_rel(seeds_answer_of(&s, "1.2(a2)"), 131072, 1e-12);
    cr_expect_eq(seeds_answer_of(&s, "1.2(b1)"), 11);
    cr_expect_eq(seeds_answer_of(&s, "1.2(b2)"), 74);
    cr_expect_eq(seeds_answer_of(&s, "1.2(c)"), 4);
    /* 1.3: (0.9 x capacity - 2 x 8,030,261,248 - 1.269e9) / (8192 x 131,072) rounded
     * down; ridge 989.4 / 4.8 = 206.125; at that batch the step reads
     * batch x 8193 x 131,072 B of cache over (8,030,261,248 - 525,336,576) x 2 B
     * of weights (the embedding table is gathered, not read) */
    double h200 = gpu_builtin("h200").mem_bytes, h100 = gpu_builtin("h100").mem_bytes;
    double b3 = floor((0.9 * h200 - 16.060522496e9 - 1.269e9) / 1073741824.0);
    cr_expect_eq(seeds_answer_of(&s, "1.3(a)"), b3);
    cr_expect_eq(b3, 110, "the driver's 143,771 MiB hold 110 sequences");
    expect_rel(seeds_answer_of(&s, "1.3(b)"), 206.125, 1e-9);
    expect_rel(seeds_answer_of(&s, "1.3(c)"), b3 * 8193 * 131072 / 15.009849344e9, 1e-4); /* norm gains aside */
    /* 1.4: 2 x 70,553,706,496 / 8 = 17.638 GB and 327,680 / 8 = 40,960 B a token;
     * (0.9 x capacity - 17.638e9 - 0.515e9) / (4096 x 40,960) -> 700; at batch 206,
     * 206 x 4097 x 40,960 / ((70,553,706,496 - 1,050,673,152) x 2 / 8) = 1.9895 */
    expect_rel(seeds_answer_of(&s, "1.4(a1)"), 17.638426624, 1e-9);
    expect_rel(seeds_answer_of(&s, "1.4(a2)"), 40960, 1e-12);
    cr_expect_eq(seeds_answer_of(&s, "1.4(b)"), floor((0.9 * h200 - 17.638426624e9 - 0.515e9) / 167772160.0));
    cr_expect_eq(seeds_answer_of(&s, "1.4(b)"), 700);
    expect_rel(seeds_answer_of(&s, "1.4(c1)"), 206.0 * 4097 * 40960 / 17.375758336e9, 1e-4);
    /* 1.5: 4 x H100, (0.9 x capacity - 35.277e9 - 0.762e9) / (4096 x 81,920) =
     * 121.98 -> 121, the chapter's table, and in int8 (0.9 x capacity -
     * 17.638e9 - 0.762e9) / (4096 x 40,960) = 349.1 -> 349; ridges
     * 989.4 / 3.35 / 2 = 147.67 (W8A16), 1978.9 / 3.35 = 590.72 and half of it */
    cr_expect_eq(seeds_answer_of(&s, "1.5(a1)"), floor((0.9 * h100 - 35.276853248e9 - 0.762e9) / 335544320.0));
    cr_expect_eq(seeds_answer_of(&s, "1.5(a1)"), 121);
    cr_expect_eq(seeds_answer_of(&s, "1.5(a2)"), floor((0.9 * h100 - 17.638426624e9 - 0.762e9) / 167772160.0));
    cr_expect_eq(seeds_answer_of(&s, "1.5(a2)"), 349);
    expect_rel(seeds_answer_of(&s, "1.5(b)"), 989.4 / 3.35 / 2, 1e-9);
    expect_rel(seeds_answer_of(&s, "1.5(c1)"), 1978.9 / 3.35, 1e-9);
    expect_rel(seeds_answer_of(&s, "1.5(c2)"), 1978.9 / 3.35 / 2, 1e-9);
    /* 1.7: Mixtral's 46,702,792,704 and 12,879,925,248 parameters; a step reads
     * the shared 1,474,564,096 (less the embedding) and 8 (1 - 0.75^B) of the
     * experts' 5,637,144,576 each, 2 B apiece: 25.498, 64.605 and 93.143 GB */
    expect_rel(seeds_answer_of(&s, "1.7(a1)"), 46.702792704, 1e-9);
    expect_rel(seeds_answer_of(&s, "1.7(a2)"), 12.879925248, 1e-9);
    expect_rel(seeds_answer_of(&s, "1.7(b1)"), 2 * (1474564096.0 + 2 * 5637144576.0) / 1e9, 2e-3);
    expect_rel(seeds_answer_of(&s, "1.7(b2)"), 2 * (1474564096.0 + 8 * (1 - pow(0.75, 4)) * 5637144576.0) / 1e9, 2e-3);
    expect_rel(seeds_answer_of(&s, "1.7(b3)"), 2 * (1474564096.0 + 8 * (1 - pow(0.75, 64)) * 5637144576.0) / 1e9, 2e-3);
    /* 1.8: 4 x H100 at 4k hold 121 sequences, 8 hold 350 (the default policy's
     * arithmetic in test_memory.c and tests/exercises/test_01.c).  (c): the
     * decode step at batch 295, context 4096, on one of eight GPUs, 2 B a value:
     *   FLOP a layer: projections 2*295*106,954,752 (the layer's 855,638,016
     *   weights / 8) = 63,103,303,680; attention over 4097 positions with 8
     *   heads here, 2*(2*295*8*128*4097) + 5*295*8*4097 = 4,998,831,640; norms,
     *   residuals and the gated product 29,452,800.  x 80 layers, plus the
     *   logits 2*295*8192*(128256/8) = 77,487,144,960 and the final norm
     *   9,666,560: 5,528,023,861,120 FLOP.
     *   Weights: 80 x (106,954,752 + 2*8192) x 2 B = 17,115,381,760, the
     *   head's eighth 262,668,288, 295 embedding rows 4,833,280 and the final
     *   norm 16,384: 17,382,899,712 B.  KV: 80 layers x (K, V) x 295 x (4097
     *   read + 1 written) x 128 x 2 B (one KV head here) = 49,516,953,600 B.
     *   5,528,023,861,120 / 66,899,853,312 = 82.63 FLOP/B; with the
     *   activations' 6,671,927,680 B as well, 75.14.  The part takes either. */
    cr_expect_str_eq(practice_input_key(&s, "ch01_ex8_gpu"), "h100");
    cr_expect_eq(seeds_input_of(&s, "ch01_ex8_context"), 4096);
    cr_expect_eq(seeds_input_of(&s, "ch01_ex8_ridge_batch"), 295);
    cr_expect_eq(seeds_answer_of(&s, "1.8(a)"), 121);
    cr_expect_eq(seeds_answer_of(&s, "1.8(b)"), 350);
    cr_expect_eq(judge_answer(&practice_find(&s, "1.8(c)")->judge, 82.6).verdict, VERDICT_RIGHT);
    cr_expect_eq(judge_answer(&practice_find(&s, "1.8(c)")->judge, 75.1).verdict, VERDICT_RIGHT);
    cr_expect_neq(judge_answer(&practice_find(&s, "1.8(c)")->judge, 90).verdict, VERDICT_RIGHT);
    cr_expect_eq(s.n_parts, 35);
}

Test(practice_ch01, hand_answers_to_three_figures_pass)
{
    /* what a candidate writes for seed 0, worked on paper.  1.4(c2): 3.856e12
     * FLOP over 17.376e9 + 34.570e9 B = 74.2.  1.6: batch 1 reads 34.752e9 +
     * 4097 x 81,920 B in 10.47 ms, and 161 all-reduces of 16 KiB and the
     * logits' gather add 0.787 ms: 11.26 ms, 88.8 tokens/s; batch 64, 18.18 ms
     * with its collectives: 55.0 a user, 3,520 in all, 39.6 times more, 1.61
     * times slower */
    practice_set s;
    practice_build(1, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"1.1(a1)", 425},   {"1.1(a2)", 849},   {"1.1(a3)", 163},   {"1.1(a4)", 327},  {"1.2(a1)", 819000},
                {"1.2(a2)", 131000}, {"1.2(b1)", 11},    {"1.2(b2)", 74},    {"1.2(c)", 4},     {"1.3(a)", 110},
                {"1.3(b)", 206},    {"1.3(c)", 7.80},   {"1.4(a1)", 17.6},  {"1.4(a2)", 41000}, {"1.4(b)", 700},
                {"1.4(c1)", 1.99},  {"1.4(c2)", 74.2},  {"1.5(b)", 148},    {"1.5(c1)", 591},  {"1.5(c2)", 295},
                {"1.6(a1)", 88.8},  {"1.6(a2)", 55.0},  {"1.6(b)", 3520},   {"1.6(c1)", 39.6}, {"1.6(c2)", 1.61},
                {"1.7(a1)", 46.7},  {"1.7(a2)", 12.9},  {"1.7(b1)", 25.5},  {"1.7(b2)", 64.6}, {"1.7(b3)", 93.1}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
}

Test(practice_ch01, part_slips_are_recognised)
{
    practice_set s;
    practice_build(1, 0, &s);
    /* the attention heads in 1.2(a2) (4 x 131,072); 40 GiB in 1.2(b2): 42.95e9 /
     * 536,870,912 = 80; the datasheet's 141 GB in 1.3(a): (126.9 - 16.06 - 1.269)
     * / 1.074 = 102.05 -> 102; the H100's ridge 295 in 1.3(b); the sparse
     * Mixtral 8 x 7 = 56; no activation reserve in 1.5(a1): (76.969 - 35.277) /
     * 0.33554 = 124.25 -> 124; the B200's own ridge 2250 / 8.0 = 281 in
     * 1.1(a1), which asks for its cores on the MI300X's memory */
    const seeds_slip slips[] = {{"1.1(a1)", 281, "1.3 prints"}, {"1.2(a2)", 524288, "KV heads"}, {"1.2(b2)", 80, "GiB"},   {"1.3(a)", 102, "datasheet"},
                 {"1.5(a1)", 124, "no activation reserve"},
                 {"1.3(b)", 295, "H100"},         {"1.7(a1)", 56, "name"},  {"1.5(c1)", 295, "bf16"},
                 {"1.6(b)", 55.0, "pace"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch01, two_hundred_seeds_stay_meaningful)
{
    int distinct = 0, named = 0, gpus5 = 0, contexts8 = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s, again;
        cr_assert_eq(practice_build(1, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        practice_build(1, seed, &again);
        seeds_check_set(&s, &again);
        named += seeds_check_slips(&s);
        /* every largest batch holds at least one sequence; 1.4's ridge batch fits */
        cr_expect(seeds_answer_of(&s, "1.2(b1)") >= 1 && seeds_answer_of(&s, "1.3(a)") >= 1);
        cr_expect(seeds_answer_of(&s, "1.4(b)") >= seeds_answer_of(&s, "1.3(b)"), "seed %llu",
                  (unsigned long long)seed);
        cr_expect(seeds_answer_of(&s, "1.5(a2)") > seeds_answer_of(&s, "1.5(a1)"));
        /* 1.1: two different GPUs, each ridge one's printed peak over the
         * other's printed bandwidth */
        const char *ga = practice_input_key(&s, "ch01_ex1_gpu_a"), *gb = practice_input_key(&s, "ch01_ex1_gpu_b");
        cr_assert(ga && gb);
        cr_expect(strcmp(ga, gb) != 0 && strcmp(ga, "h100") != 0 && strcmp(gb, "h100") != 0, "seed %llu: %s, %s",
                  (unsigned long long)seed, ga, gb);
        expect_rel(seeds_answer_of(&s, "1.1(a1)"), seeds_input_of(&s, "ch01_ex1_a_bf16") / seeds_input_of(&s, "ch01_ex1_b_tbs"), 1e-9);
        expect_rel(seeds_answer_of(&s, "1.1(a2)"), seeds_input_of(&s, "ch01_ex1_a_fp8") / seeds_input_of(&s, "ch01_ex1_b_tbs"), 1e-9);
        expect_rel(seeds_answer_of(&s, "1.1(a3)"), seeds_input_of(&s, "ch01_ex1_b_bf16") / seeds_input_of(&s, "ch01_ex1_a_tbs"), 1e-9);
        expect_rel(seeds_answer_of(&s, "1.1(a4)"), seeds_input_of(&s, "ch01_ex1_b_fp8") / seeds_input_of(&s, "ch01_ex1_a_tbs"), 1e-9);
        /* 1.5: the bf16 batch fits on its GPUs; W8A16's batch is half the bf16
         * ridge, W8A8's half the int8 ridge, which is twice bf16's */
        cr_expect(seeds_answer_of(&s, "1.5(a1)") >= 1);
        expect_rel(seeds_answer_of(&s, "1.5(c1)"), 4 * seeds_answer_of(&s, "1.5(b)"), 1e-3);
        expect_rel(seeds_answer_of(&s, "1.5(c2)"), seeds_answer_of(&s, "1.5(c1)") / 2, 1e-12);
        /* 1.6: a batch is slower a step and faster in all; 1.7 reads more with the batch */
        cr_expect(seeds_answer_of(&s, "1.6(c2)") > 1 && seeds_answer_of(&s, "1.6(c1)") > 1);
        cr_expect(seeds_answer_of(&s, "1.7(b1)") < seeds_answer_of(&s, "1.7(b2)"));
        cr_expect(seeds_answer_of(&s, "1.7(b2)") < seeds_answer_of(&s, "1.7(b3)"));
        gpus5 |= 1 << (int)seeds_input_of(&s, "ch01_ex5_gpu");
        /* 1.8's regime: the ridge batch does not fit on four GPUs, does on eight,
         * and the step stays under the ridge */
        double ridge8 = seeds_input_of(&s, "ch01_ex8_ridge_batch");
        cr_expect(seeds_answer_of(&s, "1.8(a)") >= 1 && seeds_answer_of(&s, "1.8(a)") < ridge8, "seed %llu",
                  (unsigned long long)seed);
        cr_expect(seeds_answer_of(&s, "1.8(b)") >= ridge8, "seed %llu", (unsigned long long)seed);
        cr_expect(seeds_answer_of(&s, "1.8(c)") < ridge8, "seed %llu", (unsigned long long)seed);
        contexts8 |= 1 << (int)(seeds_input_of(&s, "ch01_ex8_context") / 1024);
        if (seeds_answer_of(&s, "1.3(a)") != last)
            distinct++;
        last = seeds_answer_of(&s, "1.3(a)");
    }
    cr_expect(distinct >= 50, "only %d changes of 1.3 in 201 seeds", distinct);
    cr_expect(named > 1000, "only %d slips checked", named);
    cr_expect_eq(gpus5, 31, "1.5 drew only the GPUs of mask %#x", gpus5);
    /* H100 at 2k, 3k, 4k; A100 at 4k, 6k, 8k */
    cr_expect_eq(contexts8, (1 << 2) | (1 << 3) | (1 << 4) | (1 << 6) | (1 << 8), "1.8's contexts %#x", contexts8);
}
