/* Chapter 3's argument, checked through the functions its programs call
 * (seq_vs_batch, window_price, padding): serving 32 requests one after
 * another against one batch on the H100's published read ceiling, the
 * weights one decode step streams, the memory ceiling that stops the
 * 6144-token batch, the window's price and padding's.  Hand arithmetic on
 * LLaMA-3-8B's config.json (32 layers, hidden 4096, 32 heads, 8 KV heads of
 * 128, MLP 14336, vocabulary 128256, 8,030,261,248 parameters) beside each. */
#include <criterion/criterion.h>
#include <math.h>

#include "ceilings.h"
#include "memory.h"
#include "packing.h"
#include "batch_vs_sequential.h"
#include "window.h"

#define REL(a, b, tol)                                                                                         \
    cr_assert(fabs((a) - (b)) <= (tol) * fabs(b), "%s = %.9g, expected %.9g (rel. tol. %g)", #a, (double)(a), \
              (double)(b), (double)(tol))

/* One decode step of LLaMA-3-8B at batch 1 streams the projection weights,
 * (8,030,261,248 - 525,336,576 embedding - 266,240 norm gains) * 2 B =
 * 15,009,316,864, the norm gains 65 * 4096 * 2 = 532,480 and one embedding
 * row 8,192: 15,009,857,536 B.  Activations per layer: norms 2 * 16,384, q/k/v 20,480, Q and attention
 * out 2 * 8,192, o 16,384, residuals 2 * 24,576, gate_up 65,536, SiLU-mul
 * 86,016, down 36,864 = 323,584; once: embedding 8,192, final norm 16,384,
 * logits 8,192 + 128,256 * 4: 32 * 323,584 + 545,792 = 10,900,480 B.  KV at
 * context c: 2 ops * 32 layers * ((c + 1) + 1) * 8 * 128 * 2 = 131,072 (c+2). */
#define STREAM_8B 15009857536.0
#define ACT_8B 10900480.0

static gpu_spec h100_ceilings(void)
{
    gpu_spec sheet = gpu_builtin("h100");
    published_ceilings p;
    cr_assert_eq(published_ceilings_for("h100", &p), 0);
    return gpu_at_published_ceilings(&sheet, &p);
}

Test(ch03, decode_streams_15_gb_not_16)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = h100_ceilings();
    step_shape s = decode_shape(1, 512, 1, precision_uniform(DT_BF16));
    step_cost c;
    char err[256];
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0, "%s", err);
    REL(c.weight_bytes, STREAM_8B, 1e-12);
    cr_assert_lt(c.weight_bytes, weight_bytes(&m, DT_BF16) * 0.95, "the embedding table is gathered, not streamed");
}

Test(ch03, sequential_decode_is_the_weight_read_at_the_read_rate)
{
    /* 255 decode steps per request at contexts 512..766, every op
     * memory-bound at batch 1: bytes 255 * (15,009,857,536 + 10,900,480) +
     * 131,072 * sum(c + 2) with sum over c = 512 + k - 1, k = 1..255, of
     * (c + 2) = 255 * 513 + 255 * 256 / 2 = 163,455: 3,851,717,667,840 B /
     * 3.18e12 = 1.211232 s a request; 32 requests: 38.7594 s. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = h100_ceilings();
    serve_workload w = {32, 512, 256, 1, precision_uniform(DT_BF16)};
    serve_result seq, one;
    char err[256];
    cr_assert_eq(serve_sequential(&m, &g, &w, &seq, err, sizeof err), 0, "%s", err);
    double per_request = (255 * (STREAM_8B + ACT_8B) + 131072.0 * 163455) / 3.18e12;
    REL(seq.decode, 32 * per_request, 1e-9);
    /* The batch decodes the same 255 steps once, reading the weights once
     * per step (and 31 more embedding rows) and 32 sequences' KV and
     * activations, every op still memory-bound (intensity about 32 against
     * a ridge of 800 / 3.18 = 252): 255 * (15,009,857,536 + 31 * 8,192) + 32
     * * (255 * 10,900,480 + 131,072 * 163,455) B over 3.18e12 = 1.4472 s. */
    cr_assert_eq(serve_one_batch(&m, &g, &w, &one, err, sizeof err), 0, "%s", err);
    double batch = (255 * (STREAM_8B + 31 * 8192.0) + 32 * (255 * ACT_8B + 131072.0 * 163455)) / 3.18e12;
    REL(one.decode, batch, 1e-9);
    cr_assert(seq.total / one.total > 15, "ratio %g", seq.total / one.total);
}

Test(ch03, a_batch_of_256_long_prompts_does_not_fit)
{
    /* Reserve of LLaMA-3-8B at TP 1: per token 2*4096 + 4096 + 2*8*128 +
     * 4096 + 3*14336 = 61,440 elements * 2 B * 8192 = 1,006,632,960 B, and
     * fp32 logits and probabilities of 256 positions 2 * 256 * 128,256 * 4 =
     * 262,668,288 B.  Left: 0.9 * capacity - 16,060,522,496 - 1,269,301,248;
     * at 6144 + 256 tokens a sequence holds 6400 * 131,072 = 838,860,800 B:
     * with the driver's 85.52e9, 71 sequences, far from 256. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 1, memory_policy_default(), &r, err,
                                     sizeof err),
                 0, "%s", err);
    double left = 0.9 * g.mem_bytes - 16060522496.0 - 1269301248.0;
    REL(r.kv_budget, left, 1e-12);
    cr_assert_eq(max_batch_for_memory(&r, 6400), (int)floor(left / 838860800.0));
    cr_assert_lt(max_batch_for_memory(&r, 6400), 256);
    /* and at 512 + 256 tokens, 768 * 131,072 = 100,663,296 B a sequence */
    cr_assert_eq(max_batch_for_memory(&r, 768), (int)floor(left / 100663296.0));
    cr_assert_geq(max_batch_for_memory(&r, 768), 256);
}

Test(ch03, a_20ms_window_at_100_per_s_buys_three)
{
    /* lambda W = 2 and B_max = 32 never binds (P(X > 30) for X ~ Poisson(2)
     * is below 1e-20): E[B] = 1 + 2 = 3; a request waits W (2 + lW) / (2 (1 +
     * lW)) = 20 ms * 4 / 6 = 13.333 ms on average. */
    window_params p = {100, 0.020, 32};
    window_stats s;
    char err[128];
    cr_assert_eq(window_expected(&p, &s, err, sizeof err), 0, "%s", err);
    REL(s.mean_batch, 3.0, 1e-9);
    REL(s.mean_wait, 0.020 * 4 / 6, 1e-9);
}

Test(ch03, padding_counts_dead_slots)
{
    /* lengths 5, 3, 8, 1: 17 tokens; padded to the longest, 4 * 8 = 32
     * slots, 15 of them padding (46.9%); packed offsets 0, 5, 8, 16, 17. */
    int len[4] = {5, 3, 8, 1};
    padding_cost pc = padding_cost_padded(len, 4);
    cr_assert_eq(pc.slots, 32);
    cr_assert_eq(pc.tokens, 17);
    REL(pc.waste, 15.0 / 32, 1e-12);
    long cu[5];
    cr_assert_eq(pack_offsets(len, 4, cu), 17);
    cr_assert(cu[0] == 0 && cu[1] == 5 && cu[2] == 8 && cu[3] == 16 && cu[4] == 17);
}
