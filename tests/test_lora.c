/* Low-rank adapters: sizes against hand arithmetic from the models' configs
 * (and the parameter counts Hugging Face PEFT prints), per-GPU shards, slots
 * out of the KV budget, the adapter ops of a step, the distinct-adapter
 * expectation against its closed form and a simulation, and the BGMV
 * reference against a naive loop. */
#include "lora.h"
#include "lora_ref.h"
#include "memory.h"
#include "rng.h"
#include "specs.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static lora_config cfg(const model_spec *m, int rank, lora_targets t, int tp)
{
    return (lora_config){m, rank, t, DT_BF16, tp};
}

#define QV (LORA_TARGET(LORA_Q) | LORA_TARGET(LORA_V))

Test(lora, module_shapes_use_kv_heads)
{
    model_spec m = model_builtin("llama3-8b");
    /* config.json: hidden 4096, 32 heads, 8 KV heads, head_dim 128, ffn 14336 */
    lora_module_shape k = lora_module_shape_of(&m, LORA_K);
    cr_assert_eq(k.in, 4096);
    cr_assert_eq(k.out, 8 * 128); /* 1024, not 4096: the GQA trap */
    cr_assert_eq(lora_module_shape_of(&m, LORA_O).in, 4096);
    cr_assert_eq(lora_module_shape_of(&m, LORA_DOWN).in, 14336);
    cr_assert_eq(lora_module_shape_of(&m, LORA_O).column_parallel, 0);
    cr_assert_eq(lora_module_shape_of(&m, LORA_UP).column_parallel, 1);
}

Test(lora, llama3_8b_sizes_match_peft)
{
    model_spec m = model_builtin("llama3-8b");
    lora_size s;
    char err[256];
    /* r 16 on q, v: per layer 16(4096+4096) + 16(4096+1024) = 131072 + 81920
     * = 212992; x 32 layers = 6,815,744, the "trainable params" PEFT prints
     * for Meta-Llama-3-8B with r=16, target_modules q_proj, v_proj. */
    lora_config c = cfg(&m, 16, QV, 1);
    cr_assert_eq(lora_adapter_size(&c, &s, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(s.params, 6815744.0, 0.5);
    cr_assert_float_eq(s.bytes, 2 * 6815744.0, 0.5);
    /* all seven, r 16: attention 131072 + 2*81920 + 131072 = 425984; MLP
     * 3 * 16(4096 + 14336) = 884736; (425984 + 884736) * 32 = 41,943,040
     * (PEFT's figure for all linear layers of the 8B at r=16). */
    c.targets = LORA_TARGETS_ALL;
    cr_assert_eq(lora_adapter_size(&c, &s, err, sizeof err), 0);
    cr_assert_float_eq(s.params, 41943040.0, 0.5);
    /* the 8B has 8.03e9 parameters: all seven at r 16 are about 0.52% of it */
    cr_assert(fabs(s.base_fraction - 41943040.0 / 8.03e9) < 0.0001, "%g", s.base_fraction);
}

Test(lora, gqa_trap_square_overcounts)
{
    model_spec m = model_builtin("llama3-70b");
    lora_size s;
    char err[256];
    /* 70B, r 16, q k v o: q and o 16(8192+8192) = 262144 each, k and v
     * 16(8192+1024) = 147456 each; 819200 per layer x 80 = 65,536,000.
     * Sizing k and v as 8192 x 8192 would give 4 * 262144 * 80 = 83,886,080. */
    lora_config c = cfg(&m, 16, LORA_TARGETS_ATTENTION, 1);
    cr_assert_eq(lora_adapter_size(&c, &s, err, sizeof err), 0);
    cr_assert_float_eq(s.params, 65536000.0, 0.5);
    cr_assert(s.params < 83886080.0 * 0.79);
}

Test(lora, tensor_parallel_shards)
{
    model_spec m = model_builtin("llama3-70b");
    lora_size s;
    char err[256];
    /* tp 4: q (column) A whole 8192x16, B 16 x 2048 -> 16(8192+2048) = 163840;
     * k, v: 2 KV heads per GPU, 256 wide -> 16(8192+256) = 135168 each;
     * o (row) A 2048x16 split, B whole -> 163840.  Sum 598016 x 80 =
     * 47,841,280 parameters per GPU, 95,682,560 bytes in bf16. */
    lora_config c = cfg(&m, 16, LORA_TARGETS_ATTENTION, 4);
    cr_assert_eq(lora_adapter_size(&c, &s, err, sizeof err), 0);
    cr_assert_float_eq(s.params_per_gpu, 47841280.0, 0.5);
    cr_assert_float_eq(s.bytes_per_gpu, 95682560.0, 0.5);
    cr_assert_float_eq(lora_slot_bytes_per_gpu(&c), 95682560.0, 0.5);
    /* tp 16 > 8 KV heads: one replicated head per GPU, k is 16(8192+128) */
    cr_assert_float_eq(lora_module_params_per_gpu(&m, LORA_K, 16, 16), 16.0 * (8192 + 128), 1e-9);
}

Test(lora, bad_config)
{
    model_spec m = model_builtin("llama3-8b");
    lora_size s;
    char err[256];
    lora_config c = cfg(&m, 0, QV, 1);
    cr_assert_eq(lora_adapter_size(&c, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "rank 0") != NULL, "%s", err);
    c.rank = 4097; /* above the hidden size 4096 */
    cr_assert_eq(lora_adapter_size(&c, &s, err, sizeof err), -1);
    c.rank = 16;
    c.targets = 0;
    cr_assert_eq(lora_adapter_size(&c, &s, err, sizeof err), -1);
    c.targets = QV;
    c.tp = 3; /* does not divide 32 heads */
    cr_assert_eq(lora_adapter_size(&c, &s, err, sizeof err), -1);
}

Test(lora, targets_parse)
{
    lora_targets t;
    char err[256], buf[64];
    cr_assert_eq(lora_targets_parse("q,k,v,o", &t, err, sizeof err), 0);
    cr_assert_eq(t, LORA_TARGETS_ATTENTION);
    cr_assert_eq(lora_targets_parse("q_proj,v_proj", &t, err, sizeof err), 0);
    cr_assert_eq(t, QV);
    cr_assert_str_eq(lora_targets_format(t, buf, sizeof buf), "q,v");
    cr_assert_eq(lora_targets_parse("all", &t, err, sizeof err), 0);
    cr_assert_eq(lora_targets_count(t), 7);
    cr_assert_eq(lora_targets_parse("q,qkv", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "'qkv'") && strstr(err, "gate"), "%s", err);
    cr_assert_eq(lora_targets_parse("", &t, err, sizeof err), -1);
}

Test(lora, tenants_as_copies)
{
    model_spec m = model_builtin("llama3-70b");
    lora_config c = cfg(&m, 16, LORA_TARGETS_ATTENTION, 4);
    lora_tenancy t;
    char err[256];
    cr_assert_eq(lora_tenancy_compare(&c, precision_uniform(DT_BF16), 300, &t, err, sizeof err), 0);
    /* 300 copies at tp 4: 1200 GPUs; one base: 4 */
    cr_assert_eq(t.copies_gpus, 1200);
    cr_assert_eq(t.adapters_gpus, 4);
    cr_assert_float_eq(t.gpu_ratio, 300.0, 1e-12);
    /* one base (2 bytes x its parameters) + 300 x 131,072,000 adapter bytes */
    double base = 2 * model_params(&m).total;
    cr_assert_float_eq(t.adapters_weight_bytes, base + 300 * 131072000.0, 1.0);
    cr_assert_float_eq(t.copies_weight_bytes, 300 * base, 1.0);
}

Test(lora, slots_come_out_of_kv)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    lora_config c = cfg(&m, 16, LORA_TARGETS_ATTENTION, 4);
    precision p = precision_uniform(DT_BF16);
    memory_policy pol = memory_policy_default();
    fit_check none, eight;
    char err[256];
    cr_assert_eq(lora_memory_fit(&g, pol, p, &c, 0, 1, 4096, &none, err, sizeof err), 0, "%s", err);
    cr_assert_eq(lora_memory_fit(&g, pol, p, &c, 8, 1, 4096, &eight, err, sizeof err), 0, "%s", err);
    /* 8 slots x 95,682,560 bytes (the tp 4 shard above) = 765,460,480 bytes */
    cr_assert_float_eq(none.kv_budget - eight.kv_budget, 765460480.0, 1.0);
    cr_assert_float_eq(eight.extra, 765460480.0, 1.0);
    /* KV per token per GPU: 2 (K,V) x 80 layers x 2 KV heads x 128 x 2 B = 81920 */
    cr_assert_float_eq(eight.kv_per_token, 81920.0, 1e-9);
    cr_assert_eq(eight.max_batch, (int)floor(eight.kv_budget / (81920.0 * 4096)));
    /* the usable memory is the row's driver capacity times 0.9 */
    cr_assert_float_eq(eight.usable, 0.9 * g.mem_bytes, 1.0);
    /* slots enough to eat the budget: nothing fits */
    fit_check many;
    int slots = (int)ceil(none.kv_budget / 95682560.0) + 1;
    cr_assert_eq(lora_memory_fit(&g, pol, p, &c, slots, 1, 4096, &many, err, sizeof err), 0);
    cr_assert_eq(many.fits, 0);
    cr_assert_eq(lora_memory_fit(&g, pol, p, &c, -1, 1, 4096, &many, err, sizeof err), -1);
}

Test(lora, load_over_pcie)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    lora_config c = cfg(&m, 16, LORA_TARGETS_ATTENTION, 4);
    lora_size s;
    char err[256];
    cr_assert_eq(lora_adapter_size(&c, &s, err, sizeof err), 0);
    /* each GPU pulls its 95,682,560-byte shard over its own link */
    cr_assert_float_eq(lora_load_time(&g, &s), 95682560.0 / g.host_bw, 1e-15);
    g.host_bw = 0;
    cr_assert(isnan(lora_load_time(&g, &s)));
}

Test(lora, step_adds_adapter_ops_by_hand)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    lora_config c = cfg(&m, 16, LORA_TARGET(LORA_Q), 1);
    precision p = precision_uniform(DT_BF16);
    lora_step_shape sh = {64, 4096, 8, 0.0, 0};
    lora_step_cost r;
    char err[256];
    cr_assert_eq(lora_step_cost_compute(&g, p, &c, &sh, &r, err, sizeof err), 0, "%s", err);
    /* q only, 4096 -> 4096, r 16, B 64, D 8, bf16, per layer:
     *   shrink: 2*64*4096*16 = 8,388,608 FLOP; A 8*4096*16*2 = 1,048,576 B;
     *           x and v 64*(4096+16)*2 = 526,336 B -> 1,574,912 B
     *   expand: 8,388,608 FLOP; B 1,048,576 B; v, y read and written
     *           64*(16 + 2*4096)*2 = 1,050,624 B -> 2,099,200 B
     * Intensities 5.3 and 4.0 FLOP/B, far below the H100's 295: both
     * memory-bound, so the time is bytes / bandwidth, x 32 layers. */
    cr_assert_float_eq(r.flop, 32 * 2 * 8388608.0, 1.0);
    cr_assert_float_eq(r.weight_bytes, 32 * 2 * 1048576.0, 1.0);
    cr_assert_float_eq(r.bytes, 32 * (1574912.0 + 2099200.0), 1.0);
    cr_assert_float_eq(r.time_ops, 32 * (1574912.0 + 2099200.0) / g.mem_bw, 1e-12);
    cr_assert_eq(r.compute_bound_ops, 0);
    /* FLOP per adapter weight byte: 2 * 64 / (8 * 2 B) = 8 = B / D */
    cr_assert_float_eq(r.intensity, 8.0, 1e-12);
    cr_assert_eq(r.launches, 2 * 32);
    cr_assert_float_eq(r.time, r.base.time + r.time_ops, 1e-15);
    cr_assert_float_eq(r.ratio, r.time / r.base.time, 1e-12);
    /* a launch cost adds launches x cost */
    sh.launch_s = 2e-6;
    cr_assert_eq(lora_step_cost_compute(&g, p, &c, &sh, &r, err, sizeof err), 0);
    cr_assert_float_eq(r.time_launch, 64 * 2e-6, 1e-15);
    /* D must lie in 1 .. B */
    sh.distinct = 65;
    cr_assert_eq(lora_step_cost_compute(&g, p, &c, &sh, &r, err, sizeof err), -1);
    sh.distinct = 0;
    cr_assert_eq(lora_step_cost_compute(&g, p, &c, &sh, &r, err, sizeof err), -1);
}

Test(lora, adapter_bytes_grow_with_distinct_not_batch)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    lora_config c = cfg(&m, 16, LORA_TARGETS_ALL, 1);
    precision p = precision_uniform(DT_BF16);
    lora_step_cost one, all;
    char err[256];
    lora_step_shape a = {64, 2048, 1, 0, 0}, b = {64, 2048, 64, 0, 0};
    cr_assert_eq(lora_step_cost_compute(&g, p, &c, &a, &one, err, sizeof err), 0);
    cr_assert_eq(lora_step_cost_compute(&g, p, &c, &b, &all, err, sizeof err), 0);
    /* weights read: D x the whole adapter (41,943,040 params x 2 B, above) */
    cr_assert_float_eq(one.weight_bytes, 2 * 41943040.0, 1.0);
    cr_assert_float_eq(all.weight_bytes, 64 * 2 * 41943040.0, 64.0);
    /* the same FLOP either way */
    cr_assert_float_eq(one.flop, all.flop, 1.0);
}

Test(lora, distinct_uniform_closed_form)
{
    /* N 2, B 2: 2 (1 - 1/4) = 1.5; N 3, B 2: 3 (1 - 4/9) = 5/3; B 1: 1 */
    cr_assert_float_eq(lora_expected_distinct_uniform(2, 2), 1.5, 1e-12);
    cr_assert_float_eq(lora_expected_distinct_uniform(3, 2), 5.0 / 3.0, 1e-12);
    cr_assert_float_eq(lora_expected_distinct_uniform(300, 1), 1.0, 1e-12);
    /* N 300, B 64: each adapter is missed by all 64 requests with probability
     * (299/300)^64, so 300 (1 - (299/300)^64) are hit (the number is exercise
     * 6.6's answer, so the test states the arithmetic, not its result) */
    cr_assert_float_eq(lora_expected_distinct_uniform(300, 64), 300 * (1 - pow(299.0 / 300, 64)), 1e-9);
    /* the Zipf sum with s = 0 is the uniform closed form */
    double p[300];
    cr_assert_eq(lora_zipf_probs(300, 0.0, p), 0);
    cr_assert_float_eq(lora_expected_distinct(p, 300, 64), lora_expected_distinct_uniform(300, 64), 1e-9);
    cr_assert_eq(lora_zipf_probs(0, 1.0, p), -1);
}

Test(lora, distinct_zipf_by_hand)
{
    /* s 1, N 2: p = 2/3, 1/3.  B 2: (1 - 1/9) + (1 - 4/9) = 13/9 */
    double p[2];
    cr_assert_eq(lora_zipf_probs(2, 1.0, p), 0);
    cr_assert_float_eq(p[0], 2.0 / 3.0, 1e-12);
    cr_assert_float_eq(lora_expected_distinct(p, 2, 2), 13.0 / 9.0, 1e-12);
}

Test(lora, distinct_zipf_in_one_call)
{
    /* s 1, N 2, B 2: as above, 13/9 */
    cr_assert_float_eq(lora_expected_distinct_zipf(2, 1.0, 2), 13.0 / 9.0, 1e-12);
    /* s 2, N 3: weights 1, 1/4, 1/9 sum to 49/36, so p = 36/49, 9/49, 4/49.
     * B 2: sum of 1 - (1 - p)^2 = 2 sum p - sum p^2 = 2 - (1296 + 81 + 16) / 2401
     * = 3409/2401 */
    cr_assert_float_eq(lora_expected_distinct_zipf(3, 2.0, 2), 3409.0 / 2401.0, 1e-12);
    /* s 0 is uniform: N 3, B 2 gives 3 (1 - 4/9) = 5/3; one request hits one
     * adapter; no request hits none */
    cr_assert_float_eq(lora_expected_distinct_zipf(3, 0.0, 2), 5.0 / 3.0, 1e-12);
    cr_assert_float_eq(lora_expected_distinct_zipf(300, 1.0, 1), 1.0, 1e-12);
    cr_assert_float_eq(lora_expected_distinct_zipf(300, 1.0, 0), 0.0, 1e-12);
    cr_assert(isnan(lora_expected_distinct_zipf(0, 1.0, 2)));
    cr_assert(isnan(lora_expected_distinct_zipf(3, -1.0, 2)));
    cr_assert(isnan(lora_expected_distinct_zipf(3, NAN, 2)));
    cr_assert(isnan(lora_expected_distinct_zipf(3, 1.0, -1)));
}

Test(lora, simulation_matches_expectation)
{
    lora_batch_sim sim;
    char err[256];
    /* uniform and Zipf(1) over 300 adapters, batch 64 */
    for (int k = 0; k < 2; k++) {
        double s = k ? 1.0 : 0.0;
        cr_assert_eq(lora_distinct_simulate(300, s, 64, 0, 20000, 7, &sim, err, sizeof err), 0, "%s", err);
        double want = lora_expected_distinct_zipf(300, s, 64);
        cr_assert(fabs(sim.mean - want) < 4 * sim.stderr_, "s %g: simulated %g, expected %g (stderr %g)", s,
                  sim.mean, want, sim.stderr_);
        cr_assert_float_eq(sim.admitted, 64.0, 1e-12);
    }
    /* Zipf concentrates: fewer distinct than uniform (57.7) */
    cr_assert(sim.mean < 45.0, "%g", sim.mean);
}

Test(lora, slots_admission_by_hand)
{
    lora_batch_sim sim;
    char err[256];
    /* N 2 uniform, B 2, 1 slot: the first request runs; the second runs when
     * it asks for the same adapter (probability 1/2): 1.5 admitted. */
    cr_assert_eq(lora_distinct_simulate(2, 0.0, 2, 1, 40000, 11, &sim, err, sizeof err), 0);
    cr_assert(fabs(sim.admitted - 1.5) < 4 * sim.admitted_stddev / sqrt(40000.0), "%g", sim.admitted);
    /* as many slots as the batch: all run */
    cr_assert_eq(lora_distinct_simulate(300, 1.0, 16, 16, 100, 11, &sim, err, sizeof err), 0);
    cr_assert_float_eq(sim.admitted, 16.0, 1e-12);
    cr_assert_eq(lora_distinct_simulate(0, 1.0, 16, 16, 100, 11, &sim, err, sizeof err), -1);
}

/* The reference against the operator written out as two naive loops per token. */
Test(lora, bgmv_ref_against_naive)
{
    enum { T = 5, IN = 7, OUT = 6, R = 3, NA = 3 };
    rng_state rng = rng_make(3);
    float x[T * IN], a[NA * R * IN], b[NA * OUT * R], y[T * OUT], want[T * OUT];
    for (int i = 0; i < T * IN; i++)
        x[i] = (float)(rng_uniform(&rng) * 2 - 1);
    for (int i = 0; i < NA * R * IN; i++)
        a[i] = (float)(rng_uniform(&rng) * 2 - 1);
    for (int i = 0; i < NA * OUT * R; i++)
        b[i] = (float)(rng_uniform(&rng) * 2 - 1);
    for (int i = 0; i < T * OUT; i++)
        y[i] = want[i] = (float)(rng_uniform(&rng));
    int idx[T] = {2, 0, -1, 2, 1};
    const float scale = 0.5f;
    for (int t = 0; t < T; t++) {
        if (idx[t] < 0)
            continue;
        for (int o = 0; o < OUT; o++) {
            double s = 0;
            for (int j = 0; j < R; j++) {
                double v = 0;
                for (int i = 0; i < IN; i++)
                    v += x[t * IN + i] * a[(idx[t] * R + j) * IN + i];
                s += v * b[(idx[t] * OUT + o) * R + j];
            }
            want[t * OUT + o] += (float)(scale * s);
        }
    }
    cr_assert_eq(lora_bgmv_ref(T, IN, OUT, R, NA, x, a, b, idx, scale, y), 0);
    for (int i = 0; i < T * OUT; i++)
        cr_assert_float_eq(y[i], want[i], 1e-5, "element %d", i);
    /* token 2 has no adapter: its row is untouched */
    cr_assert_eq(lora_count_distinct(idx, T), 3);
    int bad[1] = {NA};
    cr_assert_eq(lora_bgmv_ref(1, IN, OUT, R, NA, x, a, b, bad, scale, y), -1);
}
