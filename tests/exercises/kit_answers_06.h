/* Chapter 6's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h): the inputs of the variant go in as the exercise
 * states them. */
#ifndef EXERCISES_KIT_ANSWERS_06_H
#define EXERCISES_KIT_ANSWERS_06_H

#include "06-many-fine-tunes.h"
#include "kit_answers.h"

/* Exercise `exercise` (1 to 7; 0 for all) of the variant s. */
static inline kit_answers kit_answers_06(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    int rank = (int)kit_input_(s, "ch06_ex1_rank");
    if (exercise == 0 || exercise == 1) {
        double params = ex06_adapter_params("llama3-70b", rank, "q,k,v,o");
        double blog = 80.0 * 4 * rank * (8192 + 8192); /* the exercise's formula */
        kit_answer_(&a, "6.1(a)", params / 1e6);
        kit_answer_(&a, "6.1(b)", 100 * (blog / params - 1));
        kit_answer_(&a, "6.1(c)", ex06_adapter_bytes_per_gpu("llama3-70b", rank, "q,k,v,o", 1) / 1e6);
        kit_answer_(&a, "6.1(d)", ex06_adapter_params("llama3-8b", rank, "all") / 1e6);
    }
    if (exercise == 0 || exercise == 2) {
        int tp = (int)kit_input_(s, "ch06_ex2_tp");
        kit_answer_(&a, "6.2(a1)", ex06_adapter_bytes_per_gpu("llama3-70b", rank, "q,k,v,o", tp) / 1e6);
        kit_answer_(&a, "6.2(a2)", ex06_adapter_bytes_per_gpu("llama3-70b", rank, "q,k,v,o", 8) / 1e6);
    }
    if (exercise == 0 || exercise == 3) {
        int context = (int)kit_input_(s, "ch06_ex3_context"), slot = (int)kit_input_(s, "ch06_ex3_slot_rank");
        kit_answer_(&a, "6.3(a1)", ex06_max_batch_with_slots("llama3-70b", "h100", 4, slot, "all", 0, context));
        kit_answer_(&a, "6.3(a2)", ex06_max_batch_with_slots("llama3-70b", "h100", 4, slot, "all", 16, context));
        kit_answer_(&a, "6.3(a3)", ex06_max_batch_with_slots("llama3-70b", "h100", 4, slot, "all", 64, context));
        kit_answer_(&a, "6.3(b1)", ex06_max_batch_with_slots("llama3-70b", "h100", 4, 16, "q,k,v,o", 16, context));
        kit_answer_(&a, "6.3(b2)", ex06_max_batch_with_slots("llama3-70b", "h100", 4, 16, "q,k,v,o", 64, context));
        kit_answer_(&a, "6.3(c)", ex06_adapter_bytes_per_gpu("llama3-70b", slot, "all", 4) / 1e6);
    }
    if (exercise == 0 || exercise == 4) {
        int batch = (int)kit_input_(s, "ch06_ex4_batch"), distinct = (int)kit_input_(s, "ch06_ex4_distinct");
        double us = kit_input_(s, "ch06_ex4_launch_us");
        kit_answer_(&a, "6.4(a)", 100 * (ex06_step_ratio("llama3-70b", "h100", 4, 16, "q,k,v,o", batch, 4096, distinct, us) - 1));
        kit_answer_(&a, "6.4(b)", 100 * (ex06_step_ratio("llama3-70b", "h100", 4, 16, "q,k,v,o", batch, 4096, distinct, 0) - 1));
        kit_answer_(&a, "6.4(c)", 100 * (ex06_step_ratio("llama3-70b", "h100", 4, 16, "q,k,v,o", 1, 4096, 1, us) - 1));
        kit_answer_(&a, "6.4(d)", 100 * (ex06_step_ratio("llama3-70b", "h100", 4, 16, "q,k,v,o", batch, 4096, batch, us) - 1));
    }
    if (exercise == 0 || exercise == 5) {
        int tokens = (int)kit_input_(s, "ch06_ex5_tokens");
        kit_answer_(&a, "6.5(a1)", ex06_bgmv_intensity(tokens, 1, 2));
        kit_answer_(&a, "6.5(a2)", ex06_bgmv_intensity(tokens, (int)kit_input_(s, "ch06_ex5_distinct"), 2));
        kit_answer_(&a, "6.5(a3)", ex06_bgmv_intensity(tokens, tokens, 2));
        /* (b) in exercise 4's setting, padded to the slots' rank and at the tenants' */
        int batch = (int)kit_input_(s, "ch06_ex4_batch"), distinct = (int)kit_input_(s, "ch06_ex4_distinct");
        double us = kit_input_(s, "ch06_ex4_launch_us");
        int slot = (int)kit_input_(s, "ch06_ex5_slot_rank"), tenant = (int)kit_input_(s, "ch06_ex5_tenant_rank");
        kit_answer_(&a, "6.5(b1)", 100 * (ex06_step_ratio("llama3-70b", "h100", 4, slot, "q,k,v,o", batch, 4096, distinct, us) - 1));
        kit_answer_(&a, "6.5(b2)", 100 * (ex06_step_ratio("llama3-70b", "h100", 4, tenant, "q,k,v,o", batch, 4096, distinct, us) - 1));
    }
    int adapters = (int)kit_input_(s, "ch06_ex6_adapters");
    if (exercise == 0 || exercise == 6) {
        int batch = (int)kit_input_(s, "ch06_ex6_batch");
        kit_answer_(&a, "6.6(a)", ex06_expected_distinct(adapters, 0, batch));
        kit_answer_(&a, "6.6(b)", ex06_expected_distinct(adapters, 1, batch));
        kit_answer_(&a, "6.6(c1)", ex06_expected_distinct(adapters, 0, 8));
        kit_answer_(&a, "6.6(c2)", ex06_expected_distinct(adapters, 1, 8));
    }
    if (exercise == 0 || exercise == 7) {
        kit_answer_(&a, "6.7(a1)", ex06_gpus_for_tenants("llama3-70b", 4, adapters, 1));
        kit_answer_(&a, "6.7(a2)", ex06_gpus_for_tenants("llama3-70b", 4, adapters, 0));
        kit_answer_(&a, "6.7(b1)", 1e3 * ex06_load_time("llama3-70b", "h100", 4, rank, "q,k,v,o"));
        kit_answer_(&a, "6.7(b2)", 1e3 * ex06_load_time("llama3-70b", "h100", 4, 64, "all"));
        double step = kit_input_(s, "ch06_ex7_step_ms") * 1e-3;
        kit_answer_(&a, "6.7(c1)", 100 * ex06_load_time("llama3-70b", "h100", 4, rank, "q,k,v,o") / step);
        kit_answer_(&a, "6.7(c2)", 100 * ex06_load_time("llama3-70b", "h100", 4, 64, "all") / step);
    }
    return a;
}

#endif
