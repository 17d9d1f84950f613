/* Chapter 11's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h).  11.6(b), the dashboard's share, has no kit
 * function; 11.2(c) prices a target sequence with the draft function, which
 * prices any model's weights and KV. */
#ifndef EXERCISES_KIT_ANSWERS_11_H
#define EXERCISES_KIT_ANSWERS_11_H

#include "11-speculative-fleet.h"
#include "kit_answers.h"

#include <math.h>

/* Exercise `exercise` (1 to 7; 0 for all) of the variant s. */
static inline kit_answers kit_answers_11(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        const char *T = "llama3-70b", *D = "llama3.2-1b", *G = "h100";
        double alpha = kit_input_(s, "ch11_ex1_alpha");
        int ctx = (int)kit_input_(s, "ch11_ex1_context");
        kit_answer_(&a, "11.1(a1)", ex11_speedup_at_batch(T, D, G, 4, 1, ctx, alpha, 4));
        kit_answer_(&a, "11.1(a2)", ex11_speedup_at_batch(T, D, G, 4, 128, ctx, alpha, 4));
        kit_answer_(&a, "11.1(b1)", ex11_max_batch(T, D, G, 4, ctx, 4));
        kit_answer_(&a, "11.1(b2)", ex11_break_even_batch(T, D, G, 4, ctx, alpha, 4, 4096));
    }
    if (exercise == 0 || exercise == 2) {
        int b = (int)kit_input_(s, "ch11_ex2_batch"), ctx = (int)kit_input_(s, "ch11_ex2_context");
        double big = ex11_draft_memory_per_gpu("llama3-8b", 4, b, ctx);
        /* one more target sequence: its KV per GPU */
        double seq = ex11_draft_memory_per_gpu("llama3-70b", 4, 2, ctx) - ex11_draft_memory_per_gpu("llama3-70b", 4, 1, ctx);
        kit_answer_(&a, "11.2(a)", ex11_draft_memory_per_gpu("llama3.2-1b", 4, b, ctx) / 1e9);
        kit_answer_(&a, "11.2(b)", big / 1e9);
        kit_answer_(&a, "11.2(c)", big / seq);
    }
    if (exercise == 0 || exercise == 3) {
        kit_answer_(&a, "11.3(a)", ex11_cusum_threshold(pow(10, kit_input_(s, "ch11_ex3_exp_a"))));
        kit_answer_(&a, "11.3(b)", ex11_cusum_threshold(pow(10, kit_input_(s, "ch11_ex3_exp_b"))));
    }
    if (exercise == 0 || exercise == 4) {
        double a0 = kit_input_(s, "ch11_ex4_alpha0"), a1 = kit_input_(s, "ch11_ex4_alpha1");
        int g = (int)kit_input_(s, "ch11_ex4_gamma");
        kit_answer_(&a, "11.4(a1)", ex11_cusum_llr(a0, a1, g, 0));
        kit_answer_(&a, "11.4(a2)", ex11_cusum_llr(a0, a1, g, 1));
        kit_answer_(&a, "11.4(a3)", ex11_cusum_llr(a0, a1, g, g - 1));
        kit_answer_(&a, "11.4(a4)", ex11_cusum_llr(a0, a1, g, g));
    }
    if (exercise == 0 || exercise == 5) {
        double a0 = kit_input_(s, "ch11_ex4_alpha0"), a1 = kit_input_(s, "ch11_ex4_alpha1");
        int g = (int)kit_input_(s, "ch11_ex4_gamma");
        double arl_a = pow(10, kit_input_(s, "ch11_ex3_exp_a")), arl_b = pow(10, kit_input_(s, "ch11_ex3_exp_b"));
        kit_answer_(&a, "11.5(a)", ex11_cusum_delay_bound(a0, a1, g, arl_a));
        kit_answer_(&a, "11.5(b)", ex11_cusum_delay_bound(a0, a1, g, arl_b));
        kit_answer_(&a, "11.5(c)", ex11_cusum_delay_bound(a0, a1, 8, arl_a));
    }
    if (exercise == 0 || exercise == 6)
        kit_answer_(&a, "11.6(a)", ex11_alpha_estimate((long)kit_input_(s, "ch11_ex6_accepted"),
                                                      (long)kit_input_(s, "ch11_ex6_rejections")));
    if (exercise == 0 || exercise == 7) {
        double ab = kit_input_(s, "ch11_ex7_pred_ab");
        long n_ab = (long)kit_input_(s, "ch11_ex7_rounds_ab");
        kit_answer_(&a, "11.7(a)", ex11_rollout_next(0, ab, n_ab));
        kit_answer_(&a, "11.7(b)", ex11_rollout_next(1, ab, n_ab));
        kit_answer_(&a, "11.7(c)", ex11_rollout_next(0, kit_input_(s, "ch11_ex7_pred_c"), (long)kit_input_(s, "ch11_ex7_rounds_c")));
        kit_answer_(&a, "11.7(d)", ex11_rollout_next(1, kit_input_(s, "ch11_ex7_pred_d"), (long)kit_input_(s, "ch11_ex7_rounds_d")));
    }
    return a;
}

#endif
