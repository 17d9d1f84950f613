/* Chapter 5's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h). */
#ifndef EXERCISES_KIT_ANSWERS_05_H
#define EXERCISES_KIT_ANSWERS_05_H

#include "05-serving-queue.h"
#include "kit_answers.h"
#include "specs.h"

/* Exercises 8 to 10 ask `napkin serve`, not a kit function: the kit leaves
 * them to the candidate's own answers (the page's boxes, or an answers file
 * for make grade), and tests/test_practice_ch05.c checks the variant's
 * answers against a second walk of the same arithmetic. */
/* Exercise `exercise` (1 to 6; 0 for all) of the variant s. */
static inline kit_answers kit_answers_05(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        double lambda = kit_input_(s, "ch05_ex1_rate"), w = kit_input_(s, "ch05_ex1_latency");
        kit_answer_(&a, "5.1(a)", ex05_in_system(lambda, w));
        kit_answer_(&a, "5.1(b)", ex05_cache_bytes("llama3-8b", ex05_in_system(lambda, w),
                                                  (int)kit_input_(s, "ch05_ex1_tokens"), "bf16") / 1e9);
        kit_answer_(&a, "5.1(c)", ex05_in_system(lambda, 2 * w));
    }
    if (exercise == 0 || exercise == 2) {
        double sv = kit_input_(s, "ch05_ex2_service"), lambda = kit_input_(s, "ch05_ex2_rate");
        kit_answer_(&a, "5.2(b1)", ex05_mm1_time(lambda, 1 / sv));
        kit_answer_(&a, "5.2(b2)", ex05_md1_time(lambda, 1 / sv));
        kit_answer_(&a, "5.2(c1)", ex05_mg1_wait(lambda, sv, 1));
        kit_answer_(&a, "5.2(c2)", ex05_mg1_wait(lambda, sv, 0));
    }
    if (exercise == 0 || exercise == 3) {
        double sv = kit_input_(s, "ch05_ex3_service"), near = kit_input_(s, "ch05_ex3_near");
        double far = kit_input_(s, "ch05_ex3_far");
        kit_answer_(&a, "5.3(a1)", ex05_max_rate(sv, 0, near));
        kit_answer_(&a, "5.3(a2)", ex05_max_rate(sv, 0, far));
        kit_answer_(&a, "5.3(b1)", ex05_max_rate(sv, 1, near));
        kit_answer_(&a, "5.3(b2)", ex05_max_rate(sv, 1, far));
        kit_answer_(&a, "5.3(c1)", 100 * (1 - ex05_max_rate(sv, 0, near) * sv));
        kit_answer_(&a, "5.3(c2)", 100 * (1 - ex05_max_rate(sv, 1, near) * sv));
    }
    if (exercise == 0 || exercise == 4) {
        double sv = kit_input_(s, "ch05_ex4_service"), cs2 = kit_input_(s, "ch05_ex4_cs2");
        double lambda = kit_input_(s, "ch05_ex4_rate");
        kit_answer_(&a, "5.4(a)", ex05_mg1_wait(lambda, sv, cs2));
        kit_answer_(&a, "5.4(b1)", ex05_mg1_wait(lambda, sv, 0));
        kit_answer_(&a, "5.4(b2)", ex05_mg1_wait(lambda, sv, 1));
    }
    double cap_b = NAN, cap_k = NAN, cap_1 = NAN;
    if (exercise == 0 || exercise == 5 || exercise == 6) {
        int prompt = (int)kit_input_(s, "ch05_ex5_prompt"), output = (int)kit_input_(s, "ch05_ex5_output");
        int batch = (int)kit_input_(s, "ch05_ex5_batch"), cap = (int)kit_input_(s, "ch05_ex5_cap");
        cap_b = ex05_batch_capacity("llama3-8b", "h100", prompt, output, batch, 0);
        cap_k = ex05_batch_capacity("llama3-8b", "h100", prompt, output, batch, cap);
        cap_1 = ex05_batch_capacity("llama3-8b", "h100", prompt, output, 1, 0);
        if (exercise != 6) {
            kit_answer_(&a, "5.5(a1)", batch / cap_b); /* a full batch is the best one */
            kit_answer_(&a, "5.5(a2)", cap_b);
            kit_answer_(&a, "5.5(b)", cap_k);
            kit_answer_(&a, "5.5(c)", cap_1);
        }
    }
    if (exercise == 0 || exercise == 6) {
        double rate = kit_input_(s, "ch05_ex6_rate"), load = kit_input_(s, "ch05_ex6_load_pct") / 100;
        kit_answer_(&a, "5.6(a)", ex05_replicas_needed(rate, cap_b, load));
        kit_answer_(&a, "5.6(b)", ex05_replicas_needed(rate, cap_k, load));
        kit_answer_(&a, "5.6(c)", ex05_replicas_needed(rate, cap_1, load));
    }
    return a;
}

#endif
