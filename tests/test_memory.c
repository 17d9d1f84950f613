/* KV cache, weights and the batch that fits. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "memory.h"

Test(kv, llama3_70b_is_320_kib_per_token)
{
    /* 2 (K and V) * 80 layers * 8 KV heads * 128 head dim * 2 B = 327,680 B = 320 KiB */
    model_spec m = model_builtin("llama3-70b");
    cr_assert_eq(kv_bytes_per_token(&m, DT_BF16), 327680.0);
    /* fp8 KV halves it */
    cr_assert_eq(kv_bytes_per_token(&m, DT_FP8), 163840.0);
    /* TP 4: each GPU holds 2 of the 8 KV heads = 81,920 B; TP 16 replicates one head: 40,960 B */
    cr_assert_eq(kv_bytes_per_token_per_gpu(&m, DT_BF16, 4), 81920.0);
    cr_assert_eq(kv_bytes_per_token_per_gpu(&m, DT_BF16, 16), 40960.0);
    /* a 4,096-token sequence: 4096 * 327,680 = 1,342,177,280 B = 1.25 GiB */
    cr_assert_eq(kv_bytes_per_sequence(&m, DT_BF16, 4096), 1342177280.0);
}

Test(kv, llama2_13b_has_no_gqa)
{
    /* 2 * 40 layers * 40 KV heads * 128 * 2 B = 819,200 B */
    model_spec m = model_builtin("llama2-13b");
    cr_assert_eq(kv_bytes_per_token(&m, DT_BF16), 819200.0);
}

Test(weights, per_gpu_share)
{
    /* 70,553,706,496 params * 2 B / 8 = 17,638,426,624 B */
    model_spec m = model_builtin("llama3-70b");
    cr_assert_eq(weight_bytes_per_gpu(&m, DT_BF16, 8), 17638426624.0);
    cr_assert_eq(weight_bytes(&m, DT_INT4), 70553706496.0 / 2);
}

Test(replica, llama3_70b_on_h100_tp8_without_reserve)
{
    /* The datasheet's 80 GB, all usable, no activation reserve: 80e9 - 17,638,426,624 = 62,361,573,376 B
     * for KV.  A 4,096-token sequence takes 4096 * 40,960 = 167,772,160 B per GPU: 371.7 -> 371. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    memory_policy pol = {1.0, 0, 0, 80e9};
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 8, pol, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.kv_budget, 62361573376.0);
    cr_assert_eq(max_batch_for_memory(&r, 4096), 371);
    /* 62,361,573,376 / 40,960 = 1,522,499.35 tokens */
    cr_assert_eq(kv_token_capacity(&r), 1522499.0);
}

Test(replica, default_policy_reserves_activations)
{
    /* The driver reports 81,559 MiB = 85,520,809,984 B (nvidia-smi on an H100 SXM); 90% of it is
     * 76,968,728,985.6 B.  Activations for 8192 tokens at TP 8, per token:
     * (2*8192 + 8*128 + 2*1*128 + 8*128 + 3*3584) * 2 B = 58,880 B -> 482,344,960 B; logits and
     * sampler probabilities, fp32, for 256 sampled positions over a 16,032-word vocabulary slice:
     * 2 * 256 * 16,032 * 4 = 32,833,536 B; reserve 515,178,496 B.
     * KV budget 76,968,728,985.6 - 17,638,426,624 - 515,178,496 = 58,815,123,865.6 B;
     * / 167,772,160 per 4k sequence = 350.57 -> 350. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 8, memory_policy_default(), &r, err, sizeof err), 0);
    cr_assert_float_eq(r.hbm, 85520809984.0, 1.0);
    cr_assert_float_eq(r.activations, 515178496.0, 1.0);
    cr_assert_float_eq(r.kv_budget, 58815123865.6, 1.0);
    cr_assert_eq(max_batch_for_memory(&r, 4096), 350);
}

Test(replica, engines_plan_memory_their_own_way)
{
    /* LLaMA-3-70B bf16 at TP 8 on an H100 (driver: 85,520,809,984 B), the default's numbers above:
     * weights 17,638,426,624 B, reserve for 8192 tokens 515,178,496 B.
     * TensorRT-LLM: free_gpu_memory_fraction 0.9 of what weights and reserve leave:
     *   0.9 * (85,520,809,984 - 17,638,426,624 - 515,178,496) = 0.9 * 67,367,204,864 = 60,630,484,377.6 B.
     * SGLang: mem_fraction_static = 1 - (9.5 + 8/2) GiB / capacity for weights and KV, no reserve inside:
     *   85,520,809,984 - 13.5 * 1,073,741,824 = 71,025,295,360 B usable, 53,386,868,736 B for KV.
     * vLLM: the default (gpu_memory_utilization 0.9). */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    resident_model rm = {&m, precision_uniform(DT_BF16), 8};
    replica_memory r;
    memory_policy pol;
    char err[256];
    cr_assert_eq(memory_policy_engine("trtllm", &g, &rm, &pol), 0);
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 8, pol, &r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.kv_budget, 60630484377.6, 1.0);
    cr_assert_eq(memory_policy_engine("sglang", &g, &rm, &pol), 0);
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 8, pol, &r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.usable, 71025295360.0, 1.0);
    cr_assert_float_eq(r.activations, 0.0, 1e-9);
    cr_assert_float_eq(r.kv_budget, 53386868736.0, 1.0);
    cr_assert_eq(memory_policy_engine("vllm", &g, &rm, &pol), 0);
    cr_assert_float_eq(pol.usable_fraction, 0.9, 1e-12);
    cr_assert_eq(memory_policy_engine("tgi", &g, &rm, &pol), -1, "an engine it does not know: the default, and -1");
    cr_assert_float_eq(pol.usable_fraction, 0.9, 1e-12);
}

Test(replica, too_small_is_an_error)
{
    /* 141.1 GB of bf16 weights on one 80 GB H100 cannot fit */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 1, memory_policy_default(), &r, err, sizeof err), -1);
    cr_assert(strstr(err, "does not fit on h100 at tp 1") != NULL, "%s", err);
    cr_assert_eq(max_batch_for_memory(&r, 4096), 0);
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 3, memory_policy_default(), &r, err, sizeof err), -1);
    cr_assert(strstr(err, "does not divide") != NULL, "%s", err);
}
