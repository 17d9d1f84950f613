/* Chapter 3's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h): the inputs of the variant go in as the exercise
 * states them. */
#ifndef EXERCISES_KIT_ANSWERS_03_H
#define EXERCISES_KIT_ANSWERS_03_H

#include "03-batching-in-practice.h"
#include "kit_answers.h"

/* Exercise `exercise` (1 to 7; 0 for all) of the variant s. */
static inline kit_answers kit_answers_03(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        int len[4];
        char name[32];
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof name, "ch03_ex1_len%d", i + 1);
            len[i] = (int)kit_input_(s, name);
        }
        long cu[5] = {-1, -1, -1, -1, -1};
        long total = ex03_pack_offsets(len, 4, cu);
        double waste = ex03_padding_waste(len, 4);
        kit_answer_(&a, "3.1(a)", (double)cu[3]);
        kit_answer_(&a, "3.1(b)", (double)(cu[2] + (long)kit_input_(s, "ch03_ex1_token")));
        kit_answer_(&a, "3.1(c1)", round(total / (1 - waste))); /* slots: the tokens are the rest */
        kit_answer_(&a, "3.1(c2)", waste);
    }
    if (exercise == 0 || exercise == 2) {
        int len[8];
        char name[32];
        for (int i = 0; i < 8; i++) {
            snprintf(name, sizeof name, "ch03_ex2_len%d", i + 1);
            len[i] = (int)kit_input_(s, name);
        }
        const int edges[4] = {128, 512, 2048, 8192};
        long cu[9];
        long total = ex03_pack_offsets(len, 8, cu);
        double pad = ex03_padding_waste(len, 8), buck = ex03_bucketed_waste(len, 8, edges, 4);
        kit_answer_(&a, "3.2(a1)", round(total / (1 - pad)));
        kit_answer_(&a, "3.2(a2)", pad);
        kit_answer_(&a, "3.2(b1)", round(total / (1 - buck)));
        kit_answer_(&a, "3.2(b2)", buck);
        kit_answer_(&a, "3.2(b3)", ex03_bucket_batches(len, 8, edges, 4));
        kit_answer_(&a, "3.2(c)", ex03_attention_ratio(len, 8, edges, 4));
    }
    /* exercise 4 keeps exercise 3's batcher */
    double w3 = kit_input_(s, "ch03_ex3_window_ms") / 1e3;
    int cap3 = (int)kit_input_(s, "ch03_ex3_cap");
    if (exercise == 0 || exercise == 3) {
        double lambda = kit_input_(s, "ch03_ex3_rate");
        kit_answer_(&a, "3.3(a)", ex03_expected_batch(lambda, w3, cap3));
        kit_answer_(&a, "3.3(b)", 1e3 * ex03_mean_wait(lambda, w3, cap3));
    }
    if (exercise == 0 || exercise == 4) {
        double lambda = kit_input_(s, "ch03_ex4_rate");
        kit_answer_(&a, "3.4(a1)", ex03_expected_batch(lambda, w3, cap3));
        kit_answer_(&a, "3.4(a2)", 1e3 * ex03_mean_dispatch(lambda, w3, cap3));
        kit_answer_(&a, "3.4(b)", 1e3 * ex03_mean_wait(lambda, w3, cap3));
    }
    if (exercise == 0 || exercise == 5) {
        double lambda = kit_input_(s, "ch03_ex5_rate");
        int cap = (int)kit_input_(s, "ch03_ex5_cap");
        double w = ex03_window_for_wait(lambda, cap, kit_input_(s, "ch03_ex5_budget_ms") / 1e3);
        kit_answer_(&a, "3.5(a1)", 1e3 * w);
        kit_answer_(&a, "3.5(a2)", ex03_expected_batch(lambda, w, cap));
    }
    if (exercise == 0 || exercise == 6) {
        int n = (int)kit_input_(s, "ch03_ex6_n"), output = (int)kit_input_(s, "ch03_ex6_output");
        kit_answer_(&a, "3.6(a)", ex03_seq_over_batch("llama3-8b", "h100", n, (int)kit_input_(s, "ch03_ex6_prompt"), output));
        kit_answer_(&a, "3.6(b)", ex03_seq_over_batch("llama3-8b", "h100", n, 4096, output));
    }
    if (exercise == 0 || exercise == 7) {
        double reserve = kit_input_(s, "ch03_ex7_reserve_gb") * 1e9;
        int shortc = (int)kit_input_(s, "ch03_ex7_short"), longc = (int)kit_input_(s, "ch03_ex7_long");
        kit_answer_(&a, "3.7(a)", ex03_kv_cap("llama3-8b", "h100", shortc, 0.9, reserve));
        kit_answer_(&a, "3.7(b)", ex03_kv_cap("llama3-8b", "h100", longc, 0.9, reserve));
        kit_answer_(&a, "3.7(c)", ex03_kv_cap("llama3-8b", "l40s", longc, 0.9, reserve));
    }
    return a;
}

#endif
