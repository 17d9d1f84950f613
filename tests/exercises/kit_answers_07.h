/* Chapter 7's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h).  7.4(b2) and 7.5(b), the shares, have no kit
 * function. */
#ifndef EXERCISES_KIT_ANSWERS_07_H
#define EXERCISES_KIT_ANSWERS_07_H

#include "07-images-as-tokens.h"
#include "kit_answers.h"

/* Exercise `exercise` (1 to 7; 0 for all) of the variant s. */
static inline kit_answers kit_answers_07(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        kit_answer_(&a, "7.1(a)", ex07_llava_next_tokens(672, 672));
        kit_answer_(&a, "7.1(b)",
                    ex07_llava_next_tokens((int)kit_input_(s, "ch07_ex1_width"), (int)kit_input_(s, "ch07_ex1_height")));
        kit_answer_(&a, "7.1(c)", ex07_llava_next_tokens(336, 336));
    }
    if (exercise == 0 || exercise == 3) {
        int w = (int)kit_input_(s, "ch07_ex3_width"), h = (int)kit_input_(s, "ch07_ex3_height");
        kit_answer_(&a, "7.3(a1)", ex07_internvl_tokens(w, h, 12));
        kit_answer_(&a, "7.3(a2)", ex07_internvl_tokens(w, h, (int)kit_input_(s, "ch07_ex3_cap")));
        kit_answer_(&a, "7.3(b)", ex07_internvl_tokens((int)kit_input_(s, "ch07_ex3_photo_w"),
                                                       (int)kit_input_(s, "ch07_ex3_photo_h"), 12));
    }
    if (exercise == 0 || exercise == 6) {
        int w = (int)kit_input_(s, "ch07_ex6_width"), h = (int)kit_input_(s, "ch07_ex6_height");
        const char *q = "qwen2.5-vl-7b";
        kit_answer_(&a, "7.6(a1)", 1e3 * ex07_encoder_seconds(q, "h100", w, h, 1, 1, 0));
        kit_answer_(&a, "7.6(a2)", 1e3 * ex07_encoder_seconds(q, "h100", w, h, 1, 2, 1));
        kit_answer_(&a, "7.6(a3)", 1e3 * ex07_encoder_seconds(q, "h100", w, h, 1, 4, 1));
        kit_answer_(&a, "7.6(b1)", 1e3 * ex07_encoder_seconds(q, "h100", w, h, 4, 4, 0));
        kit_answer_(&a, "7.6(b2)", 1e3 * ex07_encoder_seconds(q, "h100", w, h, 4, 4, 1));
        kit_answer_(&a, "7.6(c1)", 1e3 * ex07_encoder_seconds(q, "l40s", w, h, 1, 4, 1));
        kit_answer_(&a, "7.6(c2)", 1e3 * ex07_encoder_seconds(q, "l40s", w, h, 1, 1, 0));
    }
    if (exercise == 0 || exercise == 2) {
        int w = (int)kit_input_(s, "ch07_ex2_width"), h = (int)kit_input_(s, "ch07_ex2_height");
        int iw = (int)kit_input_(s, "ch07_ex2_icon_w"), ih = (int)kit_input_(s, "ch07_ex2_icon_h");
        kit_answer_(&a, "7.2(a1)", ex07_qwen_tokens(w, h, 3136, 12845056));
        kit_answer_(&a, "7.2(a2)", ex07_qwen_tokens(w, h, 3136, kit_input_(s, "ch07_ex2_cap") * 28 * 28));
        kit_answer_(&a, "7.2(b1)", ex07_qwen_tokens(iw, ih, 256 * 28 * 28, 12845056));
        kit_answer_(&a, "7.2(b2)", ex07_qwen_tokens(iw, ih, 3136, 12845056));
    }
    if (exercise == 0 || exercise == 4) {
        int text = (int)kit_input_(s, "ch07_ex4_text_tokens"), out = (int)kit_input_(s, "ch07_ex4_output_tokens");
        kit_answer_(&a, "7.4(a)", ex07_cross_context_tokens(text, 1));
        kit_answer_(&a, "7.4(b1)", ex07_cross_request_kv_bytes(text, out, 1, 1920, 1080) / 1e6);
        kit_answer_(&a, "7.4(c1)", ex07_cross_request_kv_bytes(text, out, 1, 560, 560) / 1e6);
        kit_answer_(&a, "7.4(c2)", ex07_cross_request_kv_bytes(text, out, 0, 560, 560) / 1e6);
    }
    if (exercise == 0 || exercise == 5) {
        int tokens = (int)kit_input_(s, "ch07_ex5_tokens"), patches = (int)kit_input_(s, "ch07_ex5_patches");
        double one = ex07_vit_flops(24, 1024, 4096, tokens);
        kit_answer_(&a, "7.5(a)", one / 1e9);
        kit_answer_(&a, "7.5(c)", ex07_vit_flops(24, 1024, 4096, 4 * patches + 1) / one);
    }
    if (exercise == 0 || exercise == 7) {
        int budget = (int)kit_input_(s, "ch07_ex7_budget"), text = (int)kit_input_(s, "ch07_ex7_text_tokens");
        kit_answer_(&a, "7.7(a)", ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 0, text, budget));
        kit_answer_(&a, "7.7(b1)", ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 1, text, budget));
        kit_answer_(&a, "7.7(b2)", ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 3, text, budget));
        kit_answer_(&a, "7.7(c1)", ex07_requests_per_step("llava-1.5-7b", 1920, 1080, 3, text, budget));
        kit_answer_(&a, "7.7(c2)", ex07_requests_per_step("llama3.2-11b-vision", 1920, 1080, 3, text, budget));
    }
    return a;
}

#endif
