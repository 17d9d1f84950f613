/* Chapter 9's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h).  9.1(b) and (c), the colleague's estimate and
 * the frame counts near a target, and 9.6(c), the capacities, have no kit
 * function.  The times of 9.2(c) and 9.7(b) are the kit's step FLOPs at
 * 45% of the H100's dense bf16 peak, 989.4 TFLOP/s (code/specs/gpus.tsv);
 * the text encoder and the VAE, which the kit does not price, add well
 * under 1%. */
#ifndef EXERCISES_KIT_ANSWERS_09_H
#define EXERCISES_KIT_ANSWERS_09_H

#include "09-video-diffusion.h"
#include "kit_answers.h"

#include <math.h>

#define KIT_09_H100_S_PER_FLOP (1 / (0.45 * 989.4e12))

/* Exercise `exercise` (1 to 7; 0 for all) of the variant s. */
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
        kit_answer_(&a, "9.2(c1)", 50 * ex09_step_flop("wan2.1-14b", frames, w, h, 2) * KIT_09_H100_S_PER_FLOP / 60);
        kit_answer_(&a, "9.2(c2)", 50 * ex09_step_flop("wan2.1-14b", frames, w, h, 1) * KIT_09_H100_S_PER_FLOP / 60);
    }
    if (exercise == 0 || exercise == 3) {
        int w = (int)kit_input_(s, "ch09_ex3_width"), h = (int)kit_input_(s, "ch09_ex3_height");
        double cross = ex09_attention_crossover_tokens("wan2.1-14b");
        kit_answer_(&a, "9.3(a1)", cross);
        kit_answer_(&a, "9.3(a2)", ex09_attention_crossover_tokens("hunyuanvideo"));
        /* the first frame count the VAE takes whose tokens reach the crossover */
        int frames = 1;
        long n;
        while ((n = ex09_tokens("wan2.1-14b", frames, w, h)) > 0 && n < cross && frames < 1000)
            frames += 4;
        kit_answer_(&a, "9.3(b)", n > 0 && isfinite(cross) ? frames : -1);
    }
    if (exercise == 0 || exercise == 4) {
        int batch = (int)kit_input_(s, "ch09_ex4_batch");
        kit_answer_(&a, "9.4(a1)", ex09_batch_gain("wan2.1-14b", "h100", batch));
        kit_answer_(&a, "9.4(a2)", ex09_batch_gain("wan2.1-1.3b", "l40s", batch));
    }
    if (exercise == 0 || exercise == 5) {
        int frames = (int)kit_input_(s, "ch09_ex5_frames");
        kit_answer_(&a, "9.5(a)", ex09_peak_memory("wan2.1-14b", "l40s", frames, 1280, 720, 1, 0) / 1e9);
        kit_answer_(&a, "9.5(c)", ex09_peak_memory("wan2.1-14b", "l40s", frames, 1280, 720, 2, 0) / 1e9);
    }
    if (exercise == 0 || exercise == 6) {
        double sp = kit_input_(s, "ch09_ex6_service_sp"), one = kit_input_(s, "ch09_ex6_service_one");
        double low = kit_input_(s, "ch09_ex6_low"), high = kit_input_(s, "ch09_ex6_high");
        kit_answer_(&a, "9.6(a1)", ex09_mdc_time(low, sp, 1) / 60);
        kit_answer_(&a, "9.6(a2)", ex09_mdc_time(low, one, 8) / 60);
        kit_answer_(&a, "9.6(b1)", ex09_mdc_time(high, sp, 1) / 60);
        kit_answer_(&a, "9.6(b2)", ex09_mdc_time(high, one, 8) / 60);
    }
    if (exercise == 0 || exercise == 7) {
        kit_answer_(&a, "9.7(a)", ex09_journal_bytes((int)kit_input_(s, "ch09_ex7_steps"),
                                                     (int)kit_input_(s, "ch09_ex7_payload")));
        double step = ex09_step_flop("wan2.1-14b", 81, 1280, 720, 2) * KIT_09_H100_S_PER_FLOP;
        kit_answer_(&a, "9.7(b)", kit_input_(s, "ch09_ex7_gpus") / step);
    }
    return a;
}

#endif
