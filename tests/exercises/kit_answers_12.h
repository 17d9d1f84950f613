/* Chapter 12's variant parts answered by the kit's functions: the inputs of
 * the variant go in as the exercise states them, the kit's numbers come out
 * in the part's unit.  Used by the kit's checks (test_12.c) and by
 * kit_answers_12.c, which writes them as the grade's answers file. */
#ifndef EXERCISES_KIT_ANSWERS_12_H
#define EXERCISES_KIT_ANSWERS_12_H

#include "12-sizing-a-training-cluster.h"
#include "kit_answers.h"
#include "specs.h"

/* Exercise `exercise` (1, 5 or 7; 0 for all) of the variant s. */
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
