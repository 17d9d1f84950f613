/* Chapter 8 exercises: each expected number is derived by hand below from
 * the op list, the launch arithmetic and the capture list, never from the
 * library's output. */
#include "08-cuda-graphs.h"

#include <math.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=08 ONLY=N). */
Test(ex08, e2_kernels_per_step)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 8B tp 1: 10 kernels a layer (11 ops, flash attention one kernel) x 32 + 3 */
    ex_check_int("8.2(a) kernels, LLaMA-3-8B, tp 1", ex08_kernels("llama3-8b", 1, "none"), 323);
    /* 70B tp 8: 12 a layer (two all-reduces) x 80 + 5 (embedding, its
     * all-reduce, final norm, logits, logits gather) = 965; all fusions
     * fold 3 a layer: 9 x 80 + 5 = 725; tp 1: 10 x 80 + 3 = 803 */
    ex_check_int("8.2(b) kernels, LLaMA-3-70B, tp 8, unfused", ex08_kernels("llama3-70b", 8, "none"), 965);
    ex_check_int("8.2(b) kernels, LLaMA-3-70B, tp 8, every fusion", ex08_kernels("llama3-70b", 8, "all"), 725);
    ex_check_int("8.2(c) kernels, LLaMA-3-70B, tp 1", ex08_kernels("llama3-70b", 1, "none"), 803);
    /* the degree does not change the count once it is above 1: 12 x 80 + 5 at tp 2 and 4 too */
    ex_check_int("8.2(b) kernels, LLaMA-3-70B, tp 2, unfused", ex08_kernels("llama3-70b", 2, "none"), 965);
    ex_check_int("8.2(b) kernels, LLaMA-3-70B, tp 4, every fusion", ex08_kernels("llama3-70b", 4, "all"), 725);
#endif
    /* norm-residual alone: 8 a layer x 32 + 3 = 259 */
    ex_check_int("8.2 kernels, LLaMA-3-8B, norm-residual fusion", ex08_kernels("llama3-8b", 1, "norm-residual"), 259);
    ex_check_int("8.2 fusion \"everything\" (not a fusion)", ex08_kernels("llama3-8b", 1, "everything"), -1);
    ex_check_int("8.2 model \"gpt-9\" (not in the table)", ex08_kernels("gpt-9", 1, "none"), -1);
}

Test(ex08, e1_graphs_do_not_make_kernels_faster)
{
    /* Batch 1, context 1: the step reads 15,009,857,536 B of weights
     * (test_graphs.c), 4.4806 ms at 3.35 TB/s.  4 us launches: 1.292 ms of
     * host, hidden behind the GPU: nothing saved. */
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    ex_check_near("8.1(a) share of the step saved, 4 us launches", ex08_share_saved("llama3-8b", "h100", 1, 1, 1, 4, 1),
                  0.0, 1e-12);
    /* 20 us launches: 6.46 ms eager host; graph host 0.327 ms < GPU:
     * 1 - 4.4806 / 6.46 = 0.30641 (activations add < 0.1% to the GPU time) */
    ex_check_near("8.1(b) share of the step saved, 20 us launches",
                  ex08_share_saved("llama3-8b", "h100", 1, 1, 1, 20, 1), 1 - 4.4806e-3 / 6.46e-3, 1e-3);
    /* at the exercise's 1024-token contexts the step also reads 1024 x
     * 131,072 B of KV: 4.4806 + 0.0401 = 4.5207 ms, 1 - 4.5207 / 6.46 = 0.3002 */
    ex_check_near("8.1(b) share of the step saved, 20 us launches, 1024 tokens",
                  ex08_share_saved("llama3-8b", "h100", 1, 1, 1024, 20, 1), 1 - 4.5207e-3 / 6.46e-3, 1e-3);
#endif
    ex_check_nan("8.1 GPU \"tpu\"", ex08_share_saved("llama3-8b", "tpu", 1, 1, 1, 4, 1), "not a GPU in the table");
}

Test(ex08, e3_implied_launch_cost)
{
    /* llama.cpp issue #6763: 1/143.35 s = 6.97593 ms over 323 kernels = 21.597 us;
     * vLLM PR #1440's 12 ms over 300 kernels: 40 us */
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    ex_check_near("8.3(b) implied host us per kernel, llama.cpp", ex08_implied_launch_us(1 / 143.35, 323),
                  6975.933e-3 / 323 * 1e3, 1e-3);
#endif
    ex_check_near("8.3 implied host us per kernel, 12 ms over 300", ex08_implied_launch_us(0.012, 300), 40.0, 1e-3);
    ex_check_nan("8.3 0 kernels", ex08_implied_launch_us(0.012, 0), "a step has at least one kernel");
}

Test(ex08, e4_padding_on_the_vllm_list)
{
    /* [1,2,4] + 8..248 by 8 + 256..512 by 16: 100 -> 104, 300 -> 304,
     * 3 -> 4, 250 -> 256, 257 -> 272, 513 -> eager (0); up to 256: 260 -> 0 */
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    ex_check_int("8.4(a) batch 100 replays", ex08_padded_tokens(100, 512), 104);
    ex_check_int("8.4(a) batch 300 replays", ex08_padded_tokens(300, 512), 304);
#endif
    ex_check_int("8.4 batch 3 replays", ex08_padded_tokens(3, 512), 4);
    ex_check_int("8.4 batch 250 replays", ex08_padded_tokens(250, 512), 256);
    ex_check_int("8.4 batch 257 replays", ex08_padded_tokens(257, 512), 272);
    ex_check_int("8.4 batch 513 (0: eager)", ex08_padded_tokens(513, 512), 0);
    ex_check_int("8.4 batch 260 on a list up to 256 (0: eager)", ex08_padded_tokens(260, 256), 0);
}

Test(ex08, e4_padding_costs_only_activations_when_memory_bound)
{
    /* 9 -> 16 at context 1024: 7 dummy rows x (307,200 B a layer x 32 +
     * 553,984 B once) = 72,690,688 B (worked in test_graphs.c), over
     * 3.35 TB/s = 21.699 us */
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    ex_check_near("8.4(b) extra seconds of batch 9 padded to 16",
                  ex08_pad_extra_seconds("llama3-8b", "h100", 1, 9, 1024), 72690688.0 / 3.35e12, 1e-9);
    /* the dummies attend to nothing: the same at 4096-token contexts */
    ex_check_near("8.4(b) extra seconds of batch 9 padded to 16, 4096 tokens",
                  ex08_pad_extra_seconds("llama3-8b", "h100", 1, 9, 4096), 72690688.0 / 3.35e12, 1e-9);
#endif
    /* on the list: nothing extra */
    ex_check_near("8.4 extra seconds of batch 8 (on the list)", ex08_pad_extra_seconds("llama3-8b", "h100", 1, 8, 1024),
                  0.0, 1e-15);
}

Test(ex08, e5_speculative_tokens)
{
    /* gamma = 3: 9 x 4 = 36 -> 40; 8 x 4 = 32 on the list; gamma = 4: 45 -> 48,
     * 65 -> 72; gamma = 3 at batch 129: 516 tokens, past 512: eager */
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    ex_check_int("8.5(a) batch 9 at gamma = 3 replays", ex08_spec_padded_tokens(9, 3, 512), 40);
#endif
    ex_check_int("8.5 batch 8 at gamma = 3 replays", ex08_spec_padded_tokens(8, 3, 512), 32);
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    ex_check_int("8.5(a) batch 9 at gamma = 4 replays", ex08_spec_padded_tokens(9, 4, 512), 48);
    ex_check_int("8.5(a) batch 13 at gamma = 4 replays", ex08_spec_padded_tokens(13, 4, 512), 72);
    ex_check_int("8.5(c) batch 128 at gamma = 3 replays", ex08_spec_padded_tokens(128, 3, 512), 512);
#endif
    ex_check_int("8.5(c) batch 129 at gamma = 3 (0: eager)", ex08_spec_padded_tokens(129, 3, 512), 0);
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* gamma = 7: 8 tokens a sequence, every batch a multiple of 8 */
    for (int b = 1; b * 8 < 256; b++)
        ex_check_int("8.5(b) batch b at gamma = 7 replays 8 b", ex08_spec_padded_tokens(b, 7, 512), 8 * b);
#endif
}

Test(ex08, e6_graph_memory_against_kv)
{
    /* 51 x 26 MiB = 1,390,411,776 B; a 1024-token sequence (+1 generated)
     * holds 131,072 x 1025 = 134,348,800 B of KV: 10.35 sequences, so 10
     * or 11 are lost depending on where the floor falls.  10 graphs:
     * 272,629,760 B = 2.03 sequences: 2 or 3. */
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    ex_check_near("8.6(a) sequences lost to 51 graphs", ex08_seqs_lost("llama3-8b", "h100", 1, 1024, 51, 26), 10.5,
                  0.5);
    ex_check_near("8.6(b) sequences lost to 10 graphs", ex08_seqs_lost("llama3-8b", "h100", 1, 1024, 10, 26), 2.5,
                  0.5);
#endif
    ex_check_int("8.6 sequences lost to no graphs", ex08_seqs_lost("llama3-8b", "h100", 1, 1024, 0, 26), 0);
    ex_check_int("8.6 -1 graphs", ex08_seqs_lost("llama3-8b", "h100", 1, 1024, -1, 26), -1);
}

Test(ex08, e7_where_graphs_stop_paying)
{
    /* 20 us launches at context 4096 (test_graphs.c): eager host 6.46 ms;
     * below 5% once the GPU passes 6.137 ms; 4.4806 ms of weights + 0.16034
     * ms of KV per sequence (537,133,056 B at 3.35 TB/s): batch 10 gives
     * 6.084 ms, batch 11 gives 6.244 ms, so batch 11 */
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    ex_check_int("8.7(a) batch where the saving falls below 5%, 20 us launches",
                 ex08_threshold_batch("llama3-8b", "h100", 1, 4096, 20, 0.05), 11);
#endif
    /* at 4 us the saving is 0 from batch 1 */
    ex_check_int("8.7 batch where the saving falls below 5%, 4 us launches",
                 ex08_threshold_batch("llama3-8b", "h100", 1, 4096, 4, 0.05), 1);
    ex_check_int("8.7 GPU \"tpu\" (not in the table)", ex08_threshold_batch("llama3-8b", "tpu", 1, 4096, 4, 0.05), -1);
}

/* The variant of $NB_SEED (make exercise N=08 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_08.h"

EX_VARIANT_TEST(ex08, e4_variant, 8, kit_answers_08, 4)
EX_VARIANT_TEST(ex08, e5_variant, 8, kit_answers_08, 5)
EX_VARIANT_TEST(ex08, e1_variant, 8, kit_answers_08, 1)
EX_VARIANT_TEST(ex08, e2_variant, 8, kit_answers_08, 2)
EX_VARIANT_TEST(ex08, e3_variant, 8, kit_answers_08, 3)
EX_VARIANT_TEST(ex08, e6_variant, 8, kit_answers_08, 6)
EX_VARIANT_TEST(ex08, e7_variant, 8, kit_answers_08, 7)
