/* Chapter 12 exercises: each expected number is derived by hand below from
 * the models' config files and the published figures, never from the
 * library's output. */
#include "12-sizing-a-training-cluster.h"

#include "specs.h"

#include <math.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=12 ONLY=N). */
#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex12, e1_sparse_trap)
{
    /* 6 * 13e9 * 2e12 = 1.56e23 FLOP; / (989.4e12 * 0.4) = 3.941783e8 GPU-s; over
     * 30 days (2,592,000 s): 152.08 GPUs -> 160.  Against twice the peak: 76.04 -> 80. */
    ex_check_int("12.1(a) GPUs the spreadsheet rents", ex12_gpus_for_deadline(1.56e23, 30, 1978.8e12, 0.4, 8), 80);
    ex_check_int("12.1(b) GPUs the run needs", ex12_gpus_for_deadline(1.56e23, 30, 989.4e12, 0.4, 8), 160);
    /* the 80 GPUs really take 3.941783e8 / 80 / 86400 = 57.03 days */
    ex_check_near("12.1(c) days on the spreadsheet's cluster", ex12_days_on(1.56e23, 80, 989.4e12, 0.4),
                  1.56e23 / (989.4e12 * 0.4) / 80 / 86400, 1e-9);
    ex_check_int("12.1 an MFU of 1.5 (impossible)", ex12_gpus_for_deadline(1.56e23, 30, 989.4e12, 1.5, 8), -1);
}
#endif

Test(ex12, e2_six_or_eight_nd)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* full recomputation re-runs a whole forward, a third of every term: 8/6 */
    ex_check_near("12.2(a) hardware over model FLOPs, full recompute, 70B at 8k",
                  ex12_hardware_over_model(69503033344.0, 80, 8192, 8192, "full"), 4.0 / 3.0, 1e-12);
    ex_check_near("12.2(a) hardware over model FLOPs, full recompute, no attention term",
                  ex12_hardware_over_model(7e9, 0, 0, 4096, "full"), 4.0 / 3.0, 1e-12);
    /* selective: + 4 L s d = 4*80*8192*8192 = 21,474,836,480 over
     * 6N + 12 L s d = 417,018,200,064 + 64,424,509,440 = 481,442,709,504 */
    ex_check_near("12.2(c) hardware over model FLOPs, selective recompute, 70B at 8k",
                  ex12_hardware_over_model(69503033344.0, 80, 8192, 8192, "selective"),
                  1 + 21474836480.0 / 481442709504.0, 1e-12);
#endif
    ex_check_near("12.2 hardware over model FLOPs without recompute", ex12_hardware_over_model(7e9, 32, 4096, 4096, "none"),
                  1.0, 0);
    ex_check_nan("12.2 recompute \"half\"", ex12_hardware_over_model(7e9, 32, 4096, 4096, "half"),
                 "not a recompute setting");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex12, e5_failures_grow)
{
    /* lost share = (466 / (54 * 16384)) * G * (0.1 * 54 * 24 / 466) / 24 = 0.1 G / 16384 */
    ex_check_near("12.5(a) goodput of 1,024 GPUs", ex12_goodput_llama3(1024), 1 - 0.1 * 1024 / 16384, 1e-12);
    ex_check_near("12.5(a) goodput of 8,192 GPUs", ex12_goodput_llama3(8192), 0.95, 1e-12);
    ex_check_near("12.5(a) goodput of 16,384 GPUs", ex12_goodput_llama3(16384), 0.90, 1e-12);
    /* goodput 1 - 0.1 G / 16384 falls to 0.95 at G = 0.05 * 163840 = 8192, to 0.97 at 4915.2 */
    ex_check_rel("12.5(b) GPUs at 95% goodput", ex12_gpus_at_goodput(0.95), 8192, 1e-9);
    ex_check_rel("12.5(b) GPUs at 97% goodput", ex12_gpus_at_goodput(0.97), 4915.2, 1e-9);
    /* 466 / (54 * 16384) a GPU-day: 8,192 GPUs see 466 / 108 = 4.3148 a day, 16,384 see 466 / 54 */
    ex_check_rel("12.5(c) interruptions a day on 8,192 GPUs", ex12_interruptions_per_day(8192), 466.0 / 108, 1e-12);
    ex_check_rel("12.5(c) interruptions a day on 16,384 GPUs", ex12_interruptions_per_day(16384), 466.0 / 54, 1e-12);
}
#endif

Test(ex12, e5_bad_input)
{
    ex_check_nan("12.5(b) GPUs at 100% goodput", ex12_gpus_at_goodput(1.0), "no cluster keeps all its time");
    ex_check_nan("12.5(b) GPUs at 0% goodput", ex12_gpus_at_goodput(0), "not a goodput to solve for");
    ex_check_nan("12.5(c) interruptions on 0 GPUs", ex12_interruptions_per_day(0), "no cluster");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex12_gpus_at_goodput(0.9)), "12.5(b) ex12_gpus_at_goodput(0.9): NAN: not computed yet");
    cr_expect(!isnan(ex12_interruptions_per_day(1024)),
              "12.5(c) ex12_interruptions_per_day(1024): NAN: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex12, e7_published_run)
{
    /* 989.4e12 * 30.84e6 * 3600 = 1.0984718e26; 3.8e25 / 1.0984718e26 = 0.345935 */
    ex_check_near("12.7(a) average utilisation of the GPU-hours", ex12_implied_utilisation(3.8e25, 989.4e12, 30.84e6),
                  0.345935, 1e-6);
    /* 16384 * 989.4e12 * 0.369 = 5.981611e18 FLOP/s; 3.8e25 / 5.981611e18 = 6.352803e6 s = 73.528 days */
    ex_check_near("12.7(b) days on 16,384 GPUs at 41% MFU, 90% goodput",
                  ex12_days_on(3.8e25, 16384, 989.4e12, 0.41 * 0.9), 73.5278, 1e-3);
}
#endif

Test(ex12, e3_thirty_four_is_not_universal)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* Korthikanti, LLaMA-3-70B shape (a 64, h 8192): 34 + 5*64*s/8192 = 34 + 80 at 2k, 34 + 320 at 8k */
    ex_check_near("12.3(a) Korthikanti coefficient, 70B shape at 2k",
                  ex12_activation_coefficient("llama3-70b", 2048, 1, 0, "none", "korthikanti"), 114, 1e-12);
    ex_check_near("12.3(a) Korthikanti coefficient, 70B shape at 8k",
                  ex12_activation_coefficient("llama3-70b", 8192, 1, 0, "none", "korthikanti"), 354, 1e-12);
    ex_check_near("12.3 Korthikanti coefficient, TP 8 + SP, selective",
                  ex12_activation_coefficient("llama3-70b", 8192, 8, 1, "selective", "korthikanti"), 34.0 / 8, 1e-12);
    /* modern, per token / h.  LLaMA-3-8B (h 4096, 32 heads, 8 KV heads of 128, f 14336):
     * 8h + Q 2h + O 2h + K,V 4*1024 + lse 4*32 + 6f = 32768+8192+8192+4096+128+86016 = 139,392
     * -> 34.03125, a coincidence */
    ex_check_near("12.3(b) modern coefficient, LLaMA-3-8B at 8k",
                  ex12_activation_coefficient("llama3-8b", 8192, 1, 0, "none", "modern"), 139392.0 / 4096, 1e-12);
    /* LLaMA-2-13B (MHA, f 2.7h, 40 heads): 8 + 4 + 4 + 16.2 + 160/5120 = 32.23125 */
    ex_check_near("12.3(b) modern coefficient, LLaMA-2-13B at 8k",
                  ex12_activation_coefficient("llama2-13b", 8192, 1, 0, "none", "modern"), 32.23125, 1e-12);
    /* Mixtral 8x7B, two experts per token: 32768+8192+8192+4096+128 + 2*6*14336 = 225,408 -> 55.03125 */
    ex_check_near("12.3(b) modern coefficient, Mixtral 8x7B at 8k",
                  ex12_activation_coefficient("mixtral-8x7b", 8192, 1, 0, "none", "modern"), 225408.0 / 4096, 1e-12);
#endif
    /* full recomputation keeps the input: 2 */
    ex_check_near("12.3 modern coefficient with full recompute",
                  ex12_activation_coefficient("llama3-8b", 8192, 1, 0, "full", "modern"), 2.0, 1e-12);
    ex_check_nan("12.3 TP 3 for 64 heads", ex12_activation_coefficient("llama3-70b", 8192, 3, 0, "none", "modern"),
                 "64 heads do not split over 3 GPUs");
    ex_check_nan("12.3 model \"gpt-9\"", ex12_activation_coefficient("gpt-9", 8192, 1, 0, "none", "modern"),
                 "not a model in the table");
}

Test(ex12, e4_microbatches_in_flight)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* LLaMA-3-70B, TP 8 + SP, 8k: 34,336 B per token per layer (65536/8 + 2*2048 + 4*128
     * + 4*8 + 6*3584) * 8192 = 281,280,512 B per layer */
    double layer = 34336.0 * 8192;
    /* 1F1B, PP 4: 20 layers x 4 in flight; PP 8: 10 x 8 -- the same 80 layer-microbatches */
    ex_check_near("12.4(a) first-stage activation bytes, PP 4, 1F1B",
                  ex12_stage_activation_bytes("llama3-70b", 8192, 8, 4, 1, "1f1b", 16), 80 * layer, 1);
    ex_check_near("12.4(b) first-stage activation bytes, PP 8, 1F1B",
                  ex12_stage_activation_bytes("llama3-70b", 8192, 8, 8, 1, "1f1b", 16), 80 * layer, 1);
    /* GPipe holds every one of the 16: 20 x 16 */
    ex_check_near("12.4(c) first-stage activation bytes, PP 4, GPipe",
                  ex12_stage_activation_bytes("llama3-70b", 8192, 8, 4, 1, "gpipe", 16), 320 * layer, 1);
    /* only 2 microbatches per step: 20 x 2 */
    ex_check_near("12.4(d) first-stage activation bytes, PP 4, 1F1B, 2 microbatches",
                  ex12_stage_activation_bytes("llama3-70b", 8192, 8, 4, 1, "1f1b", 2), 40 * layer, 1);
#endif
    ex_check_nan("12.4 PP 3 for 80 layers", ex12_stage_activation_bytes("llama3-70b", 8192, 8, 3, 1, "1f1b", 16),
                 "80 layers do not split into 3 stages");
}

Test(ex12, e6_does_70b_fit)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* first of 4 stages: 20 layers of 855,654,400 + embedding 1,050,673,152 = 18,163,761,152,
     * over TP 8: 2,270,470,144 params.  ZeRO 0: 16 B each; ZeRO 1 over 16: 2 + 2 + 12/16 = 4.75;
     * ZeRO 3: 16/16 = 1 */
    double p = 2270470144.0;
    ex_check_near("12.6(a) state bytes per GPU, ZeRO 0", ex12_state_bytes("llama3-70b", 8, 4, 16, 0), 16 * p, 1);
    ex_check_near("12.6(a) state bytes per GPU, ZeRO 1", ex12_state_bytes("llama3-70b", 8, 4, 16, 1), 4.75 * p, 1);
    ex_check_near("12.6(a) state bytes per GPU, ZeRO 3", ex12_state_bytes("llama3-70b", 8, 4, 16, 3), p, 1);
    /* the microbatch: floor((memory - state) / (80 * 281,280,512)), memory the usable 90% of
     * what the driver reports (the book's one policy) */
    gpu_spec g = gpu_builtin("h100");
    g.mem_bytes *= 0.9;
    double act = 80 * 34336.0 * 8192;
    ex_check_int("12.6(b) largest microbatch, ZeRO 0", ex12_max_micro_batch("llama3-70b", "h100", 8192, 8, 4, 16, 1, 0),
                 (int)floor((g.mem_bytes - 16 * p) / act));
    ex_check_int("12.6(b) largest microbatch, ZeRO 1", ex12_max_micro_batch("llama3-70b", "h100", 8192, 8, 4, 16, 1, 1),
                 (int)floor((g.mem_bytes - 4.75 * p) / act));
#endif
    ex_check_int("12.6 GPU \"tpu\" (not in the table)", ex12_max_micro_batch("llama3-70b", "tpu", 8192, 8, 4, 16, 1, 1),
                 -1);
}

/* The variant of $NB_SEED (make exercise N=12 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_12.h"

EX_VARIANT_TEST(ex12, e1_variant, 12, kit_answers_12, 1)
EX_VARIANT_TEST(ex12, e2_variant, 12, kit_answers_12, 2)
EX_VARIANT_TEST(ex12, e3_variant, 12, kit_answers_12, 3)
EX_VARIANT_TEST(ex12, e4_variant, 12, kit_answers_12, 4)
EX_VARIANT_TEST(ex12, e6_variant, 12, kit_answers_12, 6)
EX_VARIANT_TEST(ex12, e5_variant, 12, kit_answers_12, 5)
EX_VARIANT_TEST(ex12, e7_variant, 12, kit_answers_12, 7)
