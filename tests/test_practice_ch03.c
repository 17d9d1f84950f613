/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 3's exercise variants: seed 0 is the printed book (answers worked
 * by hand below from the exercise text, the Poisson window and the tables),
 * hand answers to three figures pass, the slips are recognised, and for 200
 * seeds every input stays in range and each question keeps its regime. */
#include "practice_seeds.h"
#include "specs.h"

#include <string.h>

Test(practice_ch03, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(3, 0, &s), 0);
    cr_expect_eq(seeds_input_of(&s, "ch03_ex1_len3"), 8);
    cr_expect_eq(seeds_input_of(&s, "ch03_ex2_len8"), 4000);
    cr_expect_eq(seeds_input_of(&s, "ch03_ex3_rate"), 20);
    cr_expect_eq(seeds_input_of(&s, "ch03_ex4_rate"), 2000);
    cr_expect_eq(seeds_input_of(&s, "ch03_ex6_n"), 16);
    cr_expect_eq(seeds_input_of(&s, "ch03_ex7_short"), 768);
    /* 5, 3, 8, 1: cu = 0, 5, 8, 16, 17; token 2 of sequence 2 at 8 + 2; 4 x 8 slots, 15 of them padding */
    cr_expect_eq(seeds_answer_of(&s, "3.1(a)"), 16);
    cr_expect_eq(seeds_answer_of(&s, "3.1(b)"), 10);
    cr_expect_eq(seeds_answer_of(&s, "3.1(c1)"), 32);
    expect_rel(seeds_answer_of(&s, "3.1(c2)"), 15.0 / 32, 1e-12);
    /* 6,650 tokens; 8 x 4000 = 32,000 slots; buckets of 3 x 100, 2 x 300, 2 x 1000
     * and 4000: 6,900; causal pairs 8 x 4000 x 4001 / 2 over 3 x 5050 + 2 x 45150
     * + 2 x 500500 + 8,002,000 */
    cr_expect_eq(seeds_answer_of(&s, "3.2(a1)"), 32000);
    expect_rel(seeds_answer_of(&s, "3.2(a2)"), 25350.0 / 32000, 1e-12);
    cr_expect_eq(seeds_answer_of(&s, "3.2(b1)"), 6900);
    expect_rel(seeds_answer_of(&s, "3.2(b2)"), 250.0 / 6900, 1e-12);
    cr_expect_eq(seeds_answer_of(&s, "3.2(b3)"), 4);
    expect_rel(seeds_answer_of(&s, "3.2(c)"), 64016000.0 / 9108450.0, 1e-9);
    /* lambda W = 1: a batch of 1 + 1; the first waits 50 ms, the other 25: 37.5 ms.
     * At 2,000/s every batch fills: 16, going 15 / 2000 s = 7.5 ms after its first,
     * a request waiting 7.5 / 2000 s = 3.75 ms on average */
    expect_rel(seeds_answer_of(&s, "3.3(a)"), 2, 1e-9);
    expect_rel(seeds_answer_of(&s, "3.3(b)"), 37.5, 1e-9);
    expect_rel(seeds_answer_of(&s, "3.4(a1)"), 16, 1e-9);
    expect_rel(seeds_answer_of(&s, "3.4(a2)"), 7.5, 1e-9);
    expect_rel(seeds_answer_of(&s, "3.4(b)"), 3.75, 1e-9);
    /* W (2 + 100 W) / (2 (1 + 100 W)) = 0.02: W = (2 + sqrt(20)) / 200 = 32.36 ms; batch 1 + 100 W */
    expect_rel(seeds_answer_of(&s, "3.5(a1)"), 1e3 * (2 + sqrt(20)) / 200, 1e-6);
    expect_rel(seeds_answer_of(&s, "3.5(a2)"), 1 + (2 + sqrt(20)) / 2, 1e-6);
    /* 3.6 by hand (tests/exercises/test_03.c): 9.2 s over 0.656 s = 14.0.  With
     * 4,096-token prompts one request takes 62 ms of prefill and 127 steps of
     * (15.01 + 0.55) GB / 3.35 TB/s: 0.652 s, 10.4 s for 16; the batch 0.994 s of
     * projections, 35 ms of attention and 127 steps of 23.87 GB: 1.93 s; 5.4.
     * Both leave out activations and norms: within 10 % */
    expect_rel(seeds_answer_of(&s, "3.6(a)"), 14.0, 0.1);
    expect_rel(seeds_answer_of(&s, "3.6(b)"), 5.4, 0.1);
    /* 0.9 x capacity - 16,060,522,496 - 5e9 over 768 x 131,072 and 8192 x 131,072 */
    double h100 = gpu_builtin("h100").mem_bytes, l40s = gpu_builtin("l40s").mem_bytes;
    cr_expect_eq(seeds_answer_of(&s, "3.7(a)"), floor((0.9 * h100 - 21.060522496e9) / 100663296.0));
    cr_expect_eq(seeds_answer_of(&s, "3.7(b)"), floor((0.9 * h100 - 21.060522496e9) / 1073741824.0));
    cr_expect_eq(seeds_answer_of(&s, "3.7(c)"), floor((0.9 * l40s - 21.060522496e9) / 1073741824.0));
    cr_expect_eq(s.n_parts, 22);
}

Test(practice_ch03, hand_answers_to_three_figures_pass)
{
    practice_set s;
    practice_build(3, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"3.1(a)", 16},     {"3.1(b)", 10},     {"3.1(c1)", 32},  {"3.1(c2)", 0.469}, {"3.2(a1)", 32000},
                {"3.2(a2)", 0.792}, {"3.2(b1)", 6900},  {"3.2(b2)", 0.0362}, {"3.2(b3)", 4},   {"3.2(c)", 7.03},
                {"3.3(a)", 2},      {"3.3(b)", 37.5},   {"3.4(a1)", 16},  {"3.4(a2)", 7.5},   {"3.4(b)", 3.75},
                {"3.5(a1)", 32.4},  {"3.5(a2)", 4.24},  {"3.6(a)", 14.0}, {"3.6(b)", 5.4},    {"3.7(a)", 555},
                {"3.7(b)", 52}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
}

Test(practice_ch03, part_slips_are_recognised)
{
    practice_set s;
    practice_build(3, 0, &s);
    /* cu[4] for cu[3]; a row counted from 1; the packed 17 for the padded 32;
     * the whole window (50 ms) for the mean wait; the window in the busy case */
    const seeds_slip slips[] = {{"3.1(a)", 17, "cu[4]"}, {"3.1(b)", 11, "from 0"}, {"3.1(c1)", 17, "packed"},
                 {"3.3(b)", 50, "first"},  {"3.4(a2)", 50, "never fires"}, {"3.2(c)", 32000.0 / 6900, "square"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch03, two_hundred_seeds_stay_meaningful)
{
    int distinct = 0, named = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s, again;
        cr_assert_eq(practice_build(3, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        practice_build(3, seed, &again);
        seeds_check_set(&s, &again);
        named += seeds_check_slips(&s);
        unsigned long long sd = (unsigned long long)seed;
        /* 3.1's token lies inside sequence 2; 3.2 uses its four buckets */
        cr_expect(seeds_input_of(&s, "ch03_ex1_token") < seeds_input_of(&s, "ch03_ex1_len3"), "seed %llu", sd);
        cr_expect_eq(seeds_answer_of(&s, "3.2(b3)"), 4, "seed %llu", sd);
        /* a quiet endpoint: one arrival a window, the mean wait three quarters of it */
        double w = seeds_input_of(&s, "ch03_ex3_window_ms");
        expect_rel(seeds_input_of(&s, "ch03_ex3_rate") * w / 1e3, 1, 1e-12);
        expect_rel(seeds_answer_of(&s, "3.3(b)"), 0.75 * w, 1e-3);
        /* a busy one: every batch fills, well before the window */
        expect_rel(seeds_answer_of(&s, "3.4(a1)"), seeds_input_of(&s, "ch03_ex3_cap"), 1e-3);
        cr_expect(seeds_answer_of(&s, "3.4(a2)") < w, "seed %llu", sd);
        /* a window the budget bounds, longer than the budget; a batch beats one by one */
        cr_expect(seeds_answer_of(&s, "3.5(a1)") > seeds_input_of(&s, "ch03_ex5_budget_ms"), "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "3.6(a)") > seeds_answer_of(&s, "3.6(b)") && seeds_answer_of(&s, "3.6(b)") > 1);
        cr_expect(seeds_answer_of(&s, "3.7(c)") < seeds_answer_of(&s, "3.7(b)"));
        if (seeds_answer_of(&s, "3.2(c)") != last)
            distinct++;
        last = seeds_answer_of(&s, "3.2(c)");
    }
    cr_expect(distinct >= 100, "only %d changes of 3.2 in 201 seeds", distinct);
    cr_expect(named > 1000, "only %d slips checked", named);
}
