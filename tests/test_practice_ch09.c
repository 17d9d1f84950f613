/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 9's exercise variants: seed 0 is the printed book (answers worked
 * by hand below from the exercise text), and for 200 seeds the inputs stay
 * in range, the answers are judged as tests/practice_seeds.h says, and each
 * exercise keeps its regime: frame counts the VAE takes, both queues of 9.6
 * stable, the 8-way job the faster at low load. */
#include "practice_seeds.h"

#include <string.h>

/* M/D/c time in system by the chapter's approximation, worked here
 * independently of the library: Erlang C from its series, the M/M/c wait
 * C S / (c - a), halved for fixed service. */
static double mdc_time_by_hand(double per_hour, double service, int c)
{
    double a = per_hour * service / 3600, term = 1, sum = 0;
    for (int k = 0; k < c; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    double top = term * c / (c - a); /* a^c / c! / (1 - a / c) */
    double erlang = top / (sum + top);
    return service + 0.5 * erlang * service / (c - a);
}

Test(practice_ch09, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(9, 0, &s), 0);
    /* 81 frames: 1 + 80 / 4 = 21 latent frames of 480/16 x 832/16 = 30 x 52
     * tokens: 32,760; the estimate 81 / 4 x 1560 = 31,590; near 100 the VAE
     * takes 97 = 1 + 4 x 24 and 101 */
    cr_expect_eq(seeds_input_of(&s, "ch09_ex1_frames"), 81);
    cr_expect_eq(seeds_input_of(&s, "ch09_ex1_target"), 100);
    cr_expect_eq(seeds_answer_of(&s, "9.1(a1)"), 21);
    cr_expect_eq(seeds_answer_of(&s, "9.1(a2)"), 32760);
    expect_rel(seeds_answer_of(&s, "9.1(b)"), 31590, 1e-12);
    cr_expect_eq(seeds_answer_of(&s, "9.1(c1)"), 97);
    cr_expect_eq(seeds_answer_of(&s, "9.1(c2)"), 101);
    /* Wan 14B, 81 frames of 1280 x 720: 21 x 45 x 80 = 75,600 tokens; a
     * forward is 2 x 75,600 x 11,953,766,400 (40 x (6 x 5120^2 + 2 x 5120 x
     * 13824)) + 4 x 40 x 75,600^2 x 5120 + cross 4 x 40 x 75,600 x 512 x
     * 5120 + 2 x 512 x 2 x 5120^2 x 40 = 1.807409e15 + 4.682023e15 +
     * 3.38564e13 = 6.523288e15; twice with guidance */
    double n = 75600, lin = 2 * n * 40 * (6 * 5120.0 * 5120 + 2 * 5120.0 * 13824), att = 4 * 40 * n * n * 5120;
    double cross = 4 * 40 * n * 512 * 5120 + 2 * 512 * 2 * 5120.0 * 5120 * 40;
    expect_rel(seeds_answer_of(&s, "9.2(a)"), 2 * (lin + att + cross) / 1e15, 1e-9);
    /* 50 steps at 45% of 989.4 TFLOP/s: 50 x 13.0466e15 / 445.23e12 = 1465.1
     * s = 24.42 min with guidance, 12.21 without; the text encoder and the VAE
     * add the rest, under 1% */
    double s_per_flop = 1 / (0.45 * 989.4e12);
    expect_rel(seeds_answer_of(&s, "9.2(c1)"), 50 * 2 * (lin + att + cross) * s_per_flop / 60, 0.01);
    expect_rel(seeds_answer_of(&s, "9.2(c2)"), 50 * (lin + att + cross) * s_per_flop / 60, 0.01);
    cr_expect(seeds_answer_of(&s, "9.2(c1)") > 50 * 2 * (lin + att + cross) * s_per_flop / 60);
    /* crossovers M / (2 n_L d): 11,953,766,400 / (2 x 40 x 5120) = 29,184;
     * HunyuanVideo 6 x 3072 = 18,432; at 720p (3600 tokens a latent frame)
     * 8.1 latent frames, so 9: 1 + 4 x 8 = 33 frames */
    cr_expect_eq(seeds_input_of(&s, "ch09_ex3_width"), 1280);
    expect_rel(seeds_answer_of(&s, "9.3(a1)"), 29184, 1e-12);
    expect_rel(seeds_answer_of(&s, "9.3(a2)"), 18432, 1e-12);
    cr_expect_eq(seeds_answer_of(&s, "9.3(b)"), 33);
    /* two compute-bound videos take twice one's time: a gain of 1 */
    cr_expect_eq(seeds_input_of(&s, "ch09_ex4_batch"), 2);
    expect_rel(seeds_answer_of(&s, "9.4(a1)"), 1, 1e-9);
    expect_rel(seeds_answer_of(&s, "9.4(a2)"), 1, 1e-9);
    /* 81 frames of 720p: 28e9 of DiT weights + 11.36e9 of text encoder +
     * 75,600 x 58,368 x 2 B of activations = 48.185 GB, over the L40S's 48;
     * split two ways 28e9 + 11.36e9 +
     * 37,800 x 58,368 x 2 = 43.773 */
    cr_expect_eq(seeds_input_of(&s, "ch09_ex5_frames"), 81);
    expect_rel(seeds_answer_of(&s, "9.5(a)"), 48.1852416, 1e-9);
    expect_rel(seeds_answer_of(&s, "9.5(c)"), 43.7726208, 1e-9);
    /* 8 GPUs, a step every 13.0466e15 / 445.23e12 = 29.30 s each: 0.273 a second */
    cr_expect_eq(seeds_input_of(&s, "ch09_ex7_gpus"), 8);
    expect_rel(seeds_answer_of(&s, "9.7(b)"), 8 / (2 * (lin + att + cross) * s_per_flop), 1e-6);
    /* the printed request times, 261 s 8-way and 1467 s on one GPU.
     * 2 an hour on the 8-way server: rho = 0.145, Wq = 0.145 x 261 /
     * (2 x 0.855) = 22.1316 s: 283.1316 s = 4.71886 min.  Eight GPUs at a =
     * 0.815: Erlang C 2.38e-6, the wait 2.4e-4 s: 1467 s = 24.45 min.  12 an
     * hour: rho = 0.87, Wq = 0.87 x 261 / 0.26 = 873.346 s: 18.9058 min;
     * eight GPUs at a = 4.89 by mdc_time_by_hand.  Capacities 3600 / 261 =
     * 13.793 and 8 x 3600 / 1467 = 19.632 jobs an hour */
    cr_expect_eq(seeds_input_of(&s, "ch09_ex6_service_sp"), 261);
    cr_expect_eq(seeds_input_of(&s, "ch09_ex6_service_one"), 1467);
    cr_expect_eq(seeds_input_of(&s, "ch09_ex6_low"), 2);
    cr_expect_eq(seeds_input_of(&s, "ch09_ex6_high"), 12);
    expect_rel(seeds_answer_of(&s, "9.6(a1)"), 283.13158 / 60, 1e-6);
    expect_rel(seeds_answer_of(&s, "9.6(a2)"), 24.45, 1e-6);
    expect_rel(seeds_answer_of(&s, "9.6(b1)"), 1134.34615 / 60, 1e-6);
    expect_rel(seeds_answer_of(&s, "9.6(b2)"), mdc_time_by_hand(12, 1467, 8) / 60, 1e-9);
    expect_rel(seeds_answer_of(&s, "9.6(c1)"), 3600.0 / 261, 1e-12);
    expect_rel(seeds_answer_of(&s, "9.6(c2)"), 8 * 3600.0 / 1467, 1e-12);
    /* 50 steps: 52 records of 32 bytes and the 200-byte payload: 1864 */
    cr_expect_eq(seeds_input_of(&s, "ch09_ex7_steps"), 50);
    cr_expect_eq(seeds_input_of(&s, "ch09_ex7_payload"), 200);
    cr_expect_eq(seeds_answer_of(&s, "9.7(a)"), 1864);
    cr_expect_eq(s.n_parts, 23);
}

Test(practice_ch09, hand_answers_to_three_figures_pass)
{
    practice_set s;
    practice_build(9, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"9.1(a1)", 21},   {"9.1(a2)", 32760}, {"9.1(b)", 31600},  {"9.1(c1)", 97},
                {"9.1(c2)", 101},  {"9.6(a1)", 4.72},  {"9.6(a2)", 24.5},  {"9.6(b1)", 18.9},
                {"9.6(b2)", 25.0}, {"9.6(c1)", 13.8},  {"9.6(c2)", 19.6},  {"9.7(a)", 1864},
                {"9.2(a)", 13.0},  {"9.2(c1)", 24.4},  {"9.2(c2)", 12.2},
                {"9.3(a1)", 29200}, {"9.3(a2)", 18400}, {"9.3(b)", 33},   {"9.4(a1)", 1.00},
                {"9.4(a2)", 1.00}, {"9.5(a)", 48.2},   {"9.5(c)", 43.8},
                {"9.7(b)", 0.273}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
}

Test(practice_ch09, part_slips_are_recognised)
{
    practice_set s;
    practice_build(9, 0, &s);
    /* 80 / 4 = 20 latent frames; 20 x 1560 = 31,200 tokens; 96 and 100 are
     * multiples of 4; the 8-way wait alone is 22.13 s = 0.369 min; the M/M/1
     * wait doubles it: (44.26 + 261) / 60 = 5.088 min; eight GPUs as one
     * server: 8 x 13.79 = 110.3 an hour; no DONE record: 1832 bytes */
    const seeds_slip slips[] = {{"9.1(a1)", 20, "first frame"}, {"9.1(a2)", 31200, "first frame"}, {"9.1(c1)", 96, "1 + 4k"},
                 {"9.1(c2)", 100, "1 + 4k"},     {"9.6(a1)", 0.369, "wait"},        {"9.6(a1)", 5.09, "M/D/1"},
                 {"9.6(c1)", 110.3, "one server"}, {"9.7(a)", 1832, "DONE"},
                 {"9.2(a)", 3.683, "self-attention"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch09, two_hundred_seeds_stay_meaningful)
{
    int slips = 0, distinct = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s;
        cr_assert_eq(practice_build(9, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        if (seed > 0) {
            practice_set again;
            practice_build(9, seed, &again);
            seeds_check_set(&s, &again);
        }
        slips += seeds_check_slips(&s);
        unsigned long long sd = (unsigned long long)seed;
        /* 9.1: frames of the form 1 + 4k, 30 x 52 tokens a latent frame; the
         * target strictly between two counts the VAE takes */
        double frames = seeds_input_of(&s, "ch09_ex1_frames"), target = seeds_input_of(&s, "ch09_ex1_target");
        cr_expect_eq(fmod(frames - 1, 4), 0, "seed %llu: %g frames", sd, frames);
        cr_expect_eq(seeds_answer_of(&s, "9.1(a1)"), 1 + (frames - 1) / 4);
        cr_expect_eq(seeds_answer_of(&s, "9.1(a2)"), seeds_answer_of(&s, "9.1(a1)") * 30 * 52);
        double below = seeds_answer_of(&s, "9.1(c1)"), above = seeds_answer_of(&s, "9.1(c2)");
        cr_expect(below < target && target < above && above - below == 4, "seed %llu: %g < %g < %g", sd, below, target,
                  above);
        /* 9.6: both placements stable at both loads (an unstable queue has
         * no answer: practice_build fails), against the hand formula; the
         * 8-way job is faster at the low load */
        double sp = seeds_input_of(&s, "ch09_ex6_service_sp"), one = seeds_input_of(&s, "ch09_ex6_service_one");
        double low = seeds_input_of(&s, "ch09_ex6_low"), high = seeds_input_of(&s, "ch09_ex6_high");
        cr_expect(high * sp < 3600 && high * one < 8 * 3600);
        expect_rel(seeds_answer_of(&s, "9.6(b2)"), mdc_time_by_hand(high, one, 8) / 60, 1e-9);
        expect_rel(seeds_answer_of(&s, "9.6(a2)"), mdc_time_by_hand(low, one, 8) / 60, 1e-9);
        expect_rel(seeds_answer_of(&s, "9.6(a1)"), mdc_time_by_hand(low, sp, 1) / 60, 1e-9);
        cr_expect(seeds_answer_of(&s, "9.6(a1)") < seeds_answer_of(&s, "9.6(a2)"));
        cr_expect(seeds_answer_of(&s, "9.6(b1)") > seeds_answer_of(&s, "9.6(a1)"));
        /* 9.2: Wan's released sizes */
        double w = seeds_input_of(&s, "ch09_ex2_width"), h = seeds_input_of(&s, "ch09_ex2_height");
        cr_expect((w == 1280 && h == 720) || (w == 832 && h == 480), "seed %llu: %g x %g", sd, w, h);
        /* 9.2(c): 50 steps of part a's FLOPs at 45% of the H100's peak,
         * within 1%, the text encoder and the VAE on top */
        double hand = 50 * seeds_answer_of(&s, "9.2(a)") * 1e15 / (0.45 * 989.4e12) / 60;
        cr_expect(seeds_answer_of(&s, "9.2(c1)") >= hand && seeds_answer_of(&s, "9.2(c1)") <= 1.01 * hand,
                  "seed %llu", sd);
        /* 9.3(b): (w / 16) (h / 16) tokens a latent frame, rounded up to whole
         * latent frames, 1 + 4 (latent - 1) frames */
        double w3 = seeds_input_of(&s, "ch09_ex3_width"), h3 = seeds_input_of(&s, "ch09_ex3_height");
        cr_expect((w3 == 1280 && h3 == 720) || (w3 == 832 && h3 == 480), "seed %llu: %g x %g", sd, w3, h3);
        cr_expect_eq(seeds_answer_of(&s, "9.3(b)"), 1 + 4 * (ceil(29184 / (w3 / 16 * h3 / 16)) - 1));
        /* 9.4: a compute-bound step gains nothing from a batch */
        expect_rel(seeds_answer_of(&s, "9.4(a1)"), 1, 1e-9);
        expect_rel(seeds_answer_of(&s, "9.4(a2)"), 1, 1e-9);
        /* 9.5: the printed regime, too big for the L40S's 48 GB alone, inside
         * it offloaded or split two ways; weights 28 + 11.36 GB, activations
         * 58,368 x 2 B a token, halved by the split */
        double f5 = seeds_input_of(&s, "ch09_ex5_frames"), n5 = (1 + (f5 - 1) / 4) * 45 * 80;
        cr_expect_eq(fmod(f5 - 1, 4), 0);
        cr_expect(seeds_answer_of(&s, "9.5(a)") > 48 && seeds_answer_of(&s, "9.5(c)") < 48, "seed %llu: %g frames", sd,
                  f5);
        /* offloaded (unboxed, part b): only the DiT phase stays, under 48 GB */
        cr_expect(28 + n5 * 58368 * 2 / 1e9 < 48, "seed %llu: %g frames", sd, f5);
        expect_rel(seeds_answer_of(&s, "9.5(a)"), 39.36 + n5 * 58368 * 2 / 1e9, 1e-9);
        expect_rel(seeds_answer_of(&s, "9.5(c)"), 39.36 + n5 / 2 * 58368 * 2 / 1e9, 1e-9);
        /* 9.7(b): a step of the default job (81 frames of 720p, two
         * forwards of 6.523288e15 FLOP, worked above) at 45% of the peak on
         * each GPU; a few fsyncs a second at most, nothing for a disk */
        double g7 = seeds_input_of(&s, "ch09_ex7_gpus");
        expect_rel(seeds_answer_of(&s, "9.7(b)"), g7 / (2 * 6.523288e15 / (0.45 * 989.4e12)), 1e-6);
        cr_expect(seeds_answer_of(&s, "9.7(b)") < 10);
        /* 9.7: 32-byte headers on steps + 2 records, the payload once */
        cr_expect_eq(seeds_answer_of(&s, "9.7(a)"),
                     32 * (seeds_input_of(&s, "ch09_ex7_steps") + 2) + seeds_input_of(&s, "ch09_ex7_payload"));
        if (seeds_answer_of(&s, "9.6(b1)") != last)
            distinct++;
        last = seeds_answer_of(&s, "9.6(b1)");
    }
    cr_expect(distinct >= 50, "only %d changes of 9.6 in 201 seeds", distinct);
    cr_expect(slips > 1000, "only %d slips checked", slips);
}
