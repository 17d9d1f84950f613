/* Invariants of the cost model that hold for every model, GPU and shape. */
#include <criterion/criterion.h>
#include <math.h>

#include "memory.h"
#include "transformer.h"

static const char *MODELS[] = {"llama3-8b", "llama3-70b", "llama2-13b", "mixtral-8x7b", "llama3.2-1b"};

Test(theory, step_intensity_never_falls_as_batch_grows)
{
    gpu_spec g = gpu_builtin("h100");
    int contexts[] = {0, 1024, 32768};
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) {
        model_spec m = model_builtin(MODELS[i]);
        for (int c = 0; c < 3; c++) {
            double prev = 0;
            for (int b = 1; b <= 4096; b *= 2) {
                step_shape s = decode_shape(b, contexts[c], 1, precision_uniform(DT_BF16));
                step_cost sc;
                char err[256];
                cr_assert_eq(decoder_step_cost(&m, &g, &s, &sc, err, sizeof err), 0, "%s", err);
                cr_assert(sc.intensity >= prev * (1 - 1e-12), "%s ctx %d batch %d: %g < %g", MODELS[i],
                          contexts[c], b, sc.intensity, prev);
                prev = sc.intensity;
            }
        }
    }
}

Test(theory, kv_bytes_of_a_sequence_by_hand)
{
    /* One sequence holds, per layer and KV head, a K and a V row of head_dim
     * bf16 values per token.  By hand from config.json, for 1,024 tokens:
     *   LLaMA-3-8B:   32 layers * 8 heads * 2 * 128 * 2 B * 1024 =   134,217,728
     *   LLaMA-3-70B:  80 * 8 * 2 * 128 * 2 * 1024                  =   335,544,320
     *   LLaMA-2-13B:  40 * 40 * 2 * 128 * 2 * 1024 (no GQA)        =   838,860,800
     *   Mixtral 8x7B: 32 * 8 * 2 * 128 * 2 * 1024                  =   134,217,728
     *   LLaMA-3.2-1B: 16 * 8 * 2 * 64 * 2 * 1024                   =    33,554,432
     * and 32 times as much at 32,768 tokens. */
    const double at_1k[] = {134217728.0, 335544320.0, 838860800.0, 134217728.0, 33554432.0};
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) {
        model_spec m = model_builtin(MODELS[i]);
        cr_assert_eq(kv_bytes_per_sequence(&m, DT_BF16, 1024), at_1k[i], "%s", MODELS[i]);
        cr_assert_eq(kv_bytes_per_sequence(&m, DT_BF16, 32768), 32 * at_1k[i], "%s", MODELS[i]);
        cr_assert_eq(kv_bytes_per_sequence(&m, DT_FP8, 1024), at_1k[i] / 2, "%s fp8", MODELS[i]);
    }
}

Test(theory, gqa_kv_is_smaller_than_its_mha_twin_by_the_group_factor)
{
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) {
        model_spec gqa = model_builtin(MODELS[i]);
        model_spec mha = gqa;
        mha.kv_heads = mha.heads;
        double group = (double)gqa.heads / gqa.kv_heads;
        cr_assert_float_eq(kv_bytes_per_token(&mha, DT_BF16), group * kv_bytes_per_token(&gqa, DT_BF16), 1e-6);
    }
}

Test(theory, step_time_lies_between_the_two_sums)
{
    /* Sum of per-op maxima is at least the larger sum and at most the two sums added. */
    gpu_spec g = gpu_builtin("h200");
    model_spec m = model_builtin("llama3-70b");
    for (int b = 1; b <= 2048; b *= 4) {
        step_shape s = decode_shape(b, 4096, 4, precision_uniform(DT_BF16));
        step_cost c;
        char err[256];
        cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0);
        cr_assert(c.time >= fmax(c.time_memory, c.time_compute) * (1 - 1e-12));
        /* the collectives add to the step on their own */
        cr_assert(c.time - c.time_comm <= (c.time_memory + c.time_compute) * (1 + 1e-12));
        cr_assert(c.time_comm > 0);
    }
}

Test(theory, max_batch_halves_when_context_doubles)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h200");
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 1, memory_policy_default(), &r, err, sizeof err), 0);
    for (int ctx = 512; ctx <= 65536; ctx *= 2) {
        int a = max_batch_for_memory(&r, ctx), b = max_batch_for_memory(&r, 2 * ctx);
        cr_assert(b == a / 2 || b == (a - 1) / 2, "ctx %d: %d then %d", ctx, a, b);
    }
}
