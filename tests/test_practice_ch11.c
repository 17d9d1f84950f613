/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 11's exercise variants: seed 0 is the printed book (answers
 * worked by hand below from the exercise text), and for 200 seeds the
 * inputs stay in range, the answers are judged as tests/practice_seeds.h
 * says, and each exercise keeps its point: a thousandfold rarer alarm costs
 * ln 1000 of threshold, early rejections are evidence of a drop and full
 * acceptance against it, the dashboard reads lower than the estimate. */
#include "practice_seeds.h"

#include "specdec.h"
#include "specs.h"

#include <string.h>

/* The shared checks take answers of one sign: the increments of 11.4 that
 * are negative (evidence against a drop) are checked here the same way,
 * right at the answer, close or a slip 5 % off, off (or a named slip) at
 * 3.7 times it, and the rest of the set by seeds_check_set. */
static void check_signed_set(const practice_set *s, const practice_set *again)
{
    practice_set positive = *s, positive_again = *again;
    positive.n_parts = positive_again.n_parts = 0;
    for (int i = 0; i < s->n_parts; i++) {
        const practice_part *p = &s->parts[i];
        double a = judge_expected(&p->judge);
        if (a >= 0) {
            positive.parts[positive.n_parts++] = *p;
            positive_again.parts[positive_again.n_parts++] = again->parts[i];
            continue;
        }
        cr_expect(isfinite(a), "seed %llu %s", (unsigned long long)s->seed, p->id);
        cr_expect_eq(judge_answer(&p->judge, a).verdict, VERDICT_RIGHT, "seed %llu %s", (unsigned long long)s->seed,
                     p->id);
        judge_verdict near = judge_answer(&p->judge, a * 1.05).verdict;
        cr_expect(near == VERDICT_CLOSE || near == VERDICT_SLIP, "seed %llu %s: 5%% off judged %s",
                  (unsigned long long)s->seed, p->id, judge_verdict_name(near));
        judge_result far = judge_answer(&p->judge, a * 3.7);
        int own = 0;
        for (int k = 0; k < p->judge.n_slips; k++)
            own |= far.hint == p->judge.slips[k].hint;
        cr_expect(far.verdict == VERDICT_OFF || (far.verdict == VERDICT_SLIP && own), "seed %llu %s: x3.7 judged %s",
                  (unsigned long long)s->seed, p->id, judge_verdict_name(far.verdict));
    }
    seeds_check_set(&positive, &positive_again);
}

/* The CUSUM delay bound worked here from its definition, independently of
 * the library: (h + ln((1 - a1) / (1 - a0))) over the expected increment at
 * a1, E[accepted] ln(a1 / a0) + P(a rejection) ln((1 - a1) / (1 - a0)),
 * with E[accepted] = a1 (1 - a1^g) / (1 - a1) and P(a rejection) = 1 - a1^g. */
static double delay_by_hand(double a0, double a1, int g, double h)
{
    double accepted = a1 * (1 - pow(a1, g)) / (1 - a1), rejected = 1 - pow(a1, g);
    double step = log((1 - a1) / (1 - a0));
    return (h + step) / (accepted * log(a1 / a0) + rejected * step);
}

Test(practice_ch11, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(11, 0, &s), 0);
    /* h = ln 10^6 = 13.815511, ln 10^9 = 20.723266 */
    cr_expect_eq(seeds_input_of(&s, "ch11_ex3_exp_a"), 6);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex3_exp_b"), 9);
    expect_rel(seeds_answer_of(&s, "11.3(a)"), 6 * 2.302585093, 1e-9);
    expect_rel(seeds_answer_of(&s, "11.3(b)"), 9 * 2.302585093, 1e-9);
    /* 0.8 -> 0.6, gamma 4: a round of k < 4 adds k ln(0.6/0.8) + ln(0.4/0.2)
     * = k ln 0.75 + ln 2: 0.693147, 0.405465, 3 x -0.287682 + 0.693147 =
     * -0.169899; all four: 4 ln 0.75 = -1.150728 */
    cr_expect_eq(seeds_input_of(&s, "ch11_ex4_alpha0"), 0.8);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex4_alpha1"), 0.6);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex4_gamma"), 4);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex4_most"), 3);
    expect_rel(seeds_answer_of(&s, "11.4(a1)"), 0.69314718, 1e-8);
    expect_rel(seeds_answer_of(&s, "11.4(a2)"), 0.69314718 - 0.28768207, 1e-8);
    expect_rel(seeds_answer_of(&s, "11.4(a3)"), 0.69314718 - 3 * 0.28768207, 1e-7);
    expect_rel(seeds_answer_of(&s, "11.4(a4)"), -4 * 0.28768207, 1e-8);
    /* at 0.6: E[accepted] = 0.6 x 0.8704 / 0.4 = 1.3056, P(rejection) =
     * 0.8704: I1 = 1.3056 ln 0.75 + 0.8704 ln 2 = 0.227718; (13.815511 +
     * 0.693147) / 0.227718 = 63.713 rounds, (20.723266 + 0.693147) /
     * 0.227718 = 94.048; gamma 8: 1.4748058 ln 0.75 + 0.9832038 ln 2 =
     * 0.257230, 14.508658 / 0.257230 = 56.403 */
    expect_rel(seeds_answer_of(&s, "11.5(a)"), 14.508658 / 0.2277176, 1e-5);
    expect_rel(seeds_answer_of(&s, "11.5(b)"), 21.416413 / 0.2277176, 1e-5);
    expect_rel(seeds_answer_of(&s, "11.5(c)"), 14.508658 / 0.2572297, 1e-5);
    /* 2500 accepted, 600 rejections in 1000 rounds: 2500 / 3100 = 0.806452;
     * the dashboard 2500 / 4000 = 0.625 */
    cr_expect_eq(seeds_input_of(&s, "ch11_ex6_rounds"), 1000);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex6_accepted"), 2500);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex6_rejections"), 600);
    expect_rel(seeds_answer_of(&s, "11.6(a)"), 2500.0 / 3100, 1e-12);
    expect_rel(seeds_answer_of(&s, "11.6(b)"), 0.625, 1e-12);
    /* 11.2 at batch 128 of 2048 tokens on 4 GPUs: LLaMA-3.2-1B 1,235,814,400 x 2 / 4
     * = 617,907,200 B of weights and 2 x 16 layers x 8 KV heads x 64 x 2 B / 4 = 8,192 B
     * a token: + 8,192 x 262,144 = 2,765,390,848 B; LLaMA-3-8B 8,030,261,248 x 2 / 4 =
     * 4,015,130,624 B + 32,768 x 262,144 = 12,605,065,216 B; a target sequence holds
     * 81,920 x 2048 = 167,772,160 B a GPU: 75.13 of them */
    cr_expect_eq(seeds_input_of(&s, "ch11_ex2_batch"), 128);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex2_context"), 2048);
    expect_rel(seeds_answer_of(&s, "11.2(a)"), 2.765390848, 1e-9);
    expect_rel(seeds_answer_of(&s, "11.2(b)"), 12.605065216, 1e-9);
    expect_rel(seeds_answer_of(&s, "11.2(c)"), 12605065216.0 / 167772160, 1e-9);
    /* 11.7: 1.08 is inside the band (1.00 to 1.10): off stays off, on stays
     * on; 1.50 after 200 rounds lacks the 1000 rounds; 0.97 is a loss */
    cr_expect_eq(seeds_input_of(&s, "ch11_ex7_pred_ab"), 1.08);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex7_rounds_ab"), 5000);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex7_pred_c"), 1.5);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex7_rounds_c"), 200);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex7_pred_d"), 0.97);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex7_rounds_d"), 200);
    cr_expect_eq(seeds_answer_of(&s, "11.7(a)"), 0);
    cr_expect_eq(seeds_answer_of(&s, "11.7(b)"), 1);
    cr_expect_eq(seeds_answer_of(&s, "11.7(c)"), 0);
    cr_expect_eq(seeds_answer_of(&s, "11.7(d)"), 0);
    /* 11.1 at alpha 0.7, 2048 tokens: batch 1 worked in test_11 to 2.448
     * within 1 %; the sequences that fit, usable 0.9 x 81,559 MiB less the
     * target's 35,276,853,248 B and the draft's 617,907,200 B of weights and
     * the reserve of 696,254,464 + 65,667,072 B, over (81,920 + 8,192) B a
     * token x (2048 + 4 + 1) tokens */
    cr_expect_eq(seeds_input_of(&s, "ch11_ex1_alpha"), 0.7);
    cr_expect_eq(seeds_input_of(&s, "ch11_ex1_context"), 2048);
    expect_rel(seeds_answer_of(&s, "11.1(a1)"), 2.448, 0.01);
    double left = 0.9 * 81559 * 1048576.0 - 35276853248.0 - 617907200.0 - 696254464.0 - 65667072.0;
    cr_expect_eq(seeds_answer_of(&s, "11.1(b1)"), floor(left / ((81920.0 + 8192) * (2048 + 4 + 1))));
    cr_expect_eq(s.n_parts, 22);
}

Test(practice_ch11, hand_answers_to_three_figures_pass)
{
    practice_set s;
    practice_build(11, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"11.3(a)", 13.8},   {"11.3(b)", 20.7},  {"11.4(a1)", 0.693}, {"11.4(a2)", 0.405},
                {"11.4(a3)", -0.170}, {"11.4(a4)", -1.15}, {"11.6(a)", 0.806}, {"11.6(b)", 0.625},
                {"11.5(a)", 63.7},   {"11.5(b)", 94.0},  {"11.5(c)", 56.4}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
}

Test(practice_ch11, part_slips_are_recognised)
{
    practice_set s;
    practice_build(11, 0, &s);
    /* the exponent 6 for h; log10 2 = 0.301; the sign turned: 1.1507; the
     * capped round with a (1 - alpha) factor: -1.1507 + 0.6931 = -0.4576;
     * accepted over proposed 0.625; rounds without a rejection 0.4 */
    const seeds_slip slips[] = {{"11.3(a)", 6, "nats"},         {"11.4(a1)", 0.301, "natural"}, {"11.4(a4)", 1.151, "P1 / P0"},
                 {"11.4(a4)", -0.4576, "no (1 - alpha)"}, {"11.6(a)", 0.625, "first rejection"},
                 {"11.6(a)", 0.4, "without a rejection"}, {"11.6(b)", 0.806, "every proposed draft"},
                 {"11.5(a)", 60.67, "overshoots"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch11, two_hundred_seeds_stay_meaningful)
{
    int slips = 0, distinct = 0, band = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s;
        cr_assert_eq(practice_build(11, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        if (seed > 0) {
            practice_set again;
            practice_build(11, seed, &again);
            check_signed_set(&s, &again);
        }
        slips += seeds_check_slips(&s);
        unsigned long long sd = (unsigned long long)seed;
        /* 11.3: h = k ln 10 */
        expect_rel(seeds_answer_of(&s, "11.3(b)") - seeds_answer_of(&s, "11.3(a)"),
                            (seeds_input_of(&s, "ch11_ex3_exp_b") - seeds_input_of(&s, "ch11_ex3_exp_a")) *
                                log(10),
                            1e-9);
        /* 11.4: a round without an accepted draft is the strongest evidence of
         * a drop, one with all accepted is evidence against it; each step of
         * one more accepted adds ln(alpha1 / alpha0); none within 0.05 of 0 */
        double a0 = seeds_input_of(&s, "ch11_ex4_alpha0"), a1 = seeds_input_of(&s, "ch11_ex4_alpha1");
        double g = seeds_input_of(&s, "ch11_ex4_gamma");
        cr_expect(a1 < a0);
        cr_expect(seeds_answer_of(&s, "11.4(a1)") > 0 && seeds_answer_of(&s, "11.4(a4)") < 0, "seed %llu", sd);
        expect_rel(seeds_answer_of(&s, "11.4(a1)") - seeds_answer_of(&s, "11.4(a2)"), -log(a1 / a0),
                            1e-9);
        expect_rel(seeds_answer_of(&s, "11.4(a4)"), g * log(a1 / a0), 1e-9);
        const char *ids[] = {"11.4(a1)", "11.4(a2)", "11.4(a3)", "11.4(a4)"};
        for (int i = 0; i < 4; i++)
            cr_expect(fabs(seeds_answer_of(&s, ids[i])) >= 0.05, "seed %llu %s", sd, ids[i]);
        /* 11.5: the bound from its definition; a longer draft notices sooner */
        double ha = seeds_answer_of(&s, "11.3(a)"), hb = seeds_answer_of(&s, "11.3(b)");
        expect_rel(seeds_answer_of(&s, "11.5(a)"), delay_by_hand(a0, a1, (int)g, ha), 1e-9);
        expect_rel(seeds_answer_of(&s, "11.5(b)"), delay_by_hand(a0, a1, (int)g, hb), 1e-9);
        expect_rel(seeds_answer_of(&s, "11.5(c)"), delay_by_hand(a0, a1, 8, ha), 1e-9);
        if (g < 8)
            cr_expect(seeds_answer_of(&s, "11.5(c)") < seeds_answer_of(&s, "11.5(a)"), "seed %llu", sd);
        /* 11.6: counters a server could write, the estimate above the dashboard */
        double n = seeds_input_of(&s, "ch11_ex6_rounds"), acc = seeds_input_of(&s, "ch11_ex6_accepted");
        double rej = seeds_input_of(&s, "ch11_ex6_rejections");
        cr_expect(rej < n && acc >= (n - rej) * 4 && acc <= (n - rej) * 4 + rej * 3, "seed %llu", sd);
        expect_rel(seeds_answer_of(&s, "11.6(a)"), acc / (acc + rej), 1e-12);
        cr_expect(seeds_answer_of(&s, "11.6(b)") < seeds_answer_of(&s, "11.6(a)"));
        /* 11.1: batch 128 fits and gains less than batch 1; the loss starts
         * inside memory, the batch before it still gains (the step model
         * evaluated at both); gamma 2 never loses there */
        {
            model_spec t = model_builtin("llama3-70b"), d = model_builtin("llama3.2-1b");
            gpu_spec g = gpu_builtin("h100");
            double al = seeds_input_of(&s, "ch11_ex1_alpha"), fit = seeds_answer_of(&s, "11.1(b1)");
            int cross = (int)seeds_answer_of(&s, "11.1(b2)");
            cr_expect(fit >= 128 && cross > 1 && cross <= fit, "seed %llu: fit %g, loses at %d", sd, fit, cross);
            cr_expect(seeds_answer_of(&s, "11.1(a2)") < seeds_answer_of(&s, "11.1(a1)"), "seed %llu", sd);
            spec_setup su = spec_setup_default(&t, &d, &g, 4, cross, (int)seeds_input_of(&s, "ch11_ex1_context"));
            spec_estimate e;
            char err[256];
            cr_assert_eq(spec_estimate_compute(&su, al, 4, &e, err, sizeof err), 0, "%s", err);
            cr_expect(e.speedup_roofline < 1, "seed %llu: %g at batch %d", sd, e.speedup_roofline, cross);
            su.batch = cross - 1;
            cr_assert_eq(spec_estimate_compute(&su, al, 4, &e, err, sizeof err), 0, "%s", err);
            cr_expect(e.speedup_roofline >= 1, "seed %llu: %g a batch earlier", sd, e.speedup_roofline);
            /* a round of gamma 4 yields at most E[N] tokens for 1 + 4c steps of cost: below E[N] */
            cr_expect(seeds_answer_of(&s, "11.1(a1)") < (1 - pow(al, 5)) / (1 - al), "seed %llu", sd);
        }
        /* 11.2: the replica holds the 8B draft beside the target, weights and the KV
         * of context + 5 tokens a sequence (81,920 + 32,768 B a token per GPU) in the
         * usable 90 % of the driver's 81,559 MiB (the activation reserve only makes it tighter) */
        double b2 = seeds_input_of(&s, "ch11_ex2_batch"), ctx = seeds_input_of(&s, "ch11_ex2_context");
        /* bf16 weights per GPU at TP 4: 70,553,706,496 x 2 / 4 = 35,276,853,248 B
         * and 8,030,261,248 x 2 / 4 = 4,015,130,624 B */
        cr_expect(35276853248.0 + 4015130624.0 + (81920.0 + 32768) * b2 * (ctx + 5) <= 0.9 * 81559 * 1048576.0,
                  "seed %llu: batch %g of %g tokens", sd, b2, ctx);
        /* each draft's bytes from its weights and 8,192 / 32,768 B of KV a token per GPU */
        expect_rel(seeds_answer_of(&s, "11.2(a)"), (617907200.0 + 8192 * b2 * ctx) / 1e9, 1e-9);
        expect_rel(seeds_answer_of(&s, "11.2(b)"), (4015130624.0 + 32768 * b2 * ctx) / 1e9, 1e-9);
        expect_rel(seeds_answer_of(&s, "11.2(c)"), (4015130624.0 + 32768 * b2 * ctx) / (81920 * ctx), 1e-9);
        /* 11.7: the rule as the exercise states it */
        const char *ids7[4] = {"11.7(a)", "11.7(b)", "11.7(c)", "11.7(d)"};
        const int on7[4] = {0, 1, 0, 1};
        const double p7[4] = {seeds_input_of(&s, "ch11_ex7_pred_ab"), seeds_input_of(&s, "ch11_ex7_pred_ab"),
                              seeds_input_of(&s, "ch11_ex7_pred_c"), seeds_input_of(&s, "ch11_ex7_pred_d")};
        const double n7[4] = {seeds_input_of(&s, "ch11_ex7_rounds_ab"), seeds_input_of(&s, "ch11_ex7_rounds_ab"),
                              seeds_input_of(&s, "ch11_ex7_rounds_c"), seeds_input_of(&s, "ch11_ex7_rounds_d")};
        for (int i = 0; i < 4; i++) {
            int want = on7[i] ? p7[i] >= 1.00 : p7[i] >= 1.10 && n7[i] >= 1000;
            cr_expect_eq(seeds_answer_of(&s, ids7[i]), want, "seed %llu %s", sd, ids7[i]);
        }
        band += seeds_answer_of(&s, "11.7(a)") != seeds_answer_of(&s, "11.7(b)");
        if (seeds_answer_of(&s, "11.4(a2)") != last)
            distinct++;
        last = seeds_answer_of(&s, "11.4(a2)");
    }
    cr_expect(distinct >= 50, "only %d changes of 11.4 in 201 seeds", distinct);
    cr_expect(band >= 20, "only %d seeds where 11.7(a) and (b) part ways", band);
    cr_expect(slips > 1000, "only %d slips checked", slips);
}
