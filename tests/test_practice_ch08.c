/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 8's exercise variants: seed 0 is the printed book (answers worked
 * by hand below from vLLM's capture list), and for 200 seeds the inputs
 * stay in range, the answers are judged as tests/practice_seeds.h says, and
 * each part keeps its point: every batch pads, no two parts ask the same. */
#include "practice_seeds.h"

#include <string.h>

#define expect_rel(got, want, rel)                                                                        \
    do {                                                                                                  \
        double g_ = (got), w_ = (want);                                                                   \
        cr_expect(fabs(g_ - w_) <= (rel) * fabs(w_), "%s: got %.10g, want %.10g", #got, g_, w_);          \
    } while (0)

/* vLLM's list up to 512, worked here from its definition: [1, 2, 4] +
 * range(8, 256, 8) + range(256, 513, 16); the smallest entry >= tokens, 0
 * past 512. */
static int replay_by_hand(int tokens)
{
    if (tokens <= 4)
        return tokens == 3 ? 4 : tokens;
    if (tokens < 256)
        return 8 * ((tokens + 7) / 8);
    return tokens > 512 ? 0 : 256 + 16 * ((tokens - 256 + 15) / 16);
}

Test(practice_ch08, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(8, 0, &s), 0);
    /* 100 -> 104 (by 8 below 256), 300 -> 304 (by 16 above) */
    cr_expect_eq(seeds_input_of(&s, "ch08_ex4_small"), 100);
    cr_expect_eq(seeds_input_of(&s, "ch08_ex4_large"), 300);
    cr_expect_eq(seeds_answer_of(&s, "8.4(a1)"), 104);
    cr_expect_eq(seeds_answer_of(&s, "8.4(a2)"), 304);
    /* gamma 3, batch 9: 36 tokens -> 40; gamma 4: 45 -> 48, batch 13: 65 ->
     * 72; the largest batches: 4 b <= 512 at gamma 3, 128; 8 b <= 512 at
     * gamma 7, 64 */
    cr_expect_eq(seeds_input_of(&s, "ch08_ex5_gamma_a"), 3);
    cr_expect_eq(seeds_input_of(&s, "ch08_ex5_batch_a"), 9);
    cr_expect_eq(seeds_input_of(&s, "ch08_ex5_gamma_b"), 4);
    cr_expect_eq(seeds_input_of(&s, "ch08_ex5_batch_b"), 13);
    cr_expect_eq(seeds_input_of(&s, "ch08_ex5_gamma_c"), 7);
    cr_expect_eq(seeds_answer_of(&s, "8.5(a1)"), 40);
    cr_expect_eq(seeds_answer_of(&s, "8.5(a2)"), 48);
    cr_expect_eq(seeds_answer_of(&s, "8.5(a3)"), 72);
    cr_expect_eq(seeds_answer_of(&s, "8.5(c1)"), 128);
    cr_expect_eq(seeds_answer_of(&s, "8.5(c2)"), 64);
    cr_expect_eq(s.n_parts, 7);
}

Test(practice_ch08, part_slips_are_recognised)
{
    practice_set s;
    practice_build(8, 0, &s);
    /* the batch itself; a list by 16 below 256: 112; gamma tokens a
     * sequence: 27 -> 32; the unpadded 36; the batch as tokens: 9 -> 16;
     * 512 / 3 = 170; one past the largest, 129 */
    const struct {
        const char *id;
        double given;
        const char *word;
    } slips[] = {{"8.4(a1)", 100, "smallest size"}, {"8.4(a1)", 112, "steps by 8"}, {"8.5(a1)", 32, "1 + gamma"},
                 {"8.5(a1)", 36, "smallest captured size"}, {"8.5(a1)", 16, "in tokens"}, {"8.5(c1)", 170, "not gamma"},
                 {"8.5(c1)", 129, "round down"}};
    for (size_t i = 0; i < sizeof slips / sizeof slips[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, slips[i].id)->judge, slips[i].given);
        cr_expect_eq(r.verdict, VERDICT_SLIP, "%s: %g judged %s", slips[i].id, slips[i].given,
                     judge_verdict_name(r.verdict));
        cr_expect(strstr(r.hint, slips[i].word) != NULL, "%s: hint '%s'", slips[i].id, r.hint);
    }
}

Test(practice_ch08, two_hundred_seeds_stay_meaningful)
{
    int slips = 0, distinct = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s;
        cr_assert_eq(practice_build(8, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        if (seed > 0) {
            practice_set again;
            practice_build(8, seed, &again);
            seeds_check_set(&s, &again);
        }
        slips += seeds_check_slips(&s);
        unsigned long long sd = (unsigned long long)seed;
        /* 8.4: each batch pads, one on each side of 256, as the hand list says */
        int small = (int)seeds_input_of(&s, "ch08_ex4_small"), large = (int)seeds_input_of(&s, "ch08_ex4_large");
        cr_expect(small < 256 && large > 256);
        cr_expect_eq(seeds_answer_of(&s, "8.4(a1)"), replay_by_hand(small));
        cr_expect_eq(seeds_answer_of(&s, "8.4(a2)"), replay_by_hand(large));
        cr_expect(replay_by_hand(small) > small && replay_by_hand(large) > large, "seed %llu", sd);
        /* 8.5: two batches, three draft lengths, all different */
        int ga = (int)seeds_input_of(&s, "ch08_ex5_gamma_a"), gb = (int)seeds_input_of(&s, "ch08_ex5_gamma_b");
        int gc = (int)seeds_input_of(&s, "ch08_ex5_gamma_c");
        int ba = (int)seeds_input_of(&s, "ch08_ex5_batch_a"), bb = (int)seeds_input_of(&s, "ch08_ex5_batch_b");
        cr_expect(ga != gb && gb != gc && ga != gc && ba != bb, "seed %llu", sd);
        cr_expect_eq(seeds_answer_of(&s, "8.5(a1)"), replay_by_hand(ba * (1 + ga)));
        cr_expect_eq(seeds_answer_of(&s, "8.5(a2)"), replay_by_hand(ba * (1 + gb)));
        cr_expect_eq(seeds_answer_of(&s, "8.5(a3)"), replay_by_hand(bb * (1 + gb)));
        /* 512 is on the list: the largest batch is floor(512 / (1 + gamma)) */
        cr_expect_eq(seeds_answer_of(&s, "8.5(c1)"), 512 / (1 + ga));
        cr_expect_eq(seeds_answer_of(&s, "8.5(c2)"), 512 / (1 + gc));
        if (seeds_answer_of(&s, "8.5(a1)") != last)
            distinct++;
        last = seeds_answer_of(&s, "8.5(a1)");
    }
    cr_expect(distinct >= 50, "only %d changes of 8.5 in 201 seeds", distinct);
    cr_expect(slips > 500, "only %d slips checked", slips);
}
