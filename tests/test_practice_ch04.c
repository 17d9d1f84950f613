/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 4's exercise variants: seed 0 is the printed book (answers worked
 * by hand below: the window's triggers, timespec arithmetic, the recursion
 * of bisection, the Poisson distribution), hand answers pass, the slips are
 * recognised, and for 200 seeds every input stays in range and each
 * question keeps its regime. */
#include "practice_seeds.h"

#include <string.h>

/* P(Poisson(mean) >= k): a batch of cap fills when cap - 1 more arrive in the window. */
static double poisson_at_least(double mean, int k)
{
    double term = exp(-mean), below = 0;
    for (int i = 0; i < k; i++) {
        below += term;
        term *= mean / (i + 1);
    }
    return 1 - below;
}

Test(practice_ch04, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(4, 0, &s), 0);
    cr_expect_eq(seeds_input_of(&s, "ch04_ex1_batch"), 8);
    cr_expect_eq(seeds_input_of(&s, "ch04_ex1_now_a"), 1.002);
    cr_expect_eq(seeds_input_of(&s, "ch04_ex2_now"), 41.9997);
    cr_expect_eq(seeds_input_of(&s, "ch04_ex3_run_start"), 8);
    cr_expect_eq(seeds_input_of(&s, "ch04_ex6_batch"), 32);
    /* 1.000 + 5 ms = 1.005, less 1.002: 3 ms */
    expect_rel(seeds_answer_of(&s, "4.1(a)"), 3, 1e-9);
    /* 41.9997 + 0.0005 = 42.0002: 42 s and 200,000 ns; without the carry 999,700,000 + 500,000 */
    cr_expect_eq(seeds_answer_of(&s, "4.2(a1)"), 42);
    cr_expect_eq(seeds_answer_of(&s, "4.2(a2)"), 200000);
    cr_expect_eq(seeds_answer_of(&s, "4.2(b)"), 1000200000);
    /* one bad in 64: 1 + 2 x 6; the first and last: 1 + 2 x (1 + 2 x 5); 8 to 11:
     * 1 + (1 + (1 + 1 + (1 + 7 + 1)) + 1) + 1; all: 2 x 64 - 1 */
    cr_expect_eq(seeds_answer_of(&s, "4.3(a)"), 13);
    cr_expect_eq(seeds_answer_of(&s, "4.3(b)"), 23);
    cr_expect_eq(seeds_answer_of(&s, "4.3(c)"), 15);
    cr_expect_eq(seeds_answer_of(&s, "4.3(d)"), 127);
    /* lambda W = 4, a cap of 64 never binds: (W + 4 W/2) / 5 = 0.6 W = 1.2 ms */
    expect_rel(seeds_answer_of(&s, "4.4(a)"), 1.2, 1e-6);
    cr_expect(seeds_answer_of(&s, "4.4(b)") < 1.2 && seeds_answer_of(&s, "4.4(b)") > 0);
    /* 16 arrivals a window on average: 15 more fill a batch of 16, 31 one of 32 */
    expect_rel(seeds_answer_of(&s, "4.5(a)"), 100 * poisson_at_least(16, 15), 1e-6);
    cr_expect(fabs(seeds_answer_of(&s, "4.5(b)") - 100 * poisson_at_least(16, 31)) < 1e-6);
    /* 1 / (20 us + 8 ms + 0.1 ms) and 32 / (20 us + 8 ms + 3.2 ms); 1 / 0.1 ms */
    expect_rel(seeds_answer_of(&s, "4.6(a)"), 1 / 0.00812, 1e-9);
    expect_rel(seeds_answer_of(&s, "4.6(b)"), 32 / 0.01122, 1e-9);
    expect_rel(seeds_answer_of(&s, "4.6(c)"), 10000, 1e-9);
    cr_expect_eq(s.n_parts, 15);
}

Test(practice_ch04, hand_answers_pass)
{
    practice_set s;
    practice_build(4, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"4.1(a)", 3},     {"4.2(a1)", 42},  {"4.2(a2)", 200000}, {"4.2(b)", 1000200000}, {"4.3(a)", 13},
                {"4.3(b)", 23},    {"4.3(c)", 15},   {"4.3(d)", 127},     {"4.4(a)", 1.2},        {"4.5(a)", 63},
                {"4.5(b)", 0},     {"4.6(a)", 123},  {"4.6(b)", 2850},    {"4.6(c)", 10000}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
}

Test(practice_ch04, part_slips_are_recognised)
{
    practice_set s;
    practice_build(4, 0, &s);
    /* the whole window for the sleep; no carry; the halvings alone; the leaves alone */
    const seeds_slip slips[] = {{"4.1(a)", 5, "whole window"}, {"4.2(a1)", 41, "carries"}, {"4.2(a2)", 1000200000, "carry"},
                 {"4.3(a)", 6, "halvings"},     {"4.3(d)", 64, "leaves"},   {"4.6(c)", 125, "fixed cost"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch04, two_hundred_seeds_stay_meaningful)
{
    int distinct = 0, named = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s, again;
        cr_assert_eq(practice_build(4, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        practice_build(4, seed, &again);
        seeds_check_set(&s, &again);
        named += seeds_check_slips(&s);
        unsigned long long sd = (unsigned long long)seed;
        /* (a) sleeps: fewer than a batch, inside the window; (c) is past it */
        cr_expect(seeds_input_of(&s, "ch04_ex1_queued") < seeds_input_of(&s, "ch04_ex1_batch"), "seed %llu", sd);
        double w = seeds_input_of(&s, "ch04_ex1_window_ms");
        cr_expect(seeds_answer_of(&s, "4.1(a)") > 0 && seeds_answer_of(&s, "4.1(a)") < w, "seed %llu", sd);
        cr_expect((seeds_input_of(&s, "ch04_ex1_now_c") - 1) * 1e3 > w, "seed %llu", sd);
        /* the deadline carries */
        cr_expect_eq(seeds_answer_of(&s, "4.2(a1)"), floor(seeds_input_of(&s, "ch04_ex2_now")) + 1, "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "4.2(b)") >= 1e9 && seeds_answer_of(&s, "4.2(a2)") < 1e9, "seed %llu", sd);
        /* bisection: one bad costs 2 log2 n + 1, all bad 2 n - 1; the run lies inside */
        double n = seeds_input_of(&s, "ch04_ex3_n");
        cr_expect_eq(seeds_answer_of(&s, "4.3(a)"), 2 * log2(n) + 1, "seed %llu", sd);
        cr_expect_eq(seeds_answer_of(&s, "4.3(d)"), 2 * n - 1, "seed %llu", sd);
        cr_expect(seeds_input_of(&s, "ch04_ex3_run_end") < n && seeds_input_of(&s, "ch04_ex3_bad") < n);
        /* a cap of 4 cuts the wait; 8 to 32 arrivals a window; a cap of 32 fills less often */
        cr_expect(seeds_answer_of(&s, "4.4(b)") < seeds_answer_of(&s, "4.4(a)"), "seed %llu", sd);
        double m = seeds_input_of(&s, "ch04_ex5_rate") * seeds_input_of(&s, "ch04_ex5_window_ms") / 1e3;
        cr_expect(m >= 8 && m <= 32, "seed %llu: %g a window", sd, m);
        cr_expect(seeds_answer_of(&s, "4.5(b)") < seeds_answer_of(&s, "4.5(a)"), "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "4.6(a)") < seeds_answer_of(&s, "4.6(b)") &&
                  seeds_answer_of(&s, "4.6(b)") < seeds_answer_of(&s, "4.6(c)"));
        if (seeds_answer_of(&s, "4.6(b)") != last)
            distinct++;
        last = seeds_answer_of(&s, "4.6(b)");
    }
    cr_expect(distinct >= 50, "only %d changes of 4.6 in 201 seeds", distinct);
    cr_expect(named > 1000, "only %d slips checked", named);
}
