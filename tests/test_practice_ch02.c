/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 2's exercise variants: seed 0 is the printed book (answers worked
 * by hand below from the datasheets and the config shapes), hand answers to
 * three figures pass, the slips are recognised, and for 200 seeds every
 * input stays in range and each question keeps its regime. */
#include "practice_seeds.h"

#include <string.h>

Test(practice_ch02, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(2, 0, &s), 0);
    cr_expect_eq(seeds_input_of(&s, "ch02_ex1_copy_ms"), 0.536);
    cr_expect_eq(seeds_input_of(&s, "ch02_ex2_k"), 3584);
    cr_expect_eq(seeds_input_of(&s, "ch02_ex3_n"), 14336);
    cr_expect_eq(seeds_input_of(&s, "ch02_ex5_us"), 31.87);
    cr_expect_eq(seeds_input_of(&s, "ch02_ex6_context"), 32768);
    /* copy: 2 x 2^28 x 4 B in 0.536 ms; read: 2^28 x 4 B in 0.240 ms; of 4.8 TB/s; reads alone half */
    expect_rel(seeds_answer_of(&s, "2.1(a1)"), 2147483648.0 / 0.536e-3 / 1e12, 1e-9);
    expect_rel(seeds_answer_of(&s, "2.1(a2)"), 1073741824.0 / 0.240e-3 / 1e12, 1e-9);
    expect_rel(seeds_answer_of(&s, "2.1(b)"), 100 * 2147483648.0 / 0.536e-3 / 4.8e12, 1e-9);
    expect_rel(seeds_answer_of(&s, "2.1(c)"), 1073741824.0 / 0.536e-3 / 1e12, 1e-9);
    /* m = 1 / (B/P - (n + k)/(nk)): 318.29 on the H100, 217.05 on the H200, 224.70 for n 8192, k 3584 */
    expect_rel(seeds_answer_of(&s, "2.2(a)"), 1 / (4.8 / 989.4 - 2.0 / 8192), 1e-9);
    expect_rel(seeds_answer_of(&s, "2.2(c)"), 1 / (4.8 / 989.4 - 11776.0 / (8192.0 * 3584)), 1e-9);
    /* batch 1: 234,926,080 B over 4.8 TB/s; batch 512: 2 x 512 x 14336 x 8192 FLOP over 989.4 TFLOP/s */
    expect_rel(seeds_answer_of(&s, "2.3(c)"), (120259084288.0 / 989.4e12) / (234926080.0 / 4.8e12), 1e-9);
    /* (134.3e6 + 16.4e3) B in 31.87 us */
    expect_rel(seeds_answer_of(&s, "2.5(a)"), 134316400.0 / 31.87e-6 / 1e12, 1e-9);
    expect_rel(seeds_answer_of(&s, "2.5(b)"), 100 * 134316400.0 / 31.87e-6 / 4.8e12, 1e-9);
    /* 327,680 B a token x 32,768; 16 x 131,072 x 32,768 */
    expect_rel(seeds_answer_of(&s, "2.6(a)"), 10.73741824, 1e-12);
    expect_rel(seeds_answer_of(&s, "2.6(c)"), 68.719476736, 1e-12);
    /* 2.4: the printed table at 90 % and 85 %.  14336 x 8192 bf16: 234,881,024 B
     * of weight plus 45,056 B a row of X and Y over 4.8 TB/s, m x 234,881,024
     * FLOP over 989.4 TFLOP/s, to 0.1 us: m = 1, 48.943 us; 64, 49.534; 128,
     * 50.135; 256, max(51.337, 60.774); 512, max(53.740, 121.548).  The stand-in
     * sqrt((t_mem/0.9)^2 + (t_flop/0.85)^2): 54.38, 57.87, sqrt(55.706^2 +
     * 35.749^2) = 66.19, sqrt(57.041^2 + 71.499^2) = 91.46, sqrt(59.71^2 +
     * 143.0^2) = 154.97.  |errors| 5.5/54.4, 8.4/57.9, 16.1/66.2, 30.7/91.5,
     * 33.5/155.0: median 33.5/155.0 = 21.6 %, worst m = 256 */
    cr_expect_eq(seeds_input_of(&s, "ch02_ex4_bw_pct"), 90);
    cr_expect_eq(seeds_input_of(&s, "ch02_ex4_peak_pct"), 85);
    const double pred[5] = {48.9, 49.5, 50.1, 60.8, 121.5}, meas[5] = {54.4, 57.9, 66.2, 91.5, 155.0};
    static const char *const pn[5] = {"ch02_ex4_m1_pred", "ch02_ex4_m64_pred", "ch02_ex4_m128_pred",
                                      "ch02_ex4_m256_pred", "ch02_ex4_m512_pred"};
    static const char *const mn[5] = {"ch02_ex4_m1_meas", "ch02_ex4_m64_meas", "ch02_ex4_m128_meas",
                                      "ch02_ex4_m256_meas", "ch02_ex4_m512_meas"};
    for (int i = 0; i < 5; i++) {
        expect_rel(seeds_input_of(&s, pn[i]), pred[i], 1e-12);
        expect_rel(seeds_input_of(&s, mn[i]), meas[i], 1e-12);
    }
    expect_rel(seeds_answer_of(&s, "2.4(a)"), 100 * 33.5 / 155.0, 1e-9);
    cr_expect_eq(seeds_answer_of(&s, "2.4(b)"), 256);
    /* 2.7: 7 us launches, 5 us kernels: idle 1 - 5/7 = 28.57 % */
    cr_expect_eq(seeds_input_of(&s, "ch02_ex7_launch_us"), 7);
    cr_expect_eq(seeds_input_of(&s, "ch02_ex7_work_us"), 5);
    expect_rel(seeds_answer_of(&s, "2.7(c)"), 100 * (1 - 5.0 / 7), 1e-12);
    cr_expect_eq(s.n_parts, 14);
}

Test(practice_ch02, hand_answers_to_three_figures_pass)
{
    practice_set s;
    practice_build(2, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"2.1(a1)", 4.01}, {"2.1(a2)", 4.47}, {"2.1(b)", 83.5},  {"2.1(c)", 2.00},  {"2.2(a)", 217},
                {"2.2(c)", 225},   {"2.3(c)", 2.48},
                {"2.5(a)", 4.21},  {"2.5(b)", 87.8},  {"2.6(a)", 10.7},  {"2.6(c)", 68.7},
                {"2.4(a)", 21.6},  {"2.4(b)", 256},   {"2.7(c)", 28.6}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
}

Test(practice_ch02, part_slips_are_recognised)
{
    practice_set s;
    practice_build(2, 0, &s);
    /* the copy's reads alone; the ridge for the knee; 64 heads in the 70B's cache; one 8B sequence */
    const seeds_slip slips[] = {{"2.1(a1)", 2.00, "read alone"}, {"2.2(a)", 206, "ridge"}, {"2.6(a)", 85.9, "KV heads"},
                 {"2.6(c)", 4.29, "one sequence"}, {"2.3(c)", 512, "FLOPs bind"},
                 /* 2.4: each error over the prediction, median 33.5/121.5 */
                 {"2.4(a)", 27.6, "prediction"},
                 /* 2.7: the GPU's busy share 5/7 */
                 {"2.7(c)", 71.4, "works"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch02, two_hundred_seeds_stay_meaningful)
{
    int distinct = 0, named = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s, again;
        cr_assert_eq(practice_build(2, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        practice_build(2, seed, &again);
        seeds_check_set(&s, &again);
        named += seeds_check_slips(&s);
        unsigned long long sd = (unsigned long long)seed;
        /* the copy and the read-only pass stay under the datasheet; the GEMV streams at 80 to 96 % */
        cr_expect(seeds_answer_of(&s, "2.1(b)") < 100 && seeds_answer_of(&s, "2.1(a2)") < 4.8, "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "2.5(b)") > 80 && seeds_answer_of(&s, "2.5(b)") < 96, "seed %llu", sd);
        /* knees of a few hundred rows; batch 1 memory-bound, the large batch slower but less than in proportion */
        cr_expect(seeds_answer_of(&s, "2.2(a)") > 100 && seeds_answer_of(&s, "2.2(a)") < 1000, "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "2.3(c)") > 1 && seeds_answer_of(&s, "2.3(c)") < seeds_input_of(&s, "ch02_ex3_batch"));
        /* 2.4 misses the 10 % target, as printed, and its worst point is
         * one of the two nearest the knee (217 rows on the H200) */
        cr_expect(seeds_answer_of(&s, "2.4(a)") > 10, "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "2.4(b)") == 128 || seeds_answer_of(&s, "2.4(b)") == 256, "seed %llu", sd);
        /* 2.7: the GPU waits, and a batch-1 step of 355 kernels still hides the launches (4.5 ms) */
        cr_expect(seeds_input_of(&s, "ch02_ex7_work_us") < seeds_input_of(&s, "ch02_ex7_launch_us"), "seed %llu", sd);
        cr_expect(355 * seeds_input_of(&s, "ch02_ex7_launch_us") * 1e-6 < 4.5e-3, "seed %llu", sd);
        if (seeds_answer_of(&s, "2.3(c)") != last)
            distinct++;
        last = seeds_answer_of(&s, "2.3(c)");
    }
    cr_expect(distinct >= 50, "only %d changes of 2.3 in 201 seeds", distinct);
    cr_expect(named > 1000, "only %d slips checked", named);
}
