/* Chapter 12's variant parts answered by the kit's functions: the inputs of
 * the variant go in as the exercise states them, the kit's numbers come out
 * in the part's unit.  Used by the kit's checks (test_12.c) and by
 * kit_answers_12.c, which writes them as the grade's answers file. */
#ifndef EXERCISES_KIT_ANSWERS_12_H
#define EXERCISES_KIT_ANSWERS_12_H

#include "12-sizing-a-training-cluster.h"
#include "kit_answers.h"
#include "specs.h"
#include "train.h"

#include <string.h>

/* The model a variant names in its prose (the input's text is the model's
 * name in the table), as the exercise states it: its key in buf, or "". */
static inline const char *kit_model_key_(const practice_set *s, const char *input, char *buf, size_t n)
{
    char text[64];
    const practice_input *in = practice_input_named(s, input);
    model_table t;
    char err[256];
    buf[0] = '\0';
    if (!in || model_table_builtin(&t, err, sizeof err) != 0)
        return buf;
    practice_input_text(in, text, sizeof text);
    for (int i = 0; i < t.n; i++)
        if (strcmp(t.rows[i].name, text) == 0)
            snprintf(buf, n, "%s", t.rows[i].key);
    model_table_free(&t);
    return buf;
}

/* Exercise `exercise` (1 to 7; 0 for all) of the variant s. */
static inline kit_answers kit_answers_12(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    gpu_spec h100 = gpu_builtin("h100");
    double peak = gpu_peak_flops(&h100, DT_BF16);
    if (exercise == 0 || exercise == 1) {
        double flop = 6 * kit_input_(s, "ch12_ex1_params_b") * 1e9 * kit_input_(s, "ch12_ex1_tokens_t") * 1e12;
        double days = kit_input_(s, "ch12_ex1_days"), mfu = kit_input_(s, "ch12_ex1_mfu_pct") / 100;
        /* the spreadsheet divides by the sparse figure, twice the dense peak */
        int rented = ex12_gpus_for_deadline(flop, days, 2 * peak, mfu, 8);
        kit_answer_(&a, "12.1(a)", rented);
        kit_answer_(&a, "12.1(b)", ex12_gpus_for_deadline(flop, days, peak, mfu, 8));
        kit_answer_(&a, "12.1(c)", ex12_days_on(flop, rented, peak, mfu));
    }
    if (exercise == 0 || exercise == 2) {
        char key[64];
        model_spec m = model_builtin(kit_model_key_(s, "ch12_ex2_model", key, sizeof key));
        /* the multiplying parameters and the attention width, from the model's config */
        double n = train_matmul_params(&m);
        int seq = (int)kit_input_(s, "ch12_ex2_seq"), width = m.heads * m.head_dim;
        double full = ex12_hardware_over_model(n, m.layers, width, seq, "full");
        kit_answer_(&a, "12.2(a)", full);
        kit_answer_(&a, "12.2(b)", kit_input_(s, "ch12_ex2_reported_pct") / full);
        kit_answer_(&a, "12.2(c1)", ex12_hardware_over_model(n, m.layers, width, seq, "selective"));
        kit_answer_(&a, "12.2(c2)",
                    ex12_hardware_over_model(n, m.layers, width, (int)kit_input_(s, "ch12_ex2_seq_long"), "selective"));
    }
    if (exercise == 0 || exercise == 3) {
        char key[64], mid[64];
        kit_model_key_(s, "ch12_ex3_model", key, sizeof key);
        kit_model_key_(s, "ch12_ex3_middle", mid, sizeof mid);
        kit_answer_(&a, "12.3(a1)",
                    ex12_activation_coefficient(key, (int)kit_input_(s, "ch12_ex3_seq"), 1, 0, "none", "korthikanti"));
        kit_answer_(&a, "12.3(a2)", ex12_activation_coefficient(key, (int)kit_input_(s, "ch12_ex3_seq_long"), 1, 0,
                                                               "none", "korthikanti"));
        kit_answer_(&a, "12.3(b1)", ex12_activation_coefficient("llama3-8b", 8192, 1, 0, "none", "modern"));
        kit_answer_(&a, "12.3(b2)", ex12_activation_coefficient(mid, 8192, 1, 0, "none", "modern"));
        kit_answer_(&a, "12.3(b3)", ex12_activation_coefficient("mixtral-8x7b", 8192, 1, 0, "none", "modern"));
    }
    if (exercise == 0 || exercise == 4) {
        int seq = (int)kit_input_(s, "ch12_ex4_seq"), m = (int)kit_input_(s, "ch12_ex4_microbatches");
        int pp = (int)kit_input_(s, "ch12_ex4_pp"), pp_long = (int)kit_input_(s, "ch12_ex4_pp_long");
        kit_answer_(&a, "12.4(a)", ex12_stage_activation_bytes("llama3-70b", seq, 8, pp, 1, "1f1b", m) / 1e9);
        kit_answer_(&a, "12.4(b)", ex12_stage_activation_bytes("llama3-70b", seq, 8, pp_long, 1, "1f1b", m) / 1e9);
        kit_answer_(&a, "12.4(c)", ex12_stage_activation_bytes("llama3-70b", seq, 8, pp, 1, "gpipe", m) / 1e9);
        kit_answer_(&a, "12.4(d)", ex12_stage_activation_bytes("llama3-70b", seq, 8, pp, 1, "1f1b",
                                                               (int)kit_input_(s, "ch12_ex4_few")) / 1e9);
    }
    if (exercise == 0 || exercise == 6) {
        int seq = (int)kit_input_(s, "ch12_ex6_seq"), pp = (int)kit_input_(s, "ch12_ex6_pp");
        int dp = (int)kit_input_(s, "ch12_ex6_dp");
        const int zeros[3] = {0, 1, 3};
        const char *aids[3] = {"12.6(a1)", "12.6(a2)", "12.6(a3)"}, *bids[3] = {"12.6(b1)", "12.6(b2)", "12.6(b3)"};
        for (int i = 0; i < 3; i++) {
            kit_answer_(&a, aids[i], ex12_state_bytes("llama3-70b", 8, pp, dp, zeros[i]) / 1e9);
            kit_answer_(&a, bids[i], ex12_max_micro_batch("llama3-70b", "h100", seq, 8, pp, dp, 1, zeros[i]));
        }
        kit_answer_(&a, "12.6(c)", ex12_max_micro_batch("llama3-70b", "h100", seq, 8, pp, dp, 0, 1));
    }
    if (exercise == 0 || exercise == 5) {
        kit_answer_(&a, "12.5(a1)", 100 * ex12_goodput_llama3((int)kit_input_(s, "ch12_ex5_size1")));
        kit_answer_(&a, "12.5(a2)", 100 * ex12_goodput_llama3((int)kit_input_(s, "ch12_ex5_size2")));
        kit_answer_(&a, "12.5(a3)", 100 * ex12_goodput_llama3((int)kit_input_(s, "ch12_ex5_size3")));
        kit_answer_(&a, "12.5(b)", ex12_gpus_at_goodput(kit_input_(s, "ch12_ex5_target_pct") / 100));
        kit_answer_(&a, "12.5(c)", ex12_interruptions_per_day((int)kit_input_(s, "ch12_ex5_size2")));
    }
    if (exercise == 0 || exercise == 7) {
        /* Llama 3 405B: 3.8e25 FLOP in 30.84 million GPU-hours */
        double u = ex12_implied_utilisation(3.8e25, peak, 30.84e6);
        double mfu = kit_input_(s, "ch12_ex7_mfu_pct") / 100, goodput = kit_input_(s, "ch12_ex7_goodput_pct") / 100;
        kit_answer_(&a, "12.7(a)", 100 * u);
        kit_answer_(&a, "12.7(b)", ex12_days_on(3.8e25, (int)kit_input_(s, "ch12_ex7_gpus"), peak, mfu * goodput));
        kit_answer_(&a, "12.7(c)", 100 * u / mfu);
    }
    return a;
}

#endif
