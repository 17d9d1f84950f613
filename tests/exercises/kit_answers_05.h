/* Chapter 5's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h). */
#ifndef EXERCISES_KIT_ANSWERS_05_H
#define EXERCISES_KIT_ANSWERS_05_H

#include "05-serving-queue.h"
#include "kit_answers.h"

/* Exercise `exercise` (1 to 4; 0 for all) of the variant s. */
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
    return a;
}

#endif
