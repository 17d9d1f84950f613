/* Chapter 8's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h).  8.3(a) and (c), arithmetic on the published
 * rates, and 8.6(b3), the powers-of-two list, have no kit function. */
#ifndef EXERCISES_KIT_ANSWERS_08_H
#define EXERCISES_KIT_ANSWERS_08_H

#include "08-cuda-graphs.h"
#include "kit_answers.h"

/* The largest batch whose verification step replays a graph; -1 when the
 * kit gives no size. */
static inline double kit_largest_batch_08(int gamma)
{
    int b = 0, padded;
    while ((padded = ex08_spec_padded_tokens(b + 1, gamma, 512)) > 0 && b < 512)
        b++;
    return padded < 0 ? -1 : b;
}

/* The smallest gamma for which every batch of 2 or more below 256 tokens
 * replays exactly its tokens; -1 when the kit gives no size. */
static inline double kit_aligned_gamma_08(void)
{
    for (int k = 1; k <= 32; k++) {
        int all = 1;
        for (int b = 2; b * (1 + k) < 256 && all; b++) {
            int padded = ex08_spec_padded_tokens(b, k, 512);
            if (padded < 0)
                return -1;
            all = padded == b * (1 + k);
        }
        if (all)
            return k;
    }
    return -1;
}

/* Exercise `exercise` (1 to 7; 0 for all) of the variant s. */
static inline kit_answers kit_answers_08(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        double launch = kit_input_(s, "ch08_ex1_launch_us");
        kit_answer_(&a, "8.1(a)", 100 * ex08_share_saved("llama3-8b", "h100", 1, 1, 1024, 4, 1));
        kit_answer_(&a, "8.1(b)", 100 * ex08_share_saved("llama3-8b", "h100", 1, 1, 1024, launch, 1));
    }
    if (exercise == 0 || exercise == 2) {
        int tp = (int)kit_input_(s, "ch08_ex2_tp");
        kit_answer_(&a, "8.2(a)", ex08_kernels("llama3-8b", 1, "none"));
        kit_answer_(&a, "8.2(b1)", ex08_kernels("llama3-70b", tp, "none"));
        kit_answer_(&a, "8.2(b2)", ex08_kernels("llama3-70b", tp, "all"));
        kit_answer_(&a, "8.2(c)", ex08_kernels("llama3-70b", 1, "none"));
    }
    if (exercise == 0 || exercise == 3) {
        /* llama.cpp issue #6763: 143.35 tokens/s eagerly */
        int k = ex08_kernels("llama3-8b", 1, "none");
        kit_answer_(&a, "8.3(b)", k > 0 ? ex08_implied_launch_us(1 / 143.35, k) : NAN);
    }
    if (exercise == 0 || exercise == 4) {
        int small = (int)kit_input_(s, "ch08_ex4_small"), large = (int)kit_input_(s, "ch08_ex4_large");
        kit_answer_(&a, "8.4(a1)", ex08_padded_tokens(small, 512));
        kit_answer_(&a, "8.4(a2)", ex08_padded_tokens(large, 512));
        int batch = (int)kit_input_(s, "ch08_ex4_b_batch"), context = (int)kit_input_(s, "ch08_ex4_b_context");
        kit_answer_(&a, "8.4(b)", ex08_pad_extra_seconds("llama3-8b", "h100", 1, batch, context) * 1e6);
    }
    if (exercise == 0 || exercise == 5) {
        int ga = (int)kit_input_(s, "ch08_ex5_gamma_a"), ba = (int)kit_input_(s, "ch08_ex5_batch_a");
        int gb = (int)kit_input_(s, "ch08_ex5_gamma_b"), bb = (int)kit_input_(s, "ch08_ex5_batch_b");
        kit_answer_(&a, "8.5(a1)", ex08_spec_padded_tokens(ba, ga, 512));
        kit_answer_(&a, "8.5(a2)", ex08_spec_padded_tokens(ba, gb, 512));
        kit_answer_(&a, "8.5(a3)", ex08_spec_padded_tokens(bb, gb, 512));
        kit_answer_(&a, "8.5(c1)", kit_largest_batch_08(ga));
        kit_answer_(&a, "8.5(c2)", kit_largest_batch_08((int)kit_input_(s, "ch08_ex5_gamma_c")));
        kit_answer_(&a, "8.5(b)", kit_aligned_gamma_08());
    }
    if (exercise == 0 || exercise == 6) {
        int context = (int)kit_input_(s, "ch08_ex6_context"), batch = (int)kit_input_(s, "ch08_ex6_batch");
        int lost51 = ex08_seqs_lost("llama3-8b", "h100", 1, context, 51, 26);
        int lost10 = ex08_seqs_lost("llama3-8b", "h100", 1, context, 10, 26);
        kit_answer_(&a, "8.6(a)", lost51);
        kit_answer_(&a, "8.6(b1)", lost10);
        kit_answer_(&a, "8.6(b2)", lost51 < 0 || lost10 < 0 ? -1 : lost51 - lost10);
        kit_answer_(&a, "8.6(b4)", ex08_padded_tokens(batch, 512));
    }
    if (exercise == 0 || exercise == 7) {
        double launch = kit_input_(s, "ch08_ex7_launch_us");
        kit_answer_(&a, "8.7(a)", ex08_threshold_batch("llama3-8b", "h100", 1, 4096, launch, 0.05));
        kit_answer_(&a, "8.7(b)", ex08_threshold_batch("llama3-8b", "h100", 1, 1024, launch, 0.05));
        kit_answer_(&a, "8.7(c)", ex08_threshold_batch("llama3-70b", "h100", 4, 4096, launch, 0.05));
    }
    return a;
}

#endif
