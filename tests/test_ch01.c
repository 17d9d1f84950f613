/* Chapter 1's argument, checked through the functions its programs call
 * (the programs in code/ch01): the ridge, the cost of one tensor-parallel step with its
 * communication, the bisected compute-bound crossing, the memory ceiling
 * with the driver's capacity and the activation reserve, and what fp8 math
 * buys at the int8-weight, fp8-KV ceiling.  Every expected number is hand
 * arithmetic on LLaMA-3-70B's config.json (80 layers, hidden 8192, 64 heads,
 * 8 KV heads of 128, MLP 28672, vocabulary 128256) and the H100 SXM row
 * (989.4 TFLOP/s dense bf16, 1978.9 fp8, 3.35 TB/s, NVLink 450 GB/s per
 * direction, 4.8 us all-reduce latency), written beside it.  Capacities are
 * read from the GPU row (what the driver reports), the rest derived here. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "comm.h"
#include "memory.h"
#include "roofline.h"
#include "transformer.h"

#define REL(a, b, tol)                                                                                         \
    cr_assert(fabs((a) - (b)) <= (tol) * fabs(b), "%s = %.9g, expected %.9g (rel. tol. %g)", #a, (double)(a), \
              (double)(b), (double)(tol))

/* Parameters of LLaMA-3-70B that projections multiply (all but the embedding
 * table and the norm gains): attention 12,079,595,520 + MLP 56,371,445,760 +
 * untied head 1,050,673,152 = 69,501,714,432. */
#define PROJ_PARAMS_70B 69501714432.0

static step_cost step70(int batch, int context, int tp, precision p, int skip_comm)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = decode_shape(batch, context, tp, p);
    s.skip_comm = skip_comm;
    step_cost c;
    char err[256];
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0, "%s", err);
    return c;
}

Test(ch01, ridge_is_batch_295_in_bf16)
{
    /* 989.4e12 / 3.35e12 = 295.34 FLOP/B; a bf16 weight does 2 FLOP per 2
     * bytes per sequence, so the projections reach it at batch 295.34; int8
     * weights in bf16 math do 2 FLOP per byte: 147.67. */
    gpu_spec g = gpu_builtin("h100");
    REL(ridge_intensity(gpu_peak_flops(&g, DT_BF16), g.mem_bw), 295.343, 1e-5);
    REL(ridge_batch(&g, precision_uniform(DT_BF16)), 295.343, 1e-5);
    precision w8a16 = {DT_INT8, DT_BF16, DT_BF16, DT_BF16, WF_AS_DTYPE, WF_AS_DTYPE};
    REL(ridge_batch(&g, w8a16), 147.672, 1e-5);
}

Test(ch01, tp4_batch64_step_with_and_without_communication)
{
    /* Bytes per GPU: weights 69,501,714,432 * 2 / 4 = 34,750,857,216 plus the
     * norm gains 161 * 8192 * 2 = 2,637,824 and 64 embedding rows 64 * 16384
     * = 1,048,576; KV 2 ops * 80 layers * 64 * ((4096 + 1) * 2 heads * 128 *
     * 2 B + 512) = 21,485,322,240.  (34.7545 + 21.4853)e9 / 3.35e12 =
     * 16.788 ms; activations add about 1.7 GB (3%).  Pure roofline in
     * [16.788, 16.788 * 1.04] ms. */
    step_cost pure = step70(64, 4096, 4, precision_uniform(DT_BF16), 1);
    double floor_s = (34750857216.0 + 2637824.0 + 1048576.0 + 21485322240.0) / 3.35e12;
    cr_assert(pure.time >= floor_s && pure.time <= floor_s * 1.04, "pure step %g s, floor %g s", pure.time, floor_s);
    cr_assert_eq(pure.time_comm, 0);
    /* Communication: 161 all-reduces (2 a layer, 1 for the embedding) of
     * 64 * 8192 * 2 = 1,048,576 B, each 4.8 us + 2 * 3/4 * 1,048,576 / 450e9;
     * and the gather of 64 * 128,256 * 4 = 32,833,536 B of fp32 logits,
     * 4.8 us + 3/4 * 32,833,536 / 450e9.  1.335535 + 0.059523 = 1.395058 ms. */
    double ar = 4.8e-6 + 1.5 * 1048576.0 / 450e9, ag = 4.8e-6 + 0.75 * 32833536.0 / 450e9;
    step_cost full = step70(64, 4096, 4, precision_uniform(DT_BF16), 0);
    REL(full.time_comm, 161 * ar + ag, 1e-9);
    REL(full.time_comm, 1.395058e-3, 1e-5);
    /* the collectives add to the step, nothing else changes */
    REL(full.time, pure.time + 161 * ar + ag, 1e-9);
}

Test(ch01, communication_weighs_most_at_batch_1_tp8)
{
    /* TP 8, batch 1, 4k: 161 all-reduces of 8192 * 2 = 16,384 B, each 4.8 us
     * + 2 * 7/8 * 16,384 / 450e9 = 4.8637 us; gather of 128,256 * 4 =
     * 513,024 B, 4.8 us + 7/8 * 513,024 / 450e9 = 5.7975 us: 0.78886 ms.
     * The rest: weights 69,501,714,432 * 2 / 8 = 17,375,428,608 + gains
     * 2,637,824 + one embedding row 16,384; KV 2 * 80 * ((4097 * 1 head *
     * 128 * 2) + 256) = 167,854,080: 17,545,936,896 B / 3.35e12 = 5.2376 ms,
     * activations a few MB more.  Share 0.78886 / (0.78886 + 5.2376) = 13.1%. */
    step_cost c = step70(1, 4096, 8, precision_uniform(DT_BF16), 0);
    double comm = 161 * (4.8e-6 + 1.75 * 16384.0 / 450e9) + 4.8e-6 + 0.875 * 513024.0 / 450e9;
    REL(c.time_comm, comm, 1e-9);
    double rest = (17375428608.0 + 2637824.0 + 16384.0 + 167854080.0) / 3.35e12;
    cr_assert(c.time - c.time_comm >= rest && c.time - c.time_comm <= rest * 1.01, "rest %g s, floor %g s",
              c.time - c.time_comm, rest);
    double share = c.time_comm / c.time;
    cr_assert(share > 0.128 && share < 0.132, "share %g, hand 0.131", share);
    /* at batch 1 the four-GPU replica's share is smaller: twice the
     * weights per GPU against 3/4 of the link bytes */
    step_cost c4 = step70(1, 4096, 4, precision_uniform(DT_BF16), 0);
    cr_assert(c4.time_comm / c4.time < share);
}

Test(ch01, first_compute_bound_batch_at_1k_is_3817)
{
    /* Per GPU (TP 4, 1k context), each sequence adds FLOP f = projections
     * 2 * 69,501,714,432 / 4 = 34,750,857,216 + attention 80 * (2*16*128*1025
     * + 5*16*1025 + 2*16*128*1025) = 678,304,000 + norms 80*2*4*8192 +
     * 4*8192 = 5,275,648 + residual adds 80 * 2 * 8192 = 1,310,720 +
     * SiLU-mul 80 * 5 * 7168 = 2,867,200: f = 35,438,614,784;
     * and bytes b = KV 2 * 80 * (1025 * 2 * 128 * 2 + 512) = 84,049,920 +
     * activations 80 * 332,800 + 210,176 (norm, q/k/v, attention, o,
     * residual, MLP widths; embedding, final norm, fp32 logits) = 26,834,176
     * (with the embedding row).  Fixed bytes Q = 34,750,857,216 + 2,637,824
     * = 34,753,495,040.  Compute-bound when B (f/P - b/beta) > Q/beta:
     * B > 0.01037418 / (3.581829e-5 - 3.309973e-5) = 3816.06, so 3817. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = decode_shape(1, 1024, 4, precision_uniform(DT_BF16));
    int b;
    char err[256];
    cr_assert_eq(compute_bound_batch(&m, &g, &s, 1 << 16, &b, err, sizeof err), 0, "%s", err);
    double f = 35438614784.0, bytes = 84049920.0 + 80 * 332800.0 + 210176.0, Q = 34753495040.0;
    double cross = (Q / 3.35e12) / (f / 989.4e12 - bytes / 3.35e12);
    cr_assert(cross > 3816 && cross < 3817, "hand crossing %g", cross);
    cr_assert_eq(b, (int)ceil(cross));
    /* A grid that steps by b/64 above 64 would have said 3842. */
    cr_assert_neq(b, 3842);
    /* Search limits below the crossing find nothing; bad limits are refused. */
    cr_assert_eq(compute_bound_batch(&m, &g, &s, 3816, &b, err, sizeof err), 0);
    cr_assert_eq(b, 0);
    cr_assert_eq(compute_bound_batch(&m, &g, &s, 0, &b, err, sizeof err), -1);
}

Test(ch01, no_batch_is_compute_bound_at_4k)
{
    /* At 4k one sequence adds f = 34,750,857,216 + 80 * (2 * 2*16*128*4097 +
     * 5*16*4097) + 9,453,568 = 37,471,541,504 FLOP and b = KV 2 * 80 *
     * (4097 * 512 + 512) = 335,708,160 + activations 26,834,176 =
     * 362,542,336 B: f/P = 3.787e-5 s < b/beta = 1.0822e-4 s, so the
     * memory term grows faster than the compute term at every batch. */
    double f = 34750857216.0 + 80 * (2 * 2.0 * 16 * 128 * 4097 + 5.0 * 16 * 4097) + 9453568.0;
    double bytes = 335708160.0 + 26834176.0;
    cr_assert(f / 989.4e12 < bytes / 3.35e12);
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = decode_shape(1, 4096, 4, precision_uniform(DT_BF16));
    int b = -1;
    char err[256];
    cr_assert_eq(compute_bound_batch(&m, &g, &s, 1 << 16, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b, 0);
}

/* The activation reserve of LLaMA-3-70B at TP 4 by hand: per token
 * 2*8192 (residual, normed) + 2048 (q) + 2*2*128 (k, v) + 2048 (attention
 * out) + 3 * 28672/4 (gate, up, activated) = 42,496 elements * 2 B * 8192
 * tokens = 696,254,464 B; fp32 logits and probabilities of 256 sampled
 * positions over a 32,064-token vocabulary slice: 2 * 256 * 32,064 * 4 =
 * 65,667,072 B.  761,921,536 B in all. */
#define RESERVE_70B_TP4 761921536.0

Test(ch01, activation_reserve_holds_logits_only_where_sampled)
{
    model_spec m = model_builtin("llama3-70b");
    REL(activation_bytes(&m, 8192, 256, DT_BF16, 4), RESERVE_70B_TP4, 1e-12);
    /* with logits for all 8192 tokens the logits part grows 32-fold */
    REL(activation_bytes(&m, 8192, 8192, DT_BF16, 4), 696254464.0 + 32 * 65667072.0, 1e-12);
}

Test(ch01, driver_capacity_moves_the_tp4_4k_ceiling_by_more_than_10pct)
{
    /* Left for KV per GPU: 0.9 * capacity - 70,553,706,496 * 2 / 4 (=
     * 35,276,853,248) - 761,921,536; a 4k sequence holds 4096 * 81,920 =
     * 335,544,320 B per GPU.  With the driver's 81,559 MiB (85.52e9 B):
     * 40.93e9 -> 121.  With the datasheet's 80e9: 35.96e9 -> 107. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    cr_assert_eq(g.mem_bytes, 81559.0 * 1048576, "the driver's figure for the H100 row");
    resident_model rm = {&m, precision_uniform(DT_BF16), 4};
    memory_policy pol = memory_policy_default();
    fit_check f, fs;
    char err[256];
    cr_assert_eq(memory_fit(&g, pol, &rm, 1, 0, 121, 4096, &f, err, sizeof err), 0, "%s", err);
    int want = (int)floor((0.9 * g.mem_bytes - 35276853248.0 - RESERVE_70B_TP4) / 335544320.0);
    cr_assert_eq(f.max_batch, want);
    cr_assert(f.fits);
    pol.capacity = g.mem_bytes_datasheet;
    cr_assert_eq(memory_fit(&g, pol, &rm, 1, 0, 121, 4096, &fs, err, sizeof err), 0, "%s", err);
    cr_assert_eq(fs.max_batch, (int)floor((0.9 * 80e9 - 35276853248.0 - RESERVE_70B_TP4) / 335544320.0));
    cr_assert(!fs.fits, "121 sequences do not fit 80e9");
    cr_assert((double)(f.max_batch - fs.max_batch) / fs.max_batch > 0.10);
    /* The ridge batch 295 does not fit at TP 4, 4k. */
    cr_assert_lt(f.max_batch, 295);
}

Test(ch01, fp8_math_lifts_the_int8_weight_fp8_kv_ceiling)
{
    /* Ceiling: weights 70,553,706,496 / 4 = 17,638,426,624 B, reserve as
     * above (bf16 activations), KV 40,960 B a token: (0.9 * capacity -
     * 17,638,426,624 - 761,921,536) / (4096 * 40,960) = 349.09 -> 349 with
     * the driver's capacity. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    precision w8 = {DT_INT8, DT_FP8, DT_BF16, DT_BF16, WF_AS_DTYPE, WF_AS_DTYPE}, w8f = {DT_FP8, DT_FP8, DT_BF16, DT_FP8, WF_AS_DTYPE, WF_AS_DTYPE};
    resident_model rm = {&m, w8, 4};
    fit_check f;
    char err[256];
    cr_assert_eq(memory_fit(&g, memory_policy_default(), &rm, 1, 0, 1, 4096, &f, err, sizeof err), 0, "%s", err);
    int B = f.max_batch;
    /* a 4096-token sequence's fp8 KV per GPU: 80 layers x (K, V) x 2 KV heads
     * x 128 x 1 B = 40,960 B a token, x 4096 = 167,772,160 B */
    cr_assert_eq(B, (int)floor((0.9 * g.mem_bytes - 17638426624.0 - RESERVE_70B_TP4) / 167772160.0));
    /* At B the gate-and-up projection (8192 x 14336 per GPU, 1-byte weights)
     * does 2 * B * 117,440,512 FLOP over 117,440,512 + B * 22,528 * 2 bytes:
     * at B = 349, 615.6 FLOP/B, past the bf16 ridge 295: compute-bound. */
    double I = 2.0 * B * 117440512 / (117440512.0 + B * 45056.0);
    cr_assert(I > 295.343);
    /* With bf16 math every projection is compute-bound at B (the smallest
     * intensity, o_proj's 2B*16.78e6 / (16.78e6 + B*20480), is 489 at 349):
     * their time is B * 34,750,857,216 / 989.4e12.  With fp8 math each takes
     * max(FLOP / 1978.9e12, bytes / 3.35e12): per layer qkv (8192 x 2560),
     * o (2048 x 8192), gate_up (8192 x 14336), down (7168 x 8192), and the
     * logits (8192 x 32064, fp32 out).  The rest of the step is the same, so
     * the step shortens by the difference. */
    const double in[5] = {8192, 2048, 8192, 7168, 8192}, out[5] = {2560, 8192, 14336, 8192, 32064};
    double t8 = 0;
    for (int i = 0; i < 5; i++) {
        double w = in[i] * out[i], flop = 2.0 * B * w;
        double bytes = w + B * (in[i] * 2 + out[i] * (i == 4 ? 4 : 2));
        t8 += (i == 4 ? 1 : 80) * fmax(flop / 1978.9e12, bytes / 3.35e12);
    }
    double t16 = B * 34750857216.0 / 989.4e12;
    step_cost c16 = step70(B, 4096, 4, w8, 0), c8 = step70(B, 4096, 4, w8f, 0);
    REL(c16.time - c8.time, t16 - t8, 1e-6);
    /* about 6 ms of a 36 ms step: a fifth more tokens per second */
    double gain = c16.time / c8.time - 1;
    cr_assert(gain > 0.15 && gain < 0.25, "gain %g", gain);
}

Test(ch01, kv_per_token_counts_kv_heads)
{
    /* 2 (K, V) * 80 layers * 8 KV heads * 128 * 2 B = 327,680 B; with the 64
     * attention heads it would be 2,621,440.  Per GPU at TP 4: 81,920; at TP
     * 16 the 8 heads are replicated, one per GPU: 40,960. */
    model_spec m = model_builtin("llama3-70b");
    cr_assert_eq(kv_bytes_per_token(&m, DT_BF16), 327680.0);
    cr_assert_eq(kv_bytes_per_token_per_gpu(&m, DT_BF16, 4), 81920.0);
    cr_assert_eq(kv_bytes_per_token_per_gpu(&m, DT_BF16, 16), 40960.0);
    /* one 4k sequence: 4096 * 327,680 = 1,342,177,280 B (1.34 GB) */
    cr_assert_eq(kv_bytes_per_sequence(&m, DT_BF16, 4096), 1342177280.0);
}
