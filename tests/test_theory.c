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

Test(theory, kv_bytes_are_linear_in_context)
{
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) {
        model_spec m = model_builtin(MODELS[i]);
        double per_token = kv_bytes_per_token(&m, DT_BF16);
        for (int ctx = 1; ctx <= (1 << 17); ctx *= 4) {
            cr_assert_eq(kv_bytes_per_sequence(&m, DT_BF16, ctx), per_token * ctx);
            cr_assert_eq(kv_bytes_per_sequence(&m, DT_BF16, 2 * ctx), 2 * kv_bytes_per_sequence(&m, DT_BF16, ctx));
        }
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
