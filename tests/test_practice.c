/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Exercise variants: seed 0 is the printed chapter 12 (answers worked by hand
 * below from the exercise text), and for 200 seeds every input stays in its
 * stated range, every answer is finite and judged right, a 5 % error is not,
 * and the 12.1 cluster holds its optimizer state. */
#include "practice.h"
#include "practice_seeds.h"
#include "specs.h"
#include "train.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* An input as the prose shows it (a model's name). */
static const char *input_text(const practice_set *s, const char *name)
{
    static char buf[64];
    const practice_input *in = practice_input_named(s, name);
    cr_assert(in != NULL, "no input %s", name);
    return practice_input_text(in, buf, sizeof buf);
}

/* The table's model of that name. */
static int model_named(const char *name, model_spec *out)
{
    model_table t;
    char err[256];
    int found = 0;
    cr_assert_eq(model_table_builtin(&t, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < t.n && !found; i++)
        if (strcmp(t.rows[i].name, name) == 0)
            *out = t.rows[i], found = 1;
    model_table_free(&t);
    return found;
}

Test(practice, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(12, 0, &s), 0);
    /* the printed inputs: 13B, 2T tokens, 30 days, 40 % MFU */
    cr_expect_eq(seeds_input_of(&s, "ch12_ex1_params_b"), 13);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex1_tokens_t"), 2);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex1_days"), 30);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex1_mfu_pct"), 40);
    /* 6 x 13e9 x 2e12 = 1.56e23; / (989.4e12 x 0.4) = 3.941783e8 GPU-s over
     * 2,592,000 s: 152.08 -> 160; at twice the peak 76.04 -> 80; 80 GPUs take
     * 3.941783e8 / 80 / 86400 = 57.028 days */
    cr_expect_eq(seeds_answer_of(&s, "12.1(a)"), 80);
    cr_expect_eq(seeds_answer_of(&s, "12.1(b)"), 160);
    expect_rel(seeds_answer_of(&s, "12.1(c)"), 57.028, 1e-4);
    /* 1,024, 8,192 and 16,384 GPUs: lost share 0.1 G / 16384 */
    cr_expect_eq(seeds_input_of(&s, "ch12_ex5_size1"), 1024);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex5_size2"), 8192);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex5_size3"), 16384);
    expect_rel(seeds_answer_of(&s, "12.5(a1)"), 99.375, 1e-9);
    expect_rel(seeds_answer_of(&s, "12.5(a2)"), 95.0, 1e-9);
    expect_rel(seeds_answer_of(&s, "12.5(a3)"), 90.0, 1e-9);
    /* 95 %: 0.05 x 163840 = 8192; 466 / (54 x 16384) x 8192 = 466 / 108 = 4.3148 */
    expect_rel(seeds_answer_of(&s, "12.5(b)"), 8192, 1e-6);
    expect_rel(seeds_answer_of(&s, "12.5(c)"), 466.0 / 108, 1e-9);
    /* 3.8e25 / (989.4e12 x 30.84e6 x 3600) = 34.5935 %; 16,384 GPUs at 41 %
     * and 90 %: 3.8e25 / (16384 x 989.4e12 x 0.369) / 86400 = 73.528 days;
     * 34.5935 / 41 = 84.374 % */
    expect_rel(seeds_answer_of(&s, "12.7(a)"), 34.5935, 1e-5);
    expect_rel(seeds_answer_of(&s, "12.7(b)"), 73.528, 1e-4);
    expect_rel(seeds_answer_of(&s, "12.7(c)"), 84.374, 1e-4);
    /* 12.2, LLaMA-3-70B at 8k reported at 53 %: full recomputation re-runs a
     * forward, a third of every term: 4/3, MFU 53 x 3/4 = 39.75 %; selective
     * adds 4 L s d = 4 x 80 x 8192 x 8192 = 21,474,836,480 over 6N + 12 L s d
     * = 417,018,200,064 + 64,424,509,440; at 131,072: 343,597,383,680 over
     * 417,018,200,064 + 1,030,792,151,040 */
    cr_expect_str_eq(input_text(&s, "ch12_ex2_model"), "LLaMA-3-70B");
    cr_expect_eq(seeds_input_of(&s, "ch12_ex2_reported_pct"), 53);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex2_seq"), 8192);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex2_seq_long"), 131072);
    expect_rel(seeds_answer_of(&s, "12.2(a)"), 4.0 / 3, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.2(b)"), 39.75, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.2(c1)"), 1 + 21474836480.0 / 481442709504.0, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.2(c2)"), 1 + 343597383680.0 / 1447810351104.0, 1e-12);
    /* 12.3: Korthikanti 34 + 5 x 64 x s / 8192: 114 at 2,048, 354 at 8,192;
     * modern per token over h: LLaMA-3-8B 139,392 / 4096, LLaMA-2-13B
     * 8 + 4 + 4 + 16.2 + 160 / 5120 = 32.23125, Mixtral 225,408 / 4096 */
    cr_expect_str_eq(input_text(&s, "ch12_ex3_model"), "LLaMA-3-70B");
    cr_expect_str_eq(input_text(&s, "ch12_ex3_middle"), "LLaMA-2-13B");
    cr_expect_eq(seeds_input_of(&s, "ch12_ex3_seq"), 2048);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex3_seq_long"), 8192);
    expect_rel(seeds_answer_of(&s, "12.3(a1)"), 114, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.3(a2)"), 354, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.3(b1)"), 139392.0 / 4096, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.3(b2)"), 32.23125, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.3(b3)"), 225408.0 / 4096, 1e-12);
    /* 12.4: 34,336 B a token a layer on TP 8 + SP (65536/8 + 2 x 2048 + 4 x 128
     * + 4 x 8 + 6 x 3584) x 8192 = 281,280,512 B a layer: 1F1B holds 20 x 4
     * layer-microbatches at PP 4 and 10 x 8 at PP 8, GPipe 20 x 16, two
     * microbatches 20 x 2 */
    cr_expect_eq(seeds_input_of(&s, "ch12_ex4_seq"), 8192);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex4_microbatches"), 16);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex4_pp"), 4);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex4_pp_long"), 8);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex4_few"), 2);
    expect_rel(seeds_answer_of(&s, "12.4(a)"), 80 * 281280512.0 / 1e9, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.4(b)"), 80 * 281280512.0 / 1e9, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.4(c)"), 320 * 281280512.0 / 1e9, 1e-12);
    expect_rel(seeds_answer_of(&s, "12.4(d)"), 40 * 281280512.0 / 1e9, 1e-12);
    /* 12.6 at TP 8 x PP 4 x DP 16: the first stage's 20 layers of 855,654,400 and
     * the 1,050,673,152 of the embedding over TP 8 are p = 2,270,470,144
     * parameters: 16 p, (2 + 2 + 12/16) p, 16 p / 16; the usable 0.9 x 81,559 MiB
     * = 76.97e9 B less the state, over 80 x 281,280,512 = 22.50e9 B a sequence:
     * 40.64 / 22.50 -> 1, 66.19 / 22.50 -> 2, 74.70 / 22.50 -> 3; without SP the
     * 8h = 65,536 B of norm and projection inputs stay whole, 91,680 B a token a
     * layer, 60.08e9 B a sequence: 66.19 / 60.08 -> 1 */
    cr_expect_eq(seeds_input_of(&s, "ch12_ex6_pp"), 4);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex6_dp"), 16);
    cr_expect_eq(seeds_input_of(&s, "ch12_ex6_seq"), 8192);
    expect_rel(seeds_answer_of(&s, "12.6(a1)"), 16 * 2.270470144, 1e-9);
    expect_rel(seeds_answer_of(&s, "12.6(a2)"), 4.75 * 2.270470144, 1e-9);
    expect_rel(seeds_answer_of(&s, "12.6(a3)"), 2.270470144, 1e-9);
    cr_expect_eq(seeds_answer_of(&s, "12.6(b1)"), 1);
    cr_expect_eq(seeds_answer_of(&s, "12.6(b2)"), 2);
    cr_expect_eq(seeds_answer_of(&s, "12.6(b3)"), 3);
    cr_expect_eq(seeds_answer_of(&s, "12.6(c)"), 1);
}

Test(practice, hand_answers_to_three_figures_pass)
{
    /* what a candidate writes for seed 0, worked on paper */
    practice_set s;
    practice_build(12, 0, &s);
    const struct {
        const char *id;
        double given;
    } hand[] = {{"12.1(a)", 80},    {"12.1(b)", 160},  {"12.1(c)", 57.0}, {"12.5(a1)", 99.4},
                {"12.5(a2)", 95},   {"12.5(a3)", 90},  {"12.5(b)", 8190}, {"12.5(c)", 4.31},
                {"12.7(a)", 34.6},  {"12.7(b)", 73.5}, {"12.7(c)", 84.4},
                /* 4/3; 53 x 3/4; 1 + 21.5 / 481 and 1 + 344 / 1448 */
                {"12.2(a)", 1.33},  {"12.2(b)", 39.8}, {"12.2(c1)", 1.04}, {"12.2(c2)", 1.24},
                {"12.3(a1)", 114},  {"12.3(a2)", 354}, {"12.3(b1)", 34.0}, {"12.3(b2)", 32.2},
                {"12.3(b3)", 55.0}, {"12.4(a)", 22.5}, {"12.4(b)", 22.5}, {"12.4(c)", 90.0},
                {"12.4(d)", 11.3},  {"12.6(a1)", 36.3}, {"12.6(a2)", 10.8}, {"12.6(a3)", 2.27},
                {"12.6(b1)", 1},    {"12.6(b2)", 2},   {"12.6(b3)", 3},    {"12.6(c)", 1}};
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        judge_result r = judge_answer(&practice_find(&s, hand[i].id)->judge, hand[i].given);
        cr_expect_eq(r.verdict, VERDICT_RIGHT, "%s: %g judged %s (%s)", hand[i].id, hand[i].given,
                     judge_verdict_name(r.verdict), r.hint);
    }
    cr_expect_eq(s.n_parts, 31);
}

Test(practice, part_slips_are_recognised)
{
    practice_set s;
    practice_build(12, 0, &s);
    /* the spreadsheet's 80 as the answer to (b); 57 days' 30-day deadline; goodput forgotten in 12.7(b):
     * 3.8e25 / (16384 x 989.4e12 x 0.41) / 86400 = 66.18 days */
    const seeds_slip slips[] = {{"12.1(b)", 80, "sparsity"},      {"12.1(c)", 30, "deadline"},
                 {"12.7(b)", 66.2, "goodput"},     {"12.5(a2)", 5, "lost"},
                 {"12.5(c)", 8.63, "16,384"},      {"12.7(a)", 17.3, "sparse"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice, two_hundred_seeds_stay_meaningful)
{
    gpu_spec h100 = gpu_builtin("h100");
    int distinct = 0;
    double last = -1;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        practice_set s, again;
        cr_assert_eq(practice_build(12, seed, &s), 0);
        practice_build(12, seed, &again);
        for (int i = 0; i < s.n_inputs; i++) {
            const practice_input *in = &s.inputs[i];
            cr_expect(in->value >= in->lo && in->value <= in->hi, "seed %llu: %s = %g outside [%g, %g]",
                      (unsigned long long)seed, in->name, in->value, in->lo, in->hi);
            cr_expect_eq(in->value, again.inputs[i].value, "seed %llu: %s not reproducible",
                         (unsigned long long)seed, in->name);
        }
        for (int i = 0; i < s.n_parts; i++) {
            const judge_part *j = &s.parts[i].judge;
            double a = judge_expected(j);
            cr_expect(isfinite(a) && a > 0, "seed %llu: %s answer %g", (unsigned long long)seed, s.parts[i].id, a);
            cr_expect_eq(judge_answer(j, a).verdict, VERDICT_RIGHT, "seed %llu %s", (unsigned long long)seed,
                         s.parts[i].id);
            judge_verdict five = judge_answer(j, a * 1.05).verdict;
            cr_expect(five == VERDICT_CLOSE || five == VERDICT_SLIP, "seed %llu %s: 5%% off judged %s",
                      (unsigned long long)seed, s.parts[i].id, judge_verdict_name(five));
            cr_expect_eq(judge_answer(j, a * 3.7).verdict, VERDICT_OFF, "seed %llu %s: x3.7 judged %s",
                         (unsigned long long)seed, s.parts[i].id, judge_verdict_name(judge_answer(j, a * 3.7).verdict));
        }
        /* 12.1: a run of 16 to 16,384 GPUs, the sparse-peak cluster half of it,
         * and 16 B of state per parameter over that cluster inside half a GPU */
        double need = seeds_answer_of(&s, "12.1(b)"), rent = seeds_answer_of(&s, "12.1(a)");
        cr_expect(need >= 16 && need <= 16384, "seed %llu: %g GPUs", (unsigned long long)seed, need);
        cr_expect(rent >= 8 && rent <= need, "seed %llu: rents %g of %g", (unsigned long long)seed, rent, need);
        cr_expect(16 * seeds_input_of(&s, "ch12_ex1_params_b") * 1e9 / rent <= 0.5 * h100.mem_bytes);
        /* 12.5: goodput stays above 80 % for the sizes asked */
        cr_expect(seeds_answer_of(&s, "12.5(a3)") >= 80);
        cr_expect(seeds_input_of(&s, "ch12_ex5_size1") < seeds_input_of(&s, "ch12_ex5_size2"));
        cr_expect(seeds_input_of(&s, "ch12_ex5_size2") < seeds_input_of(&s, "ch12_ex5_size3"));
        /* 12.2 and 12.3 name a model of the table, by its name */
        const char *named[3] = {"ch12_ex2_model", "ch12_ex3_model", "ch12_ex3_middle"};
        model_spec ms[3];
        for (int k = 0; k < 3; k++)
            cr_assert(model_named(input_text(&s, named[k]), &ms[k]), "seed %llu: %s is %s", (unsigned long long)seed,
                      named[k], input_text(&s, named[k]));
        /* 12.2: full recomputation is 4/3 whatever the model; selective adds 4 L s d
         * to 6 N + 12 L s d, more at the longer sequence */
        const model_spec *m2 = &ms[0];
        double u = seeds_input_of(&s, "ch12_ex2_reported_pct"), n2 = train_matmul_params(m2);
        double d2 = (double)m2->heads * m2->head_dim;
        expect_rel(seeds_answer_of(&s, "12.2(a)"), 4.0 / 3, 1e-12);
        expect_rel(seeds_answer_of(&s, "12.2(b)"), u * 3 / 4, 1e-12);
        const char *ids2[2] = {"12.2(c1)", "12.2(c2)"};
        const double seq2[2] = {seeds_input_of(&s, "ch12_ex2_seq"), seeds_input_of(&s, "ch12_ex2_seq_long")};
        for (int k = 0; k < 2; k++) {
            double lsd = m2->layers * seq2[k] * d2;
            expect_rel(seeds_answer_of(&s, ids2[k]), 1 + 4 * lsd / (6 * n2 + 12 * lsd), 1e-12);
        }
        cr_expect(seeds_answer_of(&s, "12.2(c2)") > seeds_answer_of(&s, "12.2(c1)"));
        /* 12.3: 34 + 5 a s / h of the named model; the modern count near 34 for
         * LLaMA-3-8B, Mixtral's two experts far above it */
        const model_spec *m3 = &ms[1];
        expect_rel(seeds_answer_of(&s, "12.3(a1)"), 34 + 5.0 * m3->heads * seeds_input_of(&s, "ch12_ex3_seq") / m3->hidden, 1e-12);
        expect_rel(seeds_answer_of(&s, "12.3(a2)"), 34 + 5.0 * m3->heads * seeds_input_of(&s, "ch12_ex3_seq_long") / m3->hidden,
                   1e-12);
        cr_expect(fabs(seeds_answer_of(&s, "12.3(b1)") - 34) < 1 && seeds_answer_of(&s, "12.3(b3)") > 50);
        /* 12.4: 34,336 B a token a layer at TP 8 + SP; 1F1B holds the whole model's
         * layers once when the step has as many microbatches as stages, GPipe
         * every microbatch, few microbatches fewer */
        double seq4 = seeds_input_of(&s, "ch12_ex4_seq"), m4 = seeds_input_of(&s, "ch12_ex4_microbatches");
        double pp4 = seeds_input_of(&s, "ch12_ex4_pp"), few = seeds_input_of(&s, "ch12_ex4_few");
        double whole = 80 * 34336.0 * seq4 / 1e9;
        cr_expect(m4 >= seeds_input_of(&s, "ch12_ex4_pp_long") && few < pp4, "seed %llu", (unsigned long long)seed);
        expect_rel(seeds_answer_of(&s, "12.4(a)"), whole, 1e-12);
        expect_rel(seeds_answer_of(&s, "12.4(b)"), whole, 1e-12);
        expect_rel(seeds_answer_of(&s, "12.4(c)"), whole * m4 / pp4, 1e-12);
        expect_rel(seeds_answer_of(&s, "12.4(d)"), whole * few / pp4, 1e-12);
        /* 12.6: the first stage's parameters over TP 8, their 16, 4 + 12 / dp and
         * 16 / dp bytes; each microbatch count the most that fits the usable
         * memory beside the state, 80 layers x 34,336 B x seq a sequence in flight */
        double pp6 = seeds_input_of(&s, "ch12_ex6_pp"), dp6 = seeds_input_of(&s, "ch12_ex6_dp"), seq6 = seeds_input_of(&s, "ch12_ex6_seq");
        /* a LLaMA-3-70B layer 855,654,400 parameters and its vocabulary matrix
         * 128,256 x 8192 = 1,050,673,152 (derived in test_cli_serve.c) */
        double p6 = (80 / pp6 * 855654400.0 + 1050673152.0) / 8, cap = 0.9 * 81559 * 1048576.0;
        const double per[3] = {16, 4 + 12 / dp6, 16 / dp6};
        const char *aid[3] = {"12.6(a1)", "12.6(a2)", "12.6(a3)"}, *bid[3] = {"12.6(b1)", "12.6(b2)", "12.6(b3)"};
        for (int k = 0; k < 3; k++) {
            expect_rel(seeds_answer_of(&s, aid[k]), per[k] * p6 / 1e9, 1e-9);
            cr_expect_eq(seeds_answer_of(&s, bid[k]), floor((cap - per[k] * p6) / (80 * 34336.0 * seq6)), "seed %llu %s",
                         (unsigned long long)seed, bid[k]);
        }
        cr_expect(seeds_answer_of(&s, "12.6(b2)") > seeds_answer_of(&s, "12.6(b1)") && seeds_answer_of(&s, "12.6(b1)") >= 1);
        cr_expect(seeds_answer_of(&s, "12.6(c)") <= seeds_answer_of(&s, "12.6(b2)"));
        if (seeds_answer_of(&s, "12.1(c)") != last)
            distinct++;
        last = seeds_answer_of(&s, "12.1(c)");
    }
    cr_expect(distinct >= 50, "only %d changes of 12.1 in 200 seeds", distinct);
}

Test(practice, chapter_5_seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(5, 0, &s), 0);
    /* 40 requests/s for 6 s: 240 in flight, each with 1,500 tokens of
     * LLaMA-3-8B KV in bf16 (2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B
     * a token): 240 x 1500 x 131072 = 47.186 GB; twice the latency, 480 */
    cr_expect_eq(seeds_input_of(&s, "ch05_ex1_rate"), 40);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex1_latency"), 6);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex1_tokens"), 1500);
    expect_rel(seeds_answer_of(&s, "5.1(a)"), 240, 1e-12);
    expect_rel(seeds_answer_of(&s, "5.1(b)"), 47.18592, 1e-9);
    expect_rel(seeds_answer_of(&s, "5.1(c)"), 480, 1e-12);
    /* S = 0.2 s, 4/s: rho 0.8; M/M/1 W = 1 / (5 - 4) = 1 s, Wq = 0.8 s;
     * M/D/1 Wq = rho S / (2 (1 - rho)) = 0.16 / 0.4 = 0.4 s, W = 0.6 s */
    expect_rel(seeds_answer_of(&s, "5.2(a)"), 0.8, 1e-12);
    expect_rel(seeds_answer_of(&s, "5.2(b1)"), 1.0, 1e-12);
    expect_rel(seeds_answer_of(&s, "5.2(b2)"), 0.6, 1e-12);
    expect_rel(seeds_answer_of(&s, "5.2(c1)"), 0.8, 1e-12);
    expect_rel(seeds_answer_of(&s, "5.2(c2)"), 0.4, 1e-12);
    /* S = 2 s, 0.4/s (rho 0.8): Wq = 0.8 x 2 (1 + cs2) / 0.4 = 4 (1 + cs2):
     * 6 s at cs2 = 0.5, 4 s fixed, 8 s exponential */
    expect_rel(seeds_answer_of(&s, "5.4(a)"), 6, 1e-12);
    expect_rel(seeds_answer_of(&s, "5.4(b1)"), 4, 1e-12);
    expect_rel(seeds_answer_of(&s, "5.4(b2)"), 8, 1e-12);
    /* S = 1 s.  M/D/1: W = 1 + rho / (2 (1 - rho)) is 2 at rho = 2/3, 5 at 8/9;
     * M/M/1: W = 1 / (1 - rho) is 2 at 1/2, 5 at 4/5; a mean of 2 s leaves a
     * third and a half of the capacity unused */
    expect_rel(seeds_answer_of(&s, "5.3(a1)"), 2.0 / 3, 1e-9);
    expect_rel(seeds_answer_of(&s, "5.3(a2)"), 8.0 / 9, 1e-9);
    expect_rel(seeds_answer_of(&s, "5.3(b1)"), 0.5, 1e-9);
    expect_rel(seeds_answer_of(&s, "5.3(b2)"), 0.8, 1e-9);
    expect_rel(seeds_answer_of(&s, "5.3(c1)"), 100.0 / 3, 1e-9);
    expect_rel(seeds_answer_of(&s, "5.3(c2)"), 50, 1e-9);
    cr_expect_eq(s.n_parts, 38); /* 17 of 5.1 to 5.4, the rest in test_practice_ch05.c */
    /* the heads slip: 32 heads instead of 8 KV heads, four times the cache */
    judge_result r = judge_answer(&practice_find(&s, "5.1(b)")->judge, 189);
    cr_expect_eq(r.verdict, VERDICT_SLIP);
    cr_expect(strstr(r.hint, "KV heads") != NULL, "%s", r.hint);
}

Test(practice, chapter_5_two_hundred_seeds_stay_meaningful)
{
    for (uint64_t seed = 1; seed <= 200; seed++) {
        practice_set s;
        cr_assert_eq(practice_build(5, seed, &s), 0);
        for (int i = 0; i < s.n_inputs; i++)
            cr_expect(s.inputs[i].value >= s.inputs[i].lo && s.inputs[i].value <= s.inputs[i].hi);
        for (int i = 0; i < s.n_parts; i++) {
            if (s.parts[i].exercise > 4)
                continue; /* 5.5 to 5.10: tests/test_practice_ch05.c */
            const judge_part *j = &s.parts[i].judge;
            double a = judge_expected(j);
            cr_expect(isfinite(a) && a > 0, "seed %llu %s: %g", (unsigned long long)seed, s.parts[i].id, a);
            cr_expect_eq(judge_answer(j, a).verdict, VERDICT_RIGHT);
            judge_verdict five = judge_answer(j, a * 1.05).verdict;
            cr_expect(five == VERDICT_CLOSE || five == VERDICT_SLIP);
            cr_expect_eq(judge_answer(j, a * 3.7).verdict, VERDICT_OFF, "seed %llu %s", (unsigned long long)seed,
                         s.parts[i].id);
        }
        /* one server between half and nine tenths busy in 5.2 and 5.4 */
        double rho2 = seeds_input_of(&s, "ch05_ex2_rate") * seeds_input_of(&s, "ch05_ex2_service");
        double rho4 = seeds_input_of(&s, "ch05_ex4_rate") * seeds_input_of(&s, "ch05_ex4_service");
        cr_expect(rho2 >= 0.5 - 1e-12 && rho2 <= 0.9 + 1e-12, "seed %llu: rho %g", (unsigned long long)seed, rho2);
        cr_expect(rho4 >= 0.5 - 1e-12 && rho4 <= 0.9 + 1e-12, "seed %llu: rho %g", (unsigned long long)seed, rho4);
        /* 5.1's doubled cache inside eight H100s (8 x 79.6 GB at most) */
        cr_expect(seeds_answer_of(&s, "5.1(b)") * 2 <= 8 * 80, "seed %llu", (unsigned long long)seed);
    }
}

Test(practice, chapter_10_seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(10, 0, &s), 0);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex2_alpha"), 0.9);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex2_gamma"), 8);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex2_all"), 9);
    /* alpha 0.9, gamma 8: E[N] = (1 - 0.9^9) / 0.1 = (1 - 0.387420489) / 0.1 =
     * 6.12579511; P(N = 1) = 0.1; P(N = 9) = 0.9^8 = 0.43046721;
     * P(N <= 2) = 0.1 + 0.9 x 0.1 = 0.19 */
    expect_rel(seeds_answer_of(&s, "10.2(a1)"), 6.12579511, 1e-9);
    expect_rel(seeds_answer_of(&s, "10.2(a2)"), 0.1, 1e-12);
    expect_rel(seeds_answer_of(&s, "10.2(a3)"), 0.43046721, 1e-9);
    expect_rel(seeds_answer_of(&s, "10.2(b)"), 0.19, 1e-12);
    /* Var N = E[N^2] - E[N]^2 with P(N = k) = 0.9^(k-1) 0.1 for k <= 8 and
     * 0.9^8 for 9: E[N^2] = sum k^2 P = 46.65441907, Var = 46.65441907 - 6.12579511^2
     * = 9.129053, sd = 3.021432 */
    expect_rel(seeds_answer_of(&s, "10.2(a4)"), 3.021432, 1e-6);
    /* c 0.1, alpha 0.75: S(g) = 4 (1 - 0.75^(g+1)) / (1 + 0.1 g): g = 4
     * 3.05078125 / 1.4 = 2.179129; g = 5 3.28808594 / 1.5 = 2.192057 (the
     * best: g = 6 gives 3.46606445 / 1.6 = 2.166290); g = 10
     * 3.83105946 / 2 = 1.915530 */
    expect_rel(seeds_answer_of(&s, "10.3(a)"), 2.179129, 1e-6);
    cr_expect_eq(seeds_answer_of(&s, "10.3(b1)"), 5);
    expect_rel(seeds_answer_of(&s, "10.3(b2)"), 2.192057, 1e-6);
    expect_rel(seeds_answer_of(&s, "10.3(c)"), 1.915530, 1e-6);
    /* 10.1: alpha 0.7, gamma 3: E[N] = 1 + .7 + .49 + .343 = 2.533, the
     * dashboard's 1.53 without the target's own token */
    cr_expect_eq(seeds_input_of(&s, "ch10_ex1_alpha"), 0.7);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex1_gamma"), 3);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex1_dashboard"), 1.53);
    expect_rel(seeds_answer_of(&s, "10.1(a)"), 2.533, 1e-12);
    expect_rel(seeds_answer_of(&s, "10.1(c)"), 2.533, 1e-12);
    /* 10.4: 2x at c 0.1: gamma 4 needs 1 + a + .. + a^4 = 2.8, a between
     * 0.705 (2.79946) and 0.706 (2.80423); gamma 2 needs 1 + a + a^2 = 2.4,
     * a = (-1 + sqrt(6.6)) / 2 = 0.7845233; alpha 1 gives 3 / 1.2 = 2.5 */
    cr_expect_eq(seeds_input_of(&s, "ch10_ex4_target"), 2);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex4_cost"), 0.1);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex4_gamma"), 4);
    cr_expect(seeds_answer_of(&s, "10.4(a)") > 0.705 && seeds_answer_of(&s, "10.4(a)") < 0.706);
    expect_rel(seeds_answer_of(&s, "10.4(b)"), (-1 + sqrt(6.6)) / 2, 1e-9);
    expect_rel(seeds_answer_of(&s, "10.4(c)"), 2.5, 1e-12);
    /* 10.5: alpha 0.8, gamma 5, c 0.1: E[N] = (1 - 0.262144) / 0.2 = 3.68928,
     * over 1.5: 2.45952; (0.5 + 5 + 1) / 3.68928 = 1.761862, free 6 / 3.68928
     * = 1.626335 */
    cr_expect_eq(seeds_input_of(&s, "ch10_ex5_alpha"), 0.8);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex5_gamma"), 5);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex5_c"), 0.1);
    expect_rel(seeds_answer_of(&s, "10.5(a)"), 3.68928 / 1.5, 1e-9);
    expect_rel(seeds_answer_of(&s, "10.5(b1)"), 6.5 / 3.68928, 1e-9);
    expect_rel(seeds_answer_of(&s, "10.5(b2)"), 6 / 3.68928, 1e-9);
    /* 10.6: 512 tokens, gamma 4, batches 1, 64 and 256; at batch 1 the step
     * reads 35.3 GB of weights per GPU (10.5 ms) while five tokens need
     * 2 x 70.55e9 x 5 / 4 = 176 GFLOP (0.18 ms): free within 1 % */
    cr_expect_eq(seeds_input_of(&s, "ch10_ex6_context"), 512);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex6_gamma"), 4);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex6_new"), 5);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex6_batch2"), 64);
    cr_expect_eq(seeds_input_of(&s, "ch10_ex6_batch3"), 256);
    /* past the ridge at the largest batch: 256 x 5 = 1280 tokens, above 295
     * FLOP/B, so well above 1 and below 5 */
    cr_expect(seeds_answer_of(&s, "10.6(a3)") > 2 && seeds_answer_of(&s, "10.6(a3)") < 5);
}

Test(practice, chapter_10_two_hundred_seeds_stay_meaningful)
{
    for (uint64_t seed = 1; seed <= 200; seed++) {
        practice_set s;
        cr_assert_eq(practice_build(10, seed, &s), 0);
        for (int i = 0; i < s.n_inputs; i++)
            cr_expect(s.inputs[i].value >= s.inputs[i].lo && s.inputs[i].value <= s.inputs[i].hi);
        for (int i = 0; i < s.n_parts; i++) {
            const judge_part *j = &s.parts[i].judge;
            double a = judge_expected(j);
            cr_expect(isfinite(a) && a > 0, "seed %llu %s: %g", (unsigned long long)seed, s.parts[i].id, a);
            cr_expect_eq(judge_answer(j, a).verdict, VERDICT_RIGHT);
            judge_verdict five = judge_answer(j, a * 1.05).verdict;
            cr_expect(five == VERDICT_CLOSE || five == VERDICT_SLIP, "seed %llu %s", (unsigned long long)seed,
                      s.parts[i].id);
            /* off, unless 3.7 times the answer is one of the part's own slips
             * (10.6's gamma + 1 steps) */
            judge_result far = judge_answer(j, a * 3.7);
            int own = 0;
            for (int k = 0; k < j->n_slips; k++)
                own |= far.hint == j->slips[k].hint;
            cr_expect(far.verdict == VERDICT_OFF || (far.verdict == VERDICT_SLIP && own), "seed %llu %s",
                      (unsigned long long)seed, s.parts[i].id);
        }
        /* the best draft length is inside 1..10, and 10 is worse than it */
        double best = seeds_answer_of(&s, "10.3(b1)");
        cr_expect(best >= 2 && best <= 9, "seed %llu: best %g", (unsigned long long)seed, best);
        cr_expect(seeds_answer_of(&s, "10.3(c)") < seeds_answer_of(&s, "10.3(b2)"));
        cr_expect(seeds_answer_of(&s, "10.3(a)") <= seeds_answer_of(&s, "10.3(b2)") * (1 + 1e-12));
        /* 10.1: the dashboard is E[N] - 1, to its two decimals */
        cr_expect(fabs(seeds_answer_of(&s, "10.1(a)") - 1 - seeds_input_of(&s, "ch10_ex1_dashboard")) <= 0.005 + 1e-12);
        /* 10.4: the alpha found delivers the promise, by the sum worked here
         * (1 + a + .. + a^g) / (1 + g c); gamma 2 can give more than it */
        double t = seeds_input_of(&s, "ch10_ex4_target"), c = seeds_input_of(&s, "ch10_ex4_cost");
        const double g4[2] = {seeds_input_of(&s, "ch10_ex4_gamma"), 2};
        const char *ids4[2] = {"10.4(a)", "10.4(b)"};
        for (int k = 0; k < 2; k++) {
            double a = seeds_answer_of(&s, ids4[k]), e = 0, term = 1;
            for (int i = 0; i <= (int)g4[k]; i++, term *= a)
                e += term;
            expect_rel(e / (1 + g4[k] * c), t, 1e-9);
            cr_expect(a >= 0.3 && a <= 0.95, "seed %llu %s: %g", (unsigned long long)seed, ids4[k], a);
        }
        expect_rel(seeds_answer_of(&s, "10.4(c)"), 3 / (1 + 2 * c), 1e-12);
        cr_expect(seeds_answer_of(&s, "10.4(c)") > t);
        /* 10.5: speculation pays in walltime and costs arithmetic */
        cr_expect(seeds_answer_of(&s, "10.5(a)") > 1, "seed %llu", (unsigned long long)seed);
        cr_expect(seeds_answer_of(&s, "10.5(b1)") > seeds_answer_of(&s, "10.5(b2)") && seeds_answer_of(&s, "10.5(b2)") >= 1);
        /* 10.6: each batch fits four H100s, the weights' 70,553,706,496 x 2 / 4 B and
         * 81,920 B a token per GPU for context + gamma + 1 tokens in the usable 90 %
         * of 81,559 MiB; the ratio grows with the batch, to at most gamma + 1 */
        double g6 = seeds_input_of(&s, "ch10_ex6_gamma"), ctx6 = seeds_input_of(&s, "ch10_ex6_context");
        cr_expect(35276853248.0 + seeds_input_of(&s, "ch10_ex6_batch3") * (ctx6 + g6 + 1) * 81920 <= 0.9 * 81559 * 1048576.0);
        double r2 = seeds_answer_of(&s, "10.6(a2)"), r3 = seeds_answer_of(&s, "10.6(a3)");
        cr_expect(r2 > 1 && r2 < r3 && r3 <= g6 + 1, "seed %llu: %g %g", (unsigned long long)seed, r2, r3);
    }
}

Test(practice, seeds_are_parsed_strictly)
{
    uint64_t v;
    cr_expect(practice_parse_seed("4711", &v) == 0 && v == 4711);
    cr_expect(practice_parse_seed(NULL, &v) == 0 && v == 0);
    cr_expect(practice_parse_seed("", &v) == 0 && v == 0);
    cr_expect(practice_parse_seed("2147483647", &v) == 0 && v == 2147483647ULL);
    cr_expect_eq(practice_parse_seed("2147483648", &v), -1);
    cr_expect_eq(practice_parse_seed("-1", &v), -1);
    cr_expect_eq(practice_parse_seed(" 7", &v), -1);
    cr_expect_eq(practice_parse_seed("7x", &v), -1);
}

Test(practice, chapters_without_variants)
{
    practice_set s;
    cr_expect_eq(practice_build(0, 0, &s), -1);
    cr_expect_eq(practice_build(99, 7, &s), -1);
    /* the list names exactly the chapters that build, in order */
    char listed[64] = "", *end = listed;
    for (int ch = 1; ch <= 20; ch++)
        if (practice_build(ch, 0, &s) == 0)
            end += snprintf(end, sizeof listed - (size_t)(end - listed), "%s%d", end == listed ? "" : " ", ch);
    cr_expect_str_eq(practice_chapters(), listed);
    cr_expect(strstr(practice_chapters(), "5") && strstr(practice_chapters(), "12"), "%s", practice_chapters());
    practice_build(12, 0, &s);
    cr_expect_null(practice_find(&s, "12.9(z)"));
    cr_expect_null(practice_find(&s, NULL));
}

Test(practice, every_part_slip_is_named_when_made)
{
    /* each slip a part names, made exactly, gets that slip's hint, unless the
     * slip lands within the part's tolerance of the answer (then it is right)
     * or of a slip named before it */
    const int chapters[] = {5, 10, 12};
    int named = 0;
    for (int c = 0; c < 3; c++)
        for (uint64_t seed = 0; seed <= 200; seed++) {
            practice_set s;
            cr_assert_eq(practice_build(chapters[c], seed, &s), 0);
            named += seeds_check_slips(&s);
        }
    /* 201 seeds of 22 parts with 1 to 3 slips each: thousands of slips made */
    cr_expect(named > 4000, "only %d slips checked", named);
}
