/* Chapter 1 exercises: each expected number is derived by hand below, from
 * the datasheet rates in code/specs/gpus.tsv and the config.json shapes in
 * code/specs/models.tsv, never from the library's output. */
#include "01-decode-roofline.h"
#include "specs.h"

#include <math.h>

#include "exercise_check.h"

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
/* Parameter counts of the models, by hand from config.json:
 *   LLaMA-3-8B: embedding 128256*4096 = 525,336,576 (head the same, untied);
 *     attention per layer 2*4096*4096 (q, o) + 2*4096*1024 (k, v: 8 KV heads
 *     * 128) = 41,943,040, *32 = 1,342,177,280; MLP 3*4096*14336*32 =
 *     5,637,144,576; norms (2*32+1)*4096 = 266,240.
 *     Total 8,030,261,248 (Meta's card: 8.03B).
 *   LLaMA-3-70B: embedding 128256*8192 = 1,050,673,152 (head the same);
 *     attention 80*(2*8192*8192 + 2*8192*1024) = 12,079,595,520; MLP
 *     3*8192*28672*80 = 56,371,445,760; norms 161*8192 = 1,318,912.
 *     Total 70,553,706,496 (the card's 70.6B).
 *   Mixtral 8x7B: embedding 32000*4096 = 131,072,000 (head the same);
 *     attention 1,342,177,280 (as LLaMA-3-8B); experts 8*3*4096*14336*32 =
 *     45,097,156,608; router 4096*8*32 = 1,048,576; norms 266,240.
 *     Total 46,702,792,704 (Mistral: 46.7B); one token uses 2 of 8 experts:
 *     total - 6*3*4096*14336*32 = 12,879,925,248 (Mistral: 12.9B active). */
#define P_LLAMA3_8B 8030261248.0
#define P_LLAMA3_70B 70553706496.0
#define EMB_LLAMA3_8B 525336576.0
#define EMB_LLAMA3_70B 1050673152.0
#define P_MIXTRAL 46702792704.0
#define P_MIXTRAL_ACTIVE 12879925248.0
#define EMB_MIXTRAL 131072000.0
#endif

/* Tests are named eN_... after exercise N (make exercise N=01 ONLY=N). */
#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex01, e1_ridges_across_vendors)
{
    /* H100 SXM: 989.4 TFLOP/s dense bf16 / 3.35 TB/s = 295.34 FLOP/B. */
    ex_check_rel("1.1 bf16 ridge of the H100", ex01_ridge("h100", "bf16"), 989.4 / 3.35, 1e-9);
    /* H200: same compute, 4.8 TB/s: 989.4 / 4.8 = 206.125. */
    ex_check_rel("1.1 bf16 ridge of the H200", ex01_ridge("h200", "bf16"), 206.125, 1e-9);
    /* B200 (HGX): 2250 / 8.0 = 281.25; fp8 4500 / 8.0 = 562.5. */
    ex_check_rel("1.1(a) bf16 ridge of the B200", ex01_ridge("b200", "bf16"), 281.25, 1e-9);
    ex_check_rel("1.1(a) fp8 ridge of the B200", ex01_ridge("b200", "fp8"), 562.5, 1e-9);
    /* MI300X: 1307.4 / 5.3 = 246.68 (bf16); fp8 2614.9 / 5.3 = 493.38. */
    ex_check_rel("1.1(a) bf16 ridge of the MI300X", ex01_ridge("mi300x", "bf16"), 246.679, 1e-5);
    ex_check_rel("1.1(a) fp8 ridge of the MI300X", ex01_ridge("mi300x", "fp8"), 493.377, 1e-5);
    /* the other GPUs a variant asks about: H200 fp8 1978.9 / 4.8 = 412.27;
     * L40S 362.05 / 0.864 = 419.04 (bf16), 733 / 0.864 = 848.38 (fp8) */
    ex_check_rel("1.1(a) fp8 ridge of the H200", ex01_ridge("h200", "fp8"), 412.271, 1e-5);
    ex_check_rel("1.1(a) bf16 ridge of the L40S", ex01_ridge("l40s", "bf16"), 419.039, 1e-5);
    ex_check_rel("1.1(a) fp8 ridge of the L40S", ex01_ridge("l40s", "fp8"), 848.380, 1e-5);
}

Test(ex01, e1_ridge_of_swapped_memories)
{
    /* B200 cores on MI300X memory: 2250 / 5.3 = 424.53 (bf16), 4500 / 5.3 =
     * 849.06 (fp8); MI300X cores on B200 memory: 1307.4 / 8.0 = 163.425,
     * 2614.9 / 8.0 = 326.8625. */
    ex_check_rel("1.1(a1) bf16 ridge, B200 cores on MI300X memory", ex01_ridge_swapped("b200", "mi300x", "bf16"),
                 424.528, 1e-5);
    ex_check_rel("1.1(a2) fp8 ridge, B200 cores on MI300X memory", ex01_ridge_swapped("b200", "mi300x", "fp8"),
                 849.057, 1e-5);
    ex_check_rel("1.1(a3) bf16 ridge, MI300X cores on B200 memory", ex01_ridge_swapped("mi300x", "b200", "bf16"),
                 163.425, 1e-6);
    ex_check_rel("1.1(a4) fp8 ridge, MI300X cores on B200 memory", ex01_ridge_swapped("mi300x", "b200", "fp8"),
                 326.8625, 1e-6);
    /* H100 cores on H200 memory is the H200: 989.4 / 4.8 = 206.125. */
    ex_check_rel("1.1 bf16 ridge, H100 cores on H200 memory", ex01_ridge_swapped("h100", "h200", "bf16"), 206.125,
                 1e-9);
    /* L40S cores on H200 memory: 733 / 4.8 = 152.71 (fp8). */
    ex_check_rel("1.1 fp8 ridge, L40S cores on H200 memory", ex01_ridge_swapped("l40s", "h200", "fp8"), 152.708, 1e-5);
}
#endif

Test(ex01, e1_ridge_rejects_bad_input)
{
    /* No such GPU; A100 has no fp8 rate (the table's "-"). */
    ex_check_nan("1.1 ridge of GPU \"h900\"", ex01_ridge("h900", "bf16"), "unknown GPU");
    ex_check_nan("1.1 fp8 ridge of the A100", ex01_ridge("a100", "fp8"), "the A100 has no fp8 rate");
    ex_check_nan("1.1 ridge in dtype \"bf17\"", ex01_ridge("h100", "bf17"), "unknown dtype");
    /* And a good one must not be NAN, so "always NAN" cannot pass. */
    cr_expect(!isnan(ex01_ridge("a100", "bf16")), "1.1 bf16 ridge of the A100: your answer nan: not computed yet");
    /* The same for a part with one GPU's cores on another's memory. */
    ex_check_nan("1.1 ridge with GPU \"h900\"'s memory", ex01_ridge_swapped("h100", "h900", "bf16"), "unknown GPU");
    ex_check_nan("1.1 fp8 ridge of A100 cores", ex01_ridge_swapped("a100", "h100", "fp8"), "the A100 has no fp8 rate");
    cr_expect(!isnan(ex01_ridge_swapped("a100", "h100", "bf16")),
              "1.1 bf16 ridge, A100 cores on H100 memory: your answer nan: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex01, e5_ridge_batch_by_weight_dtype)
{
    /* bf16 weights: 2B FLOP per 2 bytes -> intensity B, so B = ridge = 295.34. */
    ex_check_rel("1.5 ridge batch, bf16 weights, bf16 math", ex01_ridge_batch("h100", "bf16", "bf16"), 295.358, 1e-4);
    /* int8 weights, bf16 math: 2B per 1 byte = 2B, so B = 295.36 / 2 = 147.67. */
    ex_check_rel("1.5(b) ridge batch, int8 weights, bf16 math (W8A16)", ex01_ridge_batch("h100", "int8", "bf16"),
                 147.672, 1e-4);
    /* int8 weights and int8 math: ridge 1978.9/3.35 = 590.72, /2 = 295.36. */
    ex_check_rel("1.5(c) ridge batch, int8 weights, int8 math (W8A8)", ex01_ridge_batch("h100", "int8", "int8"),
                 1978.9 / 3.35 / 2.0, 1e-6);
    /* int4 weights, bf16 math: 2B per 0.5 byte = 4B, B = 295.36 / 4 = 73.84. */
    ex_check_rel("1.5 ridge batch, int4 weights, bf16 math", ex01_ridge_batch("h100", "int4", "bf16"), 73.836, 1e-4);
    /* B200, fp8 weights and math: 4500/8 = 562.5 FLOP/B, / 2 = 281.25. */
    ex_check_rel("1.5 ridge batch on the B200, fp8 weights and math", ex01_ridge_batch("b200", "fp8", "fp8"), 281.25,
                 1e-9);
    /* the other GPUs of 1.5's variants: A100 W8A16 312 / 2.039 / 2 = 76.508,
     * W8A8 624 / 2.039 / 2 = 153.02; H200 W8A16 989.4 / 4.8 / 2 = 103.06 */
    ex_check_rel("1.5(b) ridge batch on the A100 (W8A16)", ex01_ridge_batch("a100", "int8", "bf16"), 76.508, 1e-4);
    ex_check_rel("1.5(c) ridge batch on the A100 (W8A8)", ex01_ridge_batch("a100", "int8", "int8"), 153.016, 1e-4);
    ex_check_rel("1.5(b) ridge batch on the H200 (W8A16)", ex01_ridge_batch("h200", "int8", "bf16"), 103.0625, 1e-6);
}
#endif

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex01, e2_kv_bytes_per_token_gqa_vs_mha)
{
    /* LLaMA-3-8B: 2 * 32 layers * 8 KV heads * 128 * 2 B = 131,072 B (128 KiB). */
    ex_check_rel("1.2(a) KV bytes per token, LLaMA-3-8B", ex01_kv_bytes_per_token("llama3-8b", "bf16"), 131072.0,
                 1e-12);
    /* LLaMA-2-13B (MHA, 40 KV heads): 2 * 40 * 40 * 128 * 2 = 819,200 B (800 KiB). */
    ex_check_rel("1.2(a) KV bytes per token, LLaMA-2-13B", ex01_kv_bytes_per_token("llama2-13b", "bf16"), 819200.0,
                 1e-12);
    /* LLaMA-3-70B: 2 * 80 * 8 * 128 * 2 = 327,680 B (320 KiB); fp8 halves it. */
    ex_check_rel("1.2 KV bytes per token, LLaMA-3-70B bf16", ex01_kv_bytes_per_token("llama3-70b", "bf16"), 327680.0,
                 1e-12);
    ex_check_rel("1.2 KV bytes per token, LLaMA-3-70B fp8", ex01_kv_bytes_per_token("llama3-70b", "fp8"), 163840.0,
                 1e-12);
    /* 32 heads over 8 KV heads: 4; LLaMA-2-13B has a KV head per head: 1; 70B 64 / 8 = 8 */
    ex_check_rel("1.2(c) head sizing's error, LLaMA-3-8B", ex01_head_sizing_error("llama3-8b"), 4, 1e-12);
    ex_check_rel("1.2 head sizing's error, LLaMA-2-13B", ex01_head_sizing_error("llama2-13b"), 1, 1e-12);
    ex_check_rel("1.2 head sizing's error, LLaMA-3-70B", ex01_head_sizing_error("llama3-70b"), 8, 1e-12);
}
#endif

Test(ex01, e2_bad_input)
{
    ex_check_nan("1.2 KV bytes per token of model \"gpt-5\"", ex01_kv_bytes_per_token("gpt-5", "bf16"),
                 "unknown model");
    ex_check_nan("1.2 KV bytes per token in dtype \"bf17\"", ex01_kv_bytes_per_token("llama3-8b", "bf17"),
                 "unknown dtype");
    ex_check_nan("1.2 head sizing's error of model \"gpt-5\"", ex01_head_sizing_error("gpt-5"), "unknown model");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    /* one expectation per function, so the message names the one left */
    cr_expect(!isnan(ex01_kv_bytes_per_token("llama3-8b", "fp8")),
              "1.2 ex01_kv_bytes_per_token(\"llama3-8b\", \"fp8\"): NAN: not computed yet");
    cr_expect(!isnan(ex01_head_sizing_error("llama3-8b")),
              "1.2 ex01_head_sizing_error(\"llama3-8b\"): NAN: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
/* Capacities come from the GPU rows (what the driver reports), read here;
 * the rest of each budget is hand arithmetic. */
static double capacity(const char *gpu_key)
{
    return gpu_builtin(gpu_key).mem_bytes;
}

Test(ex01, e3_max_batch_llama3_8b_h200_8k)
{
    /* Usable 0.9 * capacity; weights 2 * 8,030,261,248 = 16.0605e9; the
     * chapter's reserve, the activations of an 8192-token step on one GPU:
     * (2*4096 + 32*128 + 2*8*128 + 32*128 + 3*14336) * 2 B = 122,880 B a
     * token, * 8192 = 1,006,632,960 B, and fp32 logits and probabilities of
     * 256 positions over 128,256 words, 262,668,288 B: 1,269,301,248 B, which
     * the exercise prints to the MB, 1.269 GB.  One 8k sequence: 8192 *
     * 131,072 = 1,073,741,824 B.  (With the driver's 143,771 MiB = 150.755e9:
     * 135.680e9 - 16.061e9 - 1.269e9 = 118.35e9 -> 110.) */
    double left = 0.9 * capacity("h200") - 16.0605225e9 - 1.269e9;
    ex_check_int("1.3(a) largest batch, LLaMA-3-8B on one H200 at 8k",
                 ex01_max_batch("llama3-8b", "h200", 1, 8192, "bf16", "bf16", 0.9, 1.269e9),
                 (int)floor(left / 1073741824.0));
    ex_check_int("1.3(a) largest batch, LLaMA-3-8B on one H200 at 8k (the hand figure)",
                 ex01_max_batch("llama3-8b", "h200", 1, 8192, "bf16", "bf16", 0.9, 1.269e9), 110);
    cr_expect(0.9 * capacity("h200") > 0.9 * 141e9, "the driver reports more than the datasheet's decimal GB");
}

Test(ex01, e4_max_batch_llama3_70b_eight_h200)
{
    /* 8 x H200, 4k: weights 141.107e9 / 8 = 17.638e9 per GPU; KV per token per
     * GPU 327,680 / 8 = 40,960 B, * 4096 = 167,772,160 B a sequence.
     * The chapter's reserve at TP 8 (tests/test_memory.c): 515,178,496 B,
     * printed to the MB as 0.515 GB.
     * (0.9 * 150.755e9 - 17.638e9 - 0.515e9) / 167.77e6 = 700.5 -> 700 (ridge 206 fits). */
    double w70 = 141.10741299e9; /* 2 B * 70,553,706,496 */
    ex_check_int("1.4(b) largest batch, LLaMA-3-70B on 8 x H200 at 4k",
                 ex01_max_batch("llama3-70b", "h200", 8, 4096, "bf16", "bf16", 0.9, 0.515e9),
                 (int)floor((0.9 * capacity("h200") - w70 / 8 - 0.515e9) / 167772160.0));
    ex_check_int("1.4(b) largest batch, LLaMA-3-70B on 8 x H200 at 4k (the hand figure)",
                 ex01_max_batch("llama3-70b", "h200", 8, 4096, "bf16", "bf16", 0.9, 0.515e9), 700);
}

Test(ex01, e5_max_batch_llama3_70b_h100)
{
    double w70 = 141.10741299e9; /* 2 B * 70,553,706,496 */
    /* 2 x H100: 0.9 * 85.52e9 = 76.97e9, less 70.554e9 of weights per GPU
     * and the 2e9 reserve, leaves 4.42e9; a 4k sequence holds 4096 * 163,840
     * B = 0.671e9 per GPU, so 6 fit (on the datasheet's 80e9, none would). */
    ex_check_int("1.5 largest batch, LLaMA-3-70B on 2 x H100 at 4k",
                 ex01_max_batch("llama3-70b", "h100", 2, 4096, "bf16", "bf16", 0.9, 2e9),
                 (int)floor((0.9 * capacity("h100") - w70 / 2 - 2e9) / (4096 * 163840.0)));
    /* 4 x H100 under the chapter's policy: the activations of an 8192-token
     * step at TP 4 are 761,921,536 B (test e8 below), printed to the MB as
     * 0.762 GB.  bf16: (76,968,728,985.6 - 35,276,853,248 - 762e6) /
     * (4096 * 81,920) = 121.98 -> 121, the chapter's table (and 1.8(a)). */
    ex_check_int("1.5(a) largest batch, LLaMA-3-70B on 4 x H100 at 4k, bf16",
                 ex01_max_batch("llama3-70b", "h100", 4, 4096, "bf16", "bf16", 0.9, 0.762e9), 121);
    /* int8 weights and KV: weights 17.638e9, KV 40,960 B a token:
     * (76.969 - 17.638 - 0.762)e9 / 167.77e6 = 349.1 -> 349. */
    ex_check_int("1.5(a) largest batch, LLaMA-3-70B on 4 x H100 at 4k, int8 weights and cache",
                 ex01_max_batch("llama3-70b", "h100", 4, 4096, "int8", "int8", 0.9, 0.762e9),
                 (int)floor((0.9 * capacity("h100") - w70 / 8 - 0.762e9) / 167772160.0));
    ex_check_int("1.5(a) largest batch, int8 weights and cache (the hand figure)",
                 ex01_max_batch("llama3-70b", "h100", 4, 4096, "int8", "int8", 0.9, 0.762e9), 349);
}

Test(ex01, e4_kv_outweighs_weights_at_ridge_batch)
{
    /* 70B on 8 GPUs, batch 206, 4k context: KV read 4096 and written 1 token
     * per sequence, 206 * 4097 * 40,960 B = 34.570e9; weights read (all but
     * the embedding table, of which only 206 rows are gathered)
     * (70,553,706,496 - 1,050,673,152) / 8 * 2 B = 17.376e9.  Ratio 1.990. */
    ex_check_rel("1.4(c) KV bytes over weight bytes at batch 206, 8 GPUs, 4k",
                 ex01_kv_to_weight_ratio("llama3-70b", 8, 206, 4096, "bf16"), 1.9895, 0.01);
    /* The H100 ridge batch, 295: 295 * 4097 * 40960 / 17.376e9 = 2.849. */
    ex_check_rel("1.4 KV bytes over weight bytes at batch 295, 8 GPUs, 4k",
                 ex01_kv_to_weight_ratio("llama3-70b", 8, 295, 4096, "bf16"), 2.849, 0.01);
}

Test(ex01, e4_step_intensity_at_ridge_batch)
{
    /* 70B at TP 8, batch 206, 4k.  FLOPs: projections 2 * 206 * 69,503,033,344 / 8
     * = 3.5794e12, attention 2 matmuls * 2 * 206 * 4097 * 8 heads * 128 * 80 layers
     * = 2.7656e11, 3.8560e12 in all; over the weights' 17.376e9 and the cache's
     * 34.570e9 bytes, 74.23 FLOP/B.  The activations' bytes (a few hidden
     * vectors a token and layer) bring it down, by less than a tenth. */
    double i206 = ex01_step_intensity("llama3-70b", 8, 206, 4096, "bf16");
    ex_check_near("1.4(c) the step's intensity at batch 206, 8 GPUs, 4k", i206, 0.5 * (74.23 * 0.9 + 74.3),
                  0.5 * (74.3 - 74.23 * 0.9));
}
#endif

Test(ex01, e5_max_batch_edge_cases)
{
    /* A reserve larger than what is left: nothing fits. */
    ex_check_int("1.5 largest batch with a 50 GB reserve",
                 ex01_max_batch("llama3-70b", "h100", 4, 4096, "bf16", "bf16", 0.9, 50e9), 0);
    /* 3 does not divide 64 heads: invalid. */
    ex_check_int("1.5 largest batch at TP 3 (does not divide 64 heads)",
                 ex01_max_batch("llama3-70b", "h100", 3, 4096, "bf16", "bf16", 0.9, 2e9), -1);
    ex_check_nan("1.4 intensity of model \"gpt-5\"", ex01_step_intensity("gpt-5", 8, 206, 4096, "bf16"),
                 "unknown model");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex01, e6_step_time_memory_bound)
{
    /* LLaMA-3-8B, one H100, batch 1, 1k context: weights read
     * (8,030,261,248 - 525,336,576) * 2 = 15.0098e9 B, KV 1025 * 131,072 =
     * 0.1343e9 B; 15.144e9 / 3.35e12 = 4.521 ms (activations are a few MB). */
    ex_check_rel("1.6 step time, LLaMA-3-8B on one H100, batch 1, 1k (s)",
                 ex01_step_time("llama3-8b", "h100", 1, 1, 1024, "bf16"), 4.5207e-3, 0.01);
    /* LLaMA-3-70B, 4 x H100, batch 64, 4k: weights (70.5537e9 - 1.0507e9) / 4
     * * 2 = 34.752e9 B; KV 64 * 4097 * 81,920 = 21.480e9 B; 56.232e9 / 3.35e12
     * = 16.79 ms, and activations add about a percent.  The collectives: 161
     * all-reduces (2 a layer and the embedding's) of 64 * 8192 * 2 = 1,048,576
     * B, each 4.8 us + 2*3/4 * 1,048,576 / 450e9 = 8.295 us, 1.3355 ms; and
     * the logits gather of 64 * 128,256 * 4 = 32.834e6 B, 4.8 us + 3/4 *
     * 32.834e6 / 450e9 = 59.52 us.  16.79 + 1.395 = 18.18 ms. */
    double t = ex01_step_time("llama3-70b", "h100", 4, 64, 4096, "bf16");
    cr_expect(t >= 18.18e-3 * 0.999 && t <= 18.19e-3 * 1.04,
              "1.6(a) step time, LLaMA-3-70B on 4 x H100, batch 64, 4k: your answer %.6g s, expected 18.18 ms "
              "plus activations (from %.6g to %.6g s)%s",
              t, 18.18e-3 * 0.999, 18.19e-3 * 1.04, isnan(t) ? ": NAN: not computed yet" : "");
}
#endif

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex01, e8_the_ridge_batch_fits_eight_h100s_not_four)
{
    /* The default policy on H100s: 90% of 85,520,809,984 B = 76,968,728,985.6 B,
     * less the activations of an 8192-token step (tests/test_memory.c).  TP 4:
     * (2*8192 + 16*128 + 2*2*128 + 16*128 + 3*7168) * 2 B = 84,992 B a token,
     * * 8192 = 696,254,464 B, and fp32 logits and probabilities of 256
     * positions over 32,064 words, 65,667,072 B: reserve 761,921,536 B.
     * (76,968,728,985.6 - 35,276,853,248 - 761,921,536) / (4096 * 81,920) =
     * 121.98: batch 121 steps, 122 does not.  TP 8: 350 (test_memory.c). */
    cr_expect(!isnan(ex01_step_time("llama3-70b", "h100", 4, 121, 4096, "bf16")), "1.8(a) batch 121 on 4 x H100 at 4k fits");
    ex_check_nan("1.8(a) step time at batch 122 on 4 x H100, 4k", ex01_step_time("llama3-70b", "h100", 4, 122, 4096, "bf16"),
                 "batch 122 does not fit");
    cr_expect(!isnan(ex01_step_time("llama3-70b", "h100", 8, 350, 4096, "bf16")), "1.8(b) batch 350 on 8 x H100 at 4k fits");
    ex_check_nan("1.8(b) step time at batch 351 on 8 x H100, 4k", ex01_step_time("llama3-70b", "h100", 8, 351, 4096, "bf16"),
                 "batch 351 does not fit");
    /* (c) at batch 295, TP 8, 4k: projections 2 * 295 * 69,503,033,344 / 8 =
     * 5.1259e12 FLOP, attention 2 * 2 * 295 * 4097 * 8 * 128 * 80 = 0.39604e12;
     * over 17.376e9 B of weights and 295 * 4097 * 40,960 = 49.505e9 B of cache,
     * 82.56 FLOP/B; the activations' bytes bring it down by less than a tenth. */
    double i295 = ex01_step_intensity("llama3-70b", 8, 295, 4096, "bf16");
    ex_check_near("1.8(c) the step's intensity at batch 295, 8 GPUs, 4k", i295, 0.5 * (82.56 * 0.9 + 82.6),
                  0.5 * (82.6 - 82.56 * 0.9));
}
#endif

Test(ex01, e6_bad_input)
{
    ex_check_nan("1.6 step time at batch 0", ex01_step_time("llama3-70b", "h100", 4, 0, 4096, "bf16"),
                 "batch 0 is not a batch");
    /* 200 sequences of 4k hold 200 * 4096 * 81,920 = 67.1e9 B of KV per GPU,
     * more than the 0.9 * 85.5e9 - 35.3e9 = 41.7e9 any policy leaves: NAN. */
    ex_check_nan("1.6 step time at batch 200 on 4 x H100", ex01_step_time("llama3-70b", "h100", 4, 200, 4096, "bf16"),
                 "batch 200 does not fit");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex01_step_time("llama3-8b", "h100", 1, 1, 1024, "bf16")),
              "1.6 LLaMA-3-8B on one H100 at batch 1: NAN: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex01, e7_params_dense_and_moe)
{
    ex_check_rel("1.7 total parameters, LLaMA-3-8B", ex01_total_params("llama3-8b"), P_LLAMA3_8B, 1e-6);
    ex_check_rel("1.7 total parameters, LLaMA-3-70B", ex01_total_params("llama3-70b"), P_LLAMA3_70B, 1e-6);
    ex_check_rel("1.7 active parameters, LLaMA-3-70B (dense)", ex01_active_params("llama3-70b"), P_LLAMA3_70B, 1e-6);
    ex_check_rel("1.7(a) total parameters, Mixtral 8x7B", ex01_total_params("mixtral-8x7b"), P_MIXTRAL, 1e-6);
    ex_check_rel("1.7(a) active parameters, Mixtral 8x7B", ex01_active_params("mixtral-8x7b"), P_MIXTRAL_ACTIVE, 1e-6);
}

Test(ex01, e7_moe_decode_bytes_grow_with_batch)
{
    /* Batch 1: one token reads 2 experts a layer, the active parameters less
     * the embedding table (one row gathered): (12,879,925,248 - 131,072,000)
     * * 2 B = 25.498e9 B. */
    ex_check_rel("1.7(b) weight bytes a step reads, Mixtral at batch 1",
                 ex01_decode_weight_bytes("mixtral-8x7b", 1, "bf16"), 25.4977e9, 0.002);
    /* Batch 64: each expert is missed by all 64 tokens with probability
     * 0.75^64 = 1e-8, so all 8 are read: (46,702,792,704 - 131,072,000) * 2 =
     * 93.143e9 B, 3.65x batch 1. */
    ex_check_rel("1.7(b) weight bytes a step reads, Mixtral at batch 64",
                 ex01_decode_weight_bytes("mixtral-8x7b", 64, "bf16"), 93.1434e9, 0.002);
    /* A dense model reads the same weights at any batch: 70B in bf16,
     * (70,553,706,496 - 1,050,673,152) * 2 = 139.006e9 B. */
    ex_check_rel("1.7 weight bytes a step reads, LLaMA-3-70B at batch 1",
                 ex01_decode_weight_bytes("llama3-70b", 1, "bf16"), 139.006e9, 0.002);
}
#endif

/* The variant of $NB_SEED (make exercise N=01 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_01.h"

EX_VARIANT_TEST(ex01, e1_variant, 1, kit_answers_01, 1)
EX_VARIANT_TEST(ex01, e2_variant, 1, kit_answers_01, 2)
EX_VARIANT_TEST(ex01, e3_variant, 1, kit_answers_01, 3)
EX_VARIANT_TEST(ex01, e4_variant, 1, kit_answers_01, 4)
EX_VARIANT_TEST(ex01, e5_variant, 1, kit_answers_01, 5)
EX_VARIANT_TEST(ex01, e6_variant, 1, kit_answers_01, 6)
EX_VARIANT_TEST(ex01, e7_variant, 1, kit_answers_01, 7)
EX_VARIANT_TEST(ex01, e8_variant, 1, kit_answers_01, 8)
