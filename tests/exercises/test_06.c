/* Chapter 6 exercises: each expected number is derived by hand below from
 * the models' config files and the GPU rows, never from the library's
 * output for the same question. */
#include "06-many-fine-tunes.h"

#include "specs.h"
#include "transformer.h"

#include <math.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=06 ONLY=N). */
#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex06, e1_adapter_params_gqa)
{
    /* 70B (hidden 8192, 8 KV heads x 128 = 1024), r 16, q,k,v,o:
     * 2 x 16 (8192 + 8192) + 2 x 16 (8192 + 1024) = 819,200 per layer, x 80 */
    ex_check_near("6.1(a) rank-16 q,k,v,o adapter parameters, LLaMA-3-70B",
                  ex06_adapter_params("llama3-70b", 16, "q,k,v,o"), 65536000.0, 0.5);
    /* 8B, r 16, all seven: (425,984 + 3 x 16 (4096 + 14336)) x 32 = 41,943,040 */
    ex_check_near("6.1(d) rank-16 all-seven adapter parameters, LLaMA-3-8B",
                  ex06_adapter_params("llama3-8b", 16, "all"), 41943040.0, 0.5);
    /* 8B, r 8, q and v: (8 x 8192 + 8 x 5120) x 32 = 3,407,872 */
    ex_check_near("6.1 rank-8 q,v adapter parameters, LLaMA-3-8B", ex06_adapter_params("llama3-8b", 8, "q,v"),
                  3407872.0, 0.5);
}
#endif

Test(ex06, e1_bad_input)
{
    ex_check_nan("6.1 modules \"q,qkv\"", ex06_adapter_params("llama3-8b", 16, "q,qkv"), "qkv is not a module name");
    ex_check_nan("6.1 rank 0", ex06_adapter_params("llama3-8b", 0, "q"), "a rank must be positive");
    ex_check_nan("6.1 model \"gpt-9\"", ex06_adapter_params("gpt-9", 16, "q"), "not a model in the table");
    /* and good input must not be NAN (or -1), so "always NAN" cannot pass */
    cr_expect(!isnan(ex06_adapter_params("llama3-8b", 8, "q")), "6.1 on good input: no answer: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex06, e2_bytes_per_gpu)
{
    /* tp 4: q 16(8192 + 2048), k and v 16(8192 + 256), o 16(2048 + 8192):
     * 598,016 x 80 x 2 B = 95,682,560 */
    ex_check_near("6.2(a) adapter bytes per GPU at TP 4", ex06_adapter_bytes_per_gpu("llama3-70b", 16, "q,k,v,o", 4),
                  95682560.0, 0.5);
    /* tp 8: q 16(8192 + 1024) = 147,456; k, v with one KV head each
     * 16(8192 + 128) = 133,120; o 147,456: 561,152 x 80 x 2 B = 89,784,320 */
    ex_check_near("6.2(a) adapter bytes per GPU at TP 8", ex06_adapter_bytes_per_gpu("llama3-70b", 16, "q,k,v,o", 8),
                  89784320.0, 0.5);
    /* tp 2: q 16(8192 + 4096), k and v 16(8192 + 512), o 16(4096 + 8192):
     * 671,744 x 80 x 2 B = 107,479,040 */
    ex_check_near("6.2(a) adapter bytes per GPU at TP 2", ex06_adapter_bytes_per_gpu("llama3-70b", 16, "q,k,v,o", 2),
                  107479040.0, 0.5);
}
#endif

Test(ex06, e2_bad_input)
{
    ex_check_nan("6.2 TP 3", ex06_adapter_bytes_per_gpu("llama3-70b", 16, "q,k,v,o", 3),
                 "64 heads do not split over 3 GPUs");
    /* and good input must not be NAN (or -1), so "always NAN" cannot pass */
    cr_expect(!isnan(ex06_adapter_bytes_per_gpu("llama3-8b", 8, "q", 1)), "6.2 on good input: no answer: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex06, e3_slots_against_kv)
{
    /* 70B at tp 4 on H100: usable 0.9 x the driver capacity; weights
     * 35,276,853,248 B per GPU; reserve 8192 x 84,992 + 2 x 256 x 32,064 x 4
     * = 761,921,536 B; KV 81,920 B a token = 335,544,320 B a 4096-token
     * sequence.  A q,k,v,o slot at rank 64 is 4 x 95,682,560 = 382,730,240 B. */
    gpu_spec g = gpu_builtin("h100");
    double left = 0.9 * g.mem_bytes - 35276853248.0 - 761921536.0;
    ex_check_int("6.3 largest batch with no slots",
                 ex06_max_batch_with_slots("llama3-70b", "h100", 4, 64, "q,k,v,o", 0, 4096),
                 (int)floor(left / 335544320.0));
    ex_check_int("6.3 largest batch with 32 rank-64 q,k,v,o slots",
                 ex06_max_batch_with_slots("llama3-70b", "h100", 4, 64, "q,k,v,o", 32, 4096),
                 (int)floor((left - 32 * 382730240.0) / 335544320.0));
    ex_check_int("6.3 GPU \"tpu\" (not in the table)",
                 ex06_max_batch_with_slots("llama3-70b", "tpu", 4, 64, "q,k,v,o", 8, 4096), -1);
}
#endif

Test(ex06, e3_bad_input)
{
    ex_check_int("6.3 -1 slots", ex06_max_batch_with_slots("llama3-70b", "h100", 4, 64, "q,k,v,o", -1, 4096), -1);
    /* and good input must not be NAN (or -1), so "always NAN" cannot pass */
    cr_expect(ex06_max_batch_with_slots("llama3-8b", "h100", 1, 8, "q", 1, 1024) >= 0, "6.3 on good input: no answer: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex06, e4_step_ratio_by_hand)
{
    /* 8B on one H100, q only, r 16, batch 64, D 8: per layer the shrink moves
     * 8 x 4096 x 16 x 2 + 64 (4096 + 16) 2 = 1,574,912 B and the expand
     * 8 x 16 x 4096 x 2 + 64 (16 + 2 x 4096) 2 = 2,099,200 B, both
     * memory-bound (about 5 FLOP/B against a ridge of 295), x 32 layers. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = decode_shape(64, 4096, 1, precision_uniform(DT_BF16));
    step_cost base;
    char err[256];
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &base, err, sizeof err), 0, "%s", err);
    double ops = 32 * (1574912.0 + 2099200.0) / g.mem_bw;
    ex_check_near("6.4(b) step ratio without fixed kernel costs, 8B, q, batch 64, 8 adapters",
                  ex06_step_ratio("llama3-8b", "h100", 1, 16, "q", 64, 4096, 8, 0), (base.time + ops) / base.time,
                  1e-9);
    /* 2 kernels x 32 layers at 2.5 us */
    ex_check_near("6.4(a) step ratio at 2.5 us a kernel, 8B, q, batch 64, 8 adapters",
                  ex06_step_ratio("llama3-8b", "h100", 1, 16, "q", 64, 4096, 8, 2.5),
                  (base.time + ops + 64 * 2.5e-6) / base.time, 1e-9);
    /* the 70B at tp 4 holds at most 121 sequences of 4096 tokens (exercise 3's
     * arithmetic): batch 200 is not timed */
}
#endif

Test(ex06, e4_bad_input)
{
    ex_check_nan("6.4 65 adapters in a batch of 64", ex06_step_ratio("llama3-8b", "h100", 1, 16, "q", 64, 4096, 65, 0),
                 "more distinct adapters than requests");
    ex_check_nan("6.4 70B at TP 4, batch 200",
                 ex06_step_ratio("llama3-70b", "h100", 4, 16, "q,k,v,o", 200, 4096, 8, 2.5),
                 "batch 200 does not fit in memory");
    /* and good input must not be NAN (or -1), so "always NAN" cannot pass */
    cr_expect(!isnan(ex06_step_ratio("llama3-8b", "h100", 1, 16, "q", 8, 1024, 2, 0)), "6.4 on good input: no answer: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex06, e5_intensity)
{
    /* 2 FLOP per weight per token; D adapters share B tokens: 2 B / (D b) */
    ex_check_near("6.5(a) intensity, 1 adapter among 64 tokens", ex06_bgmv_intensity(64, 1, 2), 64.0, 1e-12);
    ex_check_near("6.5(a) intensity, 8 adapters among 64 tokens", ex06_bgmv_intensity(64, 8, 2), 8.0, 1e-12);
    ex_check_near("6.5(a) intensity, 64 adapters among 64 tokens", ex06_bgmv_intensity(64, 64, 2), 1.0, 1e-12);
    ex_check_near("6.5 intensity, 8 adapters, 1-byte weights", ex06_bgmv_intensity(64, 8, 1), 16.0, 1e-12);
}
#endif

Test(ex06, e5_bad_input)
{
    ex_check_nan("6.5 9 adapters among 8 tokens", ex06_bgmv_intensity(8, 9, 2), "more distinct adapters than tokens");
    /* and good input must not be NAN (or -1), so "always NAN" cannot pass */
    cr_expect(!isnan(ex06_bgmv_intensity(8, 1, 2)), "6.5 on good input: no answer: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex06, e6_distinct_adapters)
{
    /* uniform: 300 (1 - (299/300)^64) = 57.7203 */
    ex_check_near("6.6(a) distinct adapters, uniform, batch 64", ex06_expected_distinct(300, 0.0, 64), 57.7203, 1e-3);
    /* Zipf 1 over 2 adapters: p = 2/3, 1/3; B 2: (1 - 1/9) + (1 - 4/9) = 13/9 */
    ex_check_near("6.6 distinct adapters, Zipf 1 over 2, batch 2", ex06_expected_distinct(2, 1.0, 2), 13.0 / 9.0,
                  1e-12);
    /* one request: one adapter, whatever the popularity */
    ex_check_near("6.6 distinct adapters, batch 1", ex06_expected_distinct(300, 1.2, 1), 1.0, 1e-12);
}
#endif

Test(ex06, e6_bad_input)
{
    ex_check_nan("6.6 no adapters", ex06_expected_distinct(0, 1.0, 4), "there must be at least one adapter");
    /* and good input must not be NAN (or -1), so "always NAN" cannot pass */
    cr_expect(!isnan(ex06_expected_distinct(10, 0, 4)), "6.6 on good input: no answer: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex06, e7_load_time)
{
    /* 300 copies of a TP 4 replica: 1,200 GPUs; one base with 300 adapters: 4 */
    ex_check_int("6.7(a) GPUs for 300 full copies of the 70B at TP 4", ex06_gpus_for_tenants("llama3-70b", 4, 300, 1),
                 1200);
    ex_check_int("6.7(a) GPUs for one 70B base with 300 adapters", ex06_gpus_for_tenants("llama3-70b", 4, 300, 0), 4);
    /* 95,682,560 B per GPU (above) over the H100 row's PCIe bandwidth */
    gpu_spec g = gpu_builtin("h100");
    ex_check_near("6.7(b) load time of a rank-16 q,k,v,o adapter, TP 4",
                  ex06_load_time("llama3-70b", "h100", 4, 16, "q,k,v,o"), 95682560.0 / g.host_bw, 1e-12);
}
#endif

Test(ex06, e7_bad_input)
{
    ex_check_nan("6.7 no modules", ex06_load_time("llama3-70b", "h100", 4, 16, ""),
                 "an adapter needs at least one module");
    ex_check_int("6.7 GPUs for 0 tenants", ex06_gpus_for_tenants("llama3-70b", 4, 0, 1), -1);
    /* and good input must not be NAN (or -1), so "always NAN" cannot pass */
    cr_expect(!isnan(ex06_load_time("llama3-8b", "h100", 1, 8, "q")),
              "6.7 ex06_load_time on good input: NAN: not computed yet");
    cr_expect(ex06_gpus_for_tenants("llama3-8b", 1, 2, 1) >= 0,
              "6.7 ex06_gpus_for_tenants on good input: -1: not computed yet");
}

/* The variant of $NB_SEED (make exercise N=06 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_06.h"

EX_VARIANT_TEST(ex06, e1_variant, 6, kit_answers_06, 1)
EX_VARIANT_TEST(ex06, e2_variant, 6, kit_answers_06, 2)
EX_VARIANT_TEST(ex06, e3_variant, 6, kit_answers_06, 3)
EX_VARIANT_TEST(ex06, e4_variant, 6, kit_answers_06, 4)
EX_VARIANT_TEST(ex06, e5_variant, 6, kit_answers_06, 5)
EX_VARIANT_TEST(ex06, e6_variant, 6, kit_answers_06, 6)
EX_VARIANT_TEST(ex06, e7_variant, 6, kit_answers_06, 7)
