/* Chapter 9's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h).  9.1(b) and (c), the colleague's estimate and
 * the frame counts near a target, and 9.6(c), the capacities, have no kit
 * function. */
#ifndef EXERCISES_KIT_ANSWERS_09_H
#define EXERCISES_KIT_ANSWERS_09_H

#include "09-video-diffusion.h"
#include "kit_answers.h"

/* Exercise `exercise` (1, 2, 6 or 7; 0 for all) of the variant s. */
static inline kit_answers kit_answers_09(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        int frames = (int)kit_input_(s, "ch09_ex1_frames");
        kit_answer_(&a, "9.1(a1)", ex09_latent_frames(frames, 4));
        kit_answer_(&a, "9.1(a2)", (double)ex09_tokens("wan2.1-1.3b", frames, 832, 480));
    }
    if (exercise == 0 || exercise == 2) {
        int frames = (int)kit_input_(s, "ch09_ex2_frames"), w = (int)kit_input_(s, "ch09_ex2_width");
        int h = (int)kit_input_(s, "ch09_ex2_height");
        kit_answer_(&a, "9.2(a)", ex09_step_flop("wan2.1-14b", frames, w, h, 2) / 1e15);
    }
    if (exercise == 0 || exercise == 6) {
        double sp = kit_input_(s, "ch09_ex6_service_sp"), one = kit_input_(s, "ch09_ex6_service_one");
        double low = kit_input_(s, "ch09_ex6_low"), high = kit_input_(s, "ch09_ex6_high");
        kit_answer_(&a, "9.6(a1)", ex09_mdc_time(low, sp, 1) / 60);
        kit_answer_(&a, "9.6(a2)", ex09_mdc_time(low, one, 8) / 60);
        kit_answer_(&a, "9.6(b1)", ex09_mdc_time(high, sp, 1) / 60);
        kit_answer_(&a, "9.6(b2)", ex09_mdc_time(high, one, 8) / 60);
    }
    if (exercise == 0 || exercise == 7)
        kit_answer_(&a, "9.7(a)", ex09_journal_bytes((int)kit_input_(s, "ch09_ex7_steps"),
                                                     (int)kit_input_(s, "ch09_ex7_payload")));
    return a;
}

#endif
