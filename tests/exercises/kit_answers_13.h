/* Chapter 13's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h).  13.4(c), the dispatch's time, has no kit
 * function; 13.2(b2), where no tensor-parallel degree fits, is the kit's
 * -1 (test_13.c checks it), the page's 0. */
#ifndef EXERCISES_KIT_ANSWERS_13_H
#define EXERCISES_KIT_ANSWERS_13_H

#include "13-serving-todays-models.h"
#include "kit_answers.h"

/* Exercise `exercise` (1 to 6; 0 for all) of the variant s. */
static inline kit_answers kit_answers_13(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        int ctx = (int)kit_input_(s, "ch13_ex1_context");
        kit_answer_(&a, "13.1(a)", ex13_kv_bytes_per_sequence("deepseek-v3", "bf16", ctx) / 1e6);
        kit_answer_(&a, "13.1(b)", ex13_kv_bytes_per_sequence("qwen3-235b-a22b", "bf16", ctx) / 1e6);
        kit_answer_(&a, "13.1(c)", ex13_kv_bytes_per_sequence("gpt-oss-120b", "bf16", ctx) / 1e6);
    }
    if (exercise == 0 || exercise == 2) {
        int ctx = (int)kit_input_(s, "ch13_ex2_context");
        int lo = (int)kit_input_(s, "ch13_ex2_low"), mid = (int)kit_input_(s, "ch13_ex2_mid");
        kit_answer_(&a, "13.2(a1)", ex13_h200s_for_deepseek(lo, ctx, "ep"));
        kit_answer_(&a, "13.2(a2)", ex13_h200s_for_deepseek(lo, ctx, "tp"));
        kit_answer_(&a, "13.2(b1)", ex13_h200s_for_deepseek(mid, ctx, "ep"));
        kit_answer_(&a, "13.2(c)", ex13_h200s_for_deepseek((int)kit_input_(s, "ch13_ex2_high"), ctx, "ep"));
    }
    if (exercise == 0 || exercise == 3) {
        double share = kit_input_(s, "ch13_ex3_share") / 100;
        kit_answer_(&a, "13.3(a)", ex13_experts_touched(256, 8, kit_input_(s, "ch13_ex3_tokens")));
        kit_answer_(&a, "13.3(b)", ex13_tokens_to_cover(256, 8, share));
        kit_answer_(&a, "13.3(c)", ex13_tokens_to_cover(128, 8, share));
    }
    if (exercise == 0 || exercise == 4) {
        double tokens = kit_input_(s, "ch13_ex4_tokens");
        kit_answer_(&a, "13.4(a)", ex13_dispatch_bytes(tokens, 256, 8, 7168, 8, 1) / 1e6);
        kit_answer_(&a, "13.4(b)", ex13_dispatch_bytes(tokens, 256, 8, 7168, (int)kit_input_(s, "ch13_ex4_gpus"), 1) / 1e6);
    }
    if (exercise == 0 || exercise == 5) {
        double p = kit_input_(s, "ch13_ex5_prefill"), d = kit_input_(s, "ch13_ex5_decode_ms") / 1e3;
        int out = (int)kit_input_(s, "ch13_ex5_output");
        kit_answer_(&a, "13.5(a)", ex13_aggregated_tpot(p, d, 100, out) * 1e3);
        kit_answer_(&a, "13.5(b)", ex13_disagg_requests_per_s(p, d, 100, out, 8, 8, 4));
        kit_answer_(&a, "13.5(c)", ex13_aggregated_requests_per_s(p, d, 100, out, 16, 4));
    }
    if (exercise == 0 || exercise == 6) {
        int prompt = (int)kit_input_(s, "ch13_ex6_prompt"), out = (int)kit_input_(s, "ch13_ex6_output");
        int prefix = (int)kit_input_(s, "ch13_ex6_prefix");
        double hit = kit_input_(s, "ch13_ex6_hit") / 100;
        kit_answer_(&a, "13.6(a)", ex13_prefix_max_concurrency(60e9, 131072, prompt, out, prefix, 0));
        kit_answer_(&a, "13.6(b)", ex13_prefix_max_concurrency(60e9, 131072, prompt, out, prefix, 1));
        kit_answer_(&a, "13.6(c)", ex13_prefix_max_concurrency(60e9, 131072, prompt, out, prefix, hit));
    }
    return a;
}

#endif
