/* Chapter 1's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h): the inputs of the variant go in as the exercise
 * states them. */
#ifndef EXERCISES_KIT_ANSWERS_01_H
#define EXERCISES_KIT_ANSWERS_01_H

#include "01-decode-roofline.h"
#include "kit_answers.h"

/* The largest batch whose step the kit prices: ex01_step_time is NAN when
 * the batch's cache does not fit under the default policy; -1 (no answer)
 * when it prices none, as an untouched kit does. */
static inline int kit01_largest_stepping_batch(const char *gpu, int tp, int context)
{
    int b = 0;
    while (b < 100000 && !isnan(ex01_step_time("llama3-70b", gpu, tp, b + 1, context, "bf16")))
        b++;
    return b > 0 ? b : -1;
}

/* Exercise `exercise` (1 to 8; 0 for all) of the variant s. */
static inline kit_answers kit_answers_01(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        /* the GPUs the variant names, by their table keys */
        const char *ga = practice_input_key(s, "ch01_ex1_gpu_a"), *gb = practice_input_key(s, "ch01_ex1_gpu_b");
        int both = ga && gb;
        kit_answer_(&a, "1.1(a1)", both ? ex01_ridge_swapped(ga, gb, "bf16") : NAN);
        kit_answer_(&a, "1.1(a2)", both ? ex01_ridge_swapped(ga, gb, "fp8") : NAN);
        kit_answer_(&a, "1.1(a3)", both ? ex01_ridge_swapped(gb, ga, "bf16") : NAN);
        kit_answer_(&a, "1.1(a4)", both ? ex01_ridge_swapped(gb, ga, "fp8") : NAN);
    }
    if (exercise == 0 || exercise == 2) {
        double budget = kit_input_(s, "ch01_ex2_budget_gb") * 1e9, context = kit_input_(s, "ch01_ex2_context");
        double kv13 = ex01_kv_bytes_per_token("llama2-13b", "bf16"), kv8 = ex01_kv_bytes_per_token("llama3-8b", "bf16");
        kit_answer_(&a, "1.2(a1)", kv13);
        kit_answer_(&a, "1.2(a2)", kv8);
        kit_answer_(&a, "1.2(b1)", floor(budget / (kv13 * context)));
        kit_answer_(&a, "1.2(b2)", floor(budget / (kv8 * context)));
        kit_answer_(&a, "1.2(c)", ex01_head_sizing_error("llama3-8b"));
    }
    /* exercise 4 keeps exercise 3's usable share; each states its reserve */
    double usable = kit_input_(s, "ch01_ex3_usable_pct") / 100, reserve = kit_input_(s, "ch01_ex3_reserve_gb") * 1e9;
    if (exercise == 0 || exercise == 3) {
        int context = (int)kit_input_(s, "ch01_ex3_context");
        int b = ex01_max_batch("llama3-8b", "h200", 1, context, "bf16", "bf16", usable, reserve);
        kit_answer_(&a, "1.3(a)", b);
        kit_answer_(&a, "1.3(b)", ex01_ridge_batch("h200", "bf16", "bf16"));
        kit_answer_(&a, "1.3(c)", ex01_kv_to_weight_ratio("llama3-8b", 1, b, context, "bf16"));
    }
    if (exercise == 0 || exercise == 4) {
        int tp = (int)kit_input_(s, "ch01_ex4_tp"), context = (int)kit_input_(s, "ch01_ex4_context");
        int ridge = (int)lround(ex01_ridge_batch("h200", "bf16", "bf16"));
        kit_answer_(&a, "1.4(a1)", 2 * ex01_total_params("llama3-70b") / tp / 1e9);
        kit_answer_(&a, "1.4(a2)", ex01_kv_bytes_per_token("llama3-70b", "bf16") / tp);
        double reserve4 = kit_input_(s, "ch01_ex4_reserve_gb") * 1e9;
        kit_answer_(&a, "1.4(b)", ex01_max_batch("llama3-70b", "h200", tp, context, "bf16", "bf16", usable, reserve4));
        kit_answer_(&a, "1.4(c1)", ex01_kv_to_weight_ratio("llama3-70b", tp, ridge, context, "bf16"));
        kit_answer_(&a, "1.4(c2)", ex01_step_intensity("llama3-70b", tp, ridge, context, "bf16"));
    }
    if (exercise == 0 || exercise == 5) {
        int tp = (int)kit_input_(s, "ch01_ex5_tp"), context = (int)kit_input_(s, "ch01_ex5_context");
        const char *g = practice_input_key(s, "ch01_ex5_gpu");
        g = g ? g : "none";
        double reserve5 = kit_input_(s, "ch01_ex5_reserve_gb") * 1e9;
        kit_answer_(&a, "1.5(a1)", ex01_max_batch("llama3-70b", g, tp, context, "bf16", "bf16", 0.9, reserve5));
        kit_answer_(&a, "1.5(a2)", ex01_max_batch("llama3-70b", g, tp, context, "int8", "int8", 0.9, reserve5));
        kit_answer_(&a, "1.5(b)", ex01_ridge_batch(g, "int8", "bf16"));
        kit_answer_(&a, "1.5(c1)", ex01_ridge(g, "int8"));
        kit_answer_(&a, "1.5(c2)", ex01_ridge_batch(g, "int8", "int8"));
    }
    if (exercise == 0 || exercise == 6) {
        int tp = (int)kit_input_(s, "ch01_ex6_tp"), context = (int)kit_input_(s, "ch01_ex6_context");
        int batch = (int)kit_input_(s, "ch01_ex6_batch");
        double t1 = ex01_step_time("llama3-70b", "h100", tp, 1, context, "bf16");
        double tb = ex01_step_time("llama3-70b", "h100", tp, batch, context, "bf16");
        kit_answer_(&a, "1.6(a1)", 1 / t1);
        kit_answer_(&a, "1.6(a2)", 1 / tb);
        kit_answer_(&a, "1.6(b)", batch / tb);
        kit_answer_(&a, "1.6(c1)", batch * t1 / tb);
        kit_answer_(&a, "1.6(c2)", tb / t1);
    }
    if (exercise == 0 || exercise == 7) {
        kit_answer_(&a, "1.7(a1)", ex01_total_params("mixtral-8x7b") / 1e9);
        kit_answer_(&a, "1.7(a2)", ex01_active_params("mixtral-8x7b") / 1e9);
        kit_answer_(&a, "1.7(b1)", ex01_decode_weight_bytes("mixtral-8x7b", 1, "bf16") / 1e9);
        kit_answer_(&a, "1.7(b2)",
                    ex01_decode_weight_bytes("mixtral-8x7b", (int)kit_input_(s, "ch01_ex7_small_batch"), "bf16") / 1e9);
        kit_answer_(&a, "1.7(b3)",
                    ex01_decode_weight_bytes("mixtral-8x7b", (int)kit_input_(s, "ch01_ex7_large_batch"), "bf16") / 1e9);
    }
    if (exercise == 0 || exercise == 8) {
        const char *g = practice_input_key(s, "ch01_ex8_gpu");
        g = g ? g : "none";
        int context = (int)kit_input_(s, "ch01_ex8_context"), ridge = (int)lround(ex01_ridge_batch(g, "bf16", "bf16"));
        kit_answer_(&a, "1.8(a)", kit01_largest_stepping_batch(g, 4, context));
        kit_answer_(&a, "1.8(b)", kit01_largest_stepping_batch(g, 8, context));
        kit_answer_(&a, "1.8(c)", ex01_step_intensity("llama3-70b", 8, ridge, context, "bf16"));
    }
    return a;
}

#endif
