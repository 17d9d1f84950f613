/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 6's exercise variants: seed 0 is the printed book (answers worked
 * by hand below from the config shapes, the GPU rows and the default
 * memory policy), hand answers to three figures pass, the slips are
 * recognised, and for 200 seeds every input stays in range and each
 * question keeps its regime. */
#include "practice_seeds.h"
#include "specs.h"
#include "transformer.h"

#include <string.h>

/* Zipf(1) over n adapters, b draws: sum of 1 - (1 - p_i)^b, p_i = (1/i) / H_n. */
static double zipf_distinct(int n, int b)
{
    double h = 0, e = 0;
    for (int i = 1; i <= n; i++)
        h += 1.0 / i;
    for (int i = 1; i <= n; i++)
        e += 1 - pow(1 - 1.0 / i / h, b);
    return e;
}

Test(practice_ch06, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(6, 0, &s), 0);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex1_rank"), 16);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex3_context"), 4096);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex3_slot_rank"), 64);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex4_batch"), 64);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex4_distinct"), 8);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex4_launch_us"), 2.5);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex6_adapters"), 300);
    /* 80 x (2 x 16 (8192 + 8192) + 2 x 16 (8192 + 1024)) = 65,536,000; the blog's
     * 80 x 4 x 16 x 16384 = 83,886,080, 28 % more; 2 B each; the 8B all-seven
     * (425,984 + 3 x 16 (4096 + 14336)) x 32 = 41,943,040 */
    expect_rel(seeds_answer_of(&s, "6.1(a)"), 65.536, 1e-9);
    expect_rel(seeds_answer_of(&s, "6.1(b)"), 100 * (83886080.0 / 65536000.0 - 1), 1e-9);
    expect_rel(seeds_answer_of(&s, "6.1(c)"), 131.072, 1e-9);
    expect_rel(seeds_answer_of(&s, "6.1(d)"), 41.94304, 1e-9);
    /* TP 4: (16 (8192 + 2048) x 2 + 16 (8192 + 256) x 2) x 80 x 2 B; TP 8 with
     * 1024-wide q, o shares and one KV head */
    expect_rel(seeds_answer_of(&s, "6.2(a1)"), 95.68256, 1e-9);
    expect_rel(seeds_answer_of(&s, "6.2(a2)"), 89.78432, 1e-9);
    /* 0.9 x capacity - 35,276,853,248 B of weights - 761,921,536 B of activation
     * reserve, over 4096 x 81,920 B a sequence.  An all-seven rank-64 slot at TP 4:
     * 64 ((8192 + 2048) x 2 + (8192 + 256) x 2 + (8192 + 7168) x 3) = 5,341,184 a
     * layer, x 80 x 2 B = 854,589,440 B; a rank-16 q,k,v,o one 95,682,560 B */
    double left = 0.9 * gpu_builtin("h100").mem_bytes - 35276853248.0 - 761921536.0, seq = 335544320.0;
    cr_expect_eq(seeds_answer_of(&s, "6.3(a1)"), floor(left / seq));
    cr_expect_eq(seeds_answer_of(&s, "6.3(a2)"), floor((left - 16 * 854589440.0) / seq));
    cr_expect_eq(seeds_answer_of(&s, "6.3(a3)"), 0, "64 such slots take more than the whole budget");
    cr_expect(64 * 854589440.0 > left);
    cr_expect_eq(seeds_answer_of(&s, "6.3(b1)"), floor((left - 16 * 95682560.0) / seq));
    cr_expect_eq(seeds_answer_of(&s, "6.3(b2)"), floor((left - 64 * 95682560.0) / seq));
    expect_rel(seeds_answer_of(&s, "6.3(c)"), 854.58944, 1e-9);
    /* 6.4: the fixed costs are 2 kernels x 4 targets x 80 layers x 2.5 us over the
     * base step (the step model's, batch 64 at 4k on TP 4) */
    model_spec m70 = model_builtin("llama3-70b");
    gpu_spec h100 = gpu_builtin("h100");
    step_shape sh = decode_shape(64, 4096, 4, precision_uniform(DT_BF16));
    step_cost base;
    char err[256];
    cr_assert_eq(decoder_step_cost(&m70, &h100, &sh, &base, err, sizeof err), 0, "%s", err);
    expect_rel(seeds_answer_of(&s, "6.4(a)") - seeds_answer_of(&s, "6.4(b)"), 100 * 640 * 2.5e-6 / base.time, 1e-6);
    cr_expect(seeds_answer_of(&s, "6.4(b)") > 0 && seeds_answer_of(&s, "6.4(d)") > seeds_answer_of(&s, "6.4(a)"));
    /* 2 B FLOP over D x 2 B: 64, 8, 1 */
    expect_rel(seeds_answer_of(&s, "6.5(a1)"), 64, 1e-12);
    expect_rel(seeds_answer_of(&s, "6.5(a2)"), 8, 1e-12);
    expect_rel(seeds_answer_of(&s, "6.5(a3)"), 1, 1e-12);
    /* 300 (1 - (299/300)^64) = 57.72 and at 8, 7.907; Zipf by its sum */
    expect_rel(seeds_answer_of(&s, "6.6(a)"), 300 * (1 - pow(299.0 / 300, 64)), 1e-9);
    expect_rel(seeds_answer_of(&s, "6.6(b)"), zipf_distinct(300, 64), 1e-9);
    expect_rel(seeds_answer_of(&s, "6.6(c1)"), 300 * (1 - pow(299.0 / 300, 8)), 1e-9);
    expect_rel(seeds_answer_of(&s, "6.6(c2)"), zipf_distinct(300, 8), 1e-9);
    /* 300 x 4 GPUs against 4; each GPU's share over its PCIe link */
    cr_expect_eq(seeds_answer_of(&s, "6.7(a1)"), 1200);
    cr_expect_eq(seeds_answer_of(&s, "6.7(a2)"), 4);
    expect_rel(seeds_answer_of(&s, "6.7(b1)"), 1e3 * 95682560.0 / h100.host_bw, 1e-9);
    expect_rel(seeds_answer_of(&s, "6.7(b2)"), 1e3 * 854589440.0 / h100.host_bw, 1e-9);
    /* 6.2 at TP 4 as printed; 6.5(b) pads rank 8 to 64 in 6.4's setting: the
     * padded kernels read eight times the bytes, so they add more; 6.7(c)
     * weighs each load against 20 ms: 95,682,560 B and 854,589,440 B over the
     * PCIe link, 1.495 ms = 7.5 % and 13.35 ms = 67 % of a step */
    cr_expect_eq(seeds_input_of(&s, "ch06_ex2_tp"), 4);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex5_tenant_rank"), 8);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex5_slot_rank"), 64);
    cr_expect_eq(seeds_input_of(&s, "ch06_ex7_step_ms"), 20);
    cr_expect(seeds_answer_of(&s, "6.5(b1)") > seeds_answer_of(&s, "6.5(b2)"));
    expect_rel(seeds_answer_of(&s, "6.7(c1)"), 100 * 95682560.0 / h100.host_bw / 20e-3, 1e-9);
    expect_rel(seeds_answer_of(&s, "6.7(c2)"), 100 * 854589440.0 / h100.host_bw / 20e-3, 1e-9);
    cr_expect_eq(s.n_parts, 31);
}

Test(practice_ch06, hand_answers_to_three_figures_pass)
{
    practice_set s;
    practice_build(6, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"6.1(a)", 65.5},   {"6.1(b)", 28.0},  {"6.1(c)", 131},  {"6.1(d)", 41.9},   {"6.2(a1)", 95.7},
                {"6.2(a2)", 89.8},  {"6.3(a1)", 121},  {"6.3(a3)", 0},   {"6.3(c)", 855},    {"6.5(a1)", 64},
                {"6.5(a2)", 8},     {"6.5(a3)", 1},    {"6.6(a)", 57.7}, {"6.6(c1)", 7.91},  {"6.7(a1)", 1200},
                {"6.7(a2)", 4},     {"6.7(b1)", 1.50}, {"6.7(b2)", 13.4}, {"6.7(c1)", 7.48}, {"6.7(c2)", 66.8}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
}

Test(practice_ch06, part_slips_are_recognised)
{
    practice_set s;
    practice_build(6, 0, &s);
    /* the blog's 83.9 M; a quarter of the whole 131 MB; 300 copies for 1,200 GPUs;
     * a batch's 64 requests as 64 distinct adapters */
    const seeds_slip slips[] = {{"6.1(a)", 83.9, "blog"},  {"6.2(a1)", 32.8, "1/TP"}, {"6.7(a1)", 300, "four GPUs"},
                 {"6.6(a)", 64, "share"},   {"6.3(a2)", 121, "slots"},    {"6.6(b)", 57.7, "uniform"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch06, two_hundred_seeds_stay_meaningful)
{
    int distinct = 0, named = 0;
    double last = -1;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s, again;
        cr_assert_eq(practice_build(6, seed, &s), 0, "seed %llu", (unsigned long long)seed);
        practice_build(6, seed, &again);
        seeds_check_set(&s, &again);
        named += seeds_check_slips(&s);
        unsigned long long sd = (unsigned long long)seed;
        /* slots come out of the batch; 16 of them leave room for one */
        cr_expect(seeds_answer_of(&s, "6.3(a2)") >= 1 && seeds_answer_of(&s, "6.3(a2)") < seeds_answer_of(&s, "6.3(a1)"),
                  "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "6.3(a3)") <= seeds_answer_of(&s, "6.3(a2)"));
        /* adapters cost time, more of them more; fewer distinct adapters than requests */
        cr_expect(seeds_answer_of(&s, "6.4(b)") > 0 && seeds_answer_of(&s, "6.4(a)") < seeds_answer_of(&s, "6.4(d)"));
        cr_expect(seeds_answer_of(&s, "6.6(b)") < seeds_answer_of(&s, "6.6(a)"));
        cr_expect(seeds_answer_of(&s, "6.6(a)") < seeds_input_of(&s, "ch06_ex6_batch"), "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "6.7(a1)") == 4 * seeds_input_of(&s, "ch06_ex6_adapters"));
        /* 6.2: more GPUs, a smaller share, but more than 1/TP of the whole */
        cr_expect(seeds_answer_of(&s, "6.2(a1)") > seeds_answer_of(&s, "6.2(a2)"), "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "6.2(a1)") > seeds_answer_of(&s, "6.1(c)") / seeds_input_of(&s, "ch06_ex2_tp"));
        /* 6.5(b): padding costs time, with slots at least four times the tenants' rank */
        cr_expect(seeds_answer_of(&s, "6.5(b1)") > seeds_answer_of(&s, "6.5(b2)"), "seed %llu", sd);
        cr_expect(seeds_input_of(&s, "ch06_ex5_slot_rank") >= 4 * seeds_input_of(&s, "ch06_ex5_tenant_rank"));
        /* 6.7(c): the small miss a fraction of a step, the big one most of one or more */
        cr_expect(seeds_answer_of(&s, "6.7(c1)") < 100 && seeds_answer_of(&s, "6.7(c2)") > 30, "seed %llu", sd);
        if (seeds_answer_of(&s, "6.4(a)") != last)
            distinct++;
        last = seeds_answer_of(&s, "6.4(a)");
    }
    cr_expect(distinct >= 50, "only %d changes of 6.4 in 201 seeds", distinct);
    cr_expect(named > 1000, "only %d slips checked", named);
}
