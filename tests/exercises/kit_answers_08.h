/* Chapter 8's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h). */
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

/* Exercise `exercise` (4 or 5; 0 for both) of the variant s. */
static inline kit_answers kit_answers_08(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 4) {
        int small = (int)kit_input_(s, "ch08_ex4_small"), large = (int)kit_input_(s, "ch08_ex4_large");
        kit_answer_(&a, "8.4(a1)", ex08_padded_tokens(small, 512));
        kit_answer_(&a, "8.4(a2)", ex08_padded_tokens(large, 512));
    }
    if (exercise == 0 || exercise == 5) {
        int ga = (int)kit_input_(s, "ch08_ex5_gamma_a"), ba = (int)kit_input_(s, "ch08_ex5_batch_a");
        int gb = (int)kit_input_(s, "ch08_ex5_gamma_b"), bb = (int)kit_input_(s, "ch08_ex5_batch_b");
        kit_answer_(&a, "8.5(a1)", ex08_spec_padded_tokens(ba, ga, 512));
        kit_answer_(&a, "8.5(a2)", ex08_spec_padded_tokens(ba, gb, 512));
        kit_answer_(&a, "8.5(a3)", ex08_spec_padded_tokens(bb, gb, 512));
        kit_answer_(&a, "8.5(c1)", kit_largest_batch_08(ga));
        kit_answer_(&a, "8.5(c2)", kit_largest_batch_08((int)kit_input_(s, "ch08_ex5_gamma_c")));
    }
    return a;
}

#endif
