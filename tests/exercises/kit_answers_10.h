/* Chapter 10's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h). */
#ifndef EXERCISES_KIT_ANSWERS_10_H
#define EXERCISES_KIT_ANSWERS_10_H

#include "10-speculative-decoding.h"
#include "kit_answers.h"

/* Exercise `exercise` (1 to 6; 0 for all) of the variant s. */
static inline kit_answers kit_answers_10(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        double alpha = kit_input_(s, "ch10_ex1_alpha");
        int g = (int)kit_input_(s, "ch10_ex1_gamma");
        kit_answer_(&a, "10.1(a)", ex10_expected_tokens(alpha, g));
        kit_answer_(&a, "10.1(c)", ex10_speedup(alpha, g, 0.0));
    }
    if (exercise == 0 || exercise == 2) {
        double alpha = kit_input_(s, "ch10_ex2_alpha");
        int g = (int)kit_input_(s, "ch10_ex2_gamma");
        kit_answer_(&a, "10.2(a1)", ex10_expected_tokens(alpha, g));
        kit_answer_(&a, "10.2(a2)", ex10_prob_tokens(alpha, g, 1));
        kit_answer_(&a, "10.2(a3)", ex10_prob_tokens(alpha, g, g + 1));
        kit_answer_(&a, "10.2(a4)", ex10_tokens_stddev(alpha, g));
        kit_answer_(&a, "10.2(b)", ex10_prob_tokens(alpha, g, 1) + ex10_prob_tokens(alpha, g, 2));
    }
    if (exercise == 0 || exercise == 3) {
        double c = kit_input_(s, "ch10_ex3_cost"), alpha = kit_input_(s, "ch10_ex3_alpha");
        int g = (int)kit_input_(s, "ch10_ex3_gamma");
        int best = ex10_best_gamma(alpha, c, 10);
        kit_answer_(&a, "10.3(a)", ex10_speedup(alpha, g, c));
        kit_answer_(&a, "10.3(b1)", best);
        kit_answer_(&a, "10.3(b2)", best >= 1 ? ex10_speedup(alpha, best, c) : NAN);
        kit_answer_(&a, "10.3(c)", ex10_speedup(alpha, 10, c));
    }
    if (exercise == 0 || exercise == 4) {
        double t = kit_input_(s, "ch10_ex4_target"), c = kit_input_(s, "ch10_ex4_cost");
        int g = (int)kit_input_(s, "ch10_ex4_gamma");
        kit_answer_(&a, "10.4(a)", ex10_alpha_for_speedup(t, g, c));
        kit_answer_(&a, "10.4(b)", ex10_alpha_for_speedup(t, 2, c));
        kit_answer_(&a, "10.4(c)", ex10_speedup(1.0, 2, c));
    }
    if (exercise == 0 || exercise == 5) {
        double alpha = kit_input_(s, "ch10_ex5_alpha"), c = kit_input_(s, "ch10_ex5_c");
        int g = (int)kit_input_(s, "ch10_ex5_gamma");
        kit_answer_(&a, "10.5(a)", ex10_speedup(alpha, g, c));
        kit_answer_(&a, "10.5(b1)", ex10_operations_factor(alpha, g, c));
        kit_answer_(&a, "10.5(b2)", ex10_operations_factor(alpha, g, 0.0));
    }
    if (exercise == 0 || exercise == 6) {
        int g = (int)kit_input_(s, "ch10_ex6_gamma"), ctx = (int)kit_input_(s, "ch10_ex6_context");
        kit_answer_(&a, "10.6(a2)", ex10_verify_ratio("llama3-70b", "h100", 4, (int)kit_input_(s, "ch10_ex6_batch2"), ctx, g));
        kit_answer_(&a, "10.6(a3)", ex10_verify_ratio("llama3-70b", "h100", 4, (int)kit_input_(s, "ch10_ex6_batch3"), ctx, g));
    }
    return a;
}

#endif
