/* Gated DeltaNet linear attention (model/linear_attention.h) for
 * Qwen3.5-397B-A17B's config: the state a sequence holds, the decode op's
 * bytes and FLOPs, the memory plan's per-sequence term, by hand; and the
 * gdn_decode class fitted back from synthetic points. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>

#include "fit.h"
#include "hf_config.h"
#include "linear_attention.h"
#include "memory.h"
#include "test_text.h"
#include "transformer.h"

static model_spec qwen35(void)
{
    model_spec m;
    char err[512];
    cr_assert_eq(model_from_hf_config_file(fmt("%s/tests/configs/qwen3.5-397b-a17b.json", need_env("NB_SRC")), "q",
                                           &m, err, sizeof err),
                 0, "%s", err);
    return m;
}

/* One layer, tp 1: 64 value heads x 128 x 128 x 4 bytes (fp32) = 4,194,304
 * bytes of recurrent state, and the convolution's 3 kept inputs of
 * 2 x 16 x 128 + 64 x 128 = 12,288 channels at 2 bytes = 73,728: 4,268,032.
 * 45 layers: 192,061,440 bytes a sequence, whatever its length.  tp 8: 8
 * value and 2 key heads a GPU: 524,288 + 3 x (2 x 256 + 1024) x 2 = 533,504. */
Test(linear_attention, state_bytes_by_hand)
{
    model_spec m = qwen35();
    cr_expect_eq(linear_state_bytes_per_layer(&m, 2, 1), 4268032.0);
    cr_expect_eq(linear_state_bytes_per_sequence(&m, 2, 1), 192061440.0);
    cr_expect_eq(linear_state_bytes_per_layer(&m, 2, 8), 533504.0);
    cr_expect_eq(state_bytes_per_sequence_per_gpu(&m, 8), 45 * 533504.0);
    /* a sequence of 4096 tokens: 4096 x 30,720 bytes of KV (15 layers) + the state */
    cr_expect_eq(kv_bytes_per_sequence(&m, DT_BF16, 4096), 4096 * 30720.0 + 192061440.0);
}

/* Decode, batch 32 at tp 8 (8 value, 2 key heads a GPU): the state read and
 * written, 2 x 32 x 8 x 128 x 128 x 4 = 33,554,432 bytes; 7 x 32 x 8 x 16,384
 * = 29,360,128 FLOPs; q and k 32 x 2 x 2 x 128 x 2 + v and out 32 x 2 x 8 x
 * 128 x 2 + gates 32 x 8 x 2 x 4 = 32,768 + 131,072 + 2,048 = 165,888 bytes. */
Test(linear_attention, decode_op_by_hand)
{
    model_spec m = qwen35();
    op_cost ops[LINEAR_OPS];
    cr_assert_eq(linear_attention_ops(&m, 32, 1, 8, 1, 2, ops), LINEAR_OPS);
    const op_cost *g = &ops[3];
    cr_expect_str_eq(g->name, "gdn");
    cr_expect_eq(g->rate, RC_GDN_DECODE);
    cr_expect_eq(g->per_layer, OP_LINEAR_LAYERS);
    cr_expect_eq(g->kv_bytes, 33554432.0);
    cr_expect_eq(g->flop, 29360128.0);
    cr_expect_eq(g->act_bytes, 165888.0);
    /* in_proj_qkvz at fp8 weights (1 byte): 4096 x (2 x 256 + 2 x 1024) = 10,485,760 bytes */
    cr_expect_eq(ops[0].weight_bytes, 10485760.0);
    /* a decode step of the whole model repeats it on the 45 linear layers only */
    step_shape s = decode_shape(32, 1024, 8, precision_uniform(DT_FP8));
    op_cost all[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, all, DECODER_MAX_OPS), lin = 0, full = 0;
    for (int i = 0; i < n; i++) {
        lin += all[i].per_layer == OP_LINEAR_LAYERS;
        full += all[i].per_layer == OP_FULL_ATTN_LAYERS;
        if (!strcmp(all[i].name, "gdn"))
            cr_expect_eq(op_repeats(&m, &all[i]), 45);
        if (!strcmp(all[i].name, "attn_score"))
            cr_expect_eq(op_repeats(&m, &all[i]), 15);
        if (!strcmp(all[i].name, "attn_output_gate")) {
            /* 32 tokens x 4 heads a GPU x 256 (32 heads over tp 8): 32,768 elements,
             * each read twice (output, gate) and written once at 1 byte (fp8
             * activations): 98,304 bytes; 5 FLOP each: 163,840 */
            cr_expect_eq(op_repeats(&m, &all[i]), 15);
            cr_expect_eq(all[i].act_bytes, 98304.0);
            cr_expect_eq(all[i].flop, 163840.0);
        }
    }
    cr_expect_eq(lin, LINEAR_OPS);
    cr_expect_eq(full, 5); /* qkv_proj, attn_score, attn_value, attn_output_gate, o_proj */
}

/* Prefill of 128 tokens, one sequence, one value and key head of 128: two
 * chunks of 64, each 6 x 64 x 16,384 + 6 x 64^2 x 128 + 4 x 64^2 x 128 +
 * 2 x 64^3 / 3 = 6,291,456 + 3,145,728 + 2,097,152 + 174,762.67 FLOPs;
 * each chunk's state written and read: 2 x 2 x 16,384 x 4 = 262,144 bytes. */
Test(linear_attention, prefill_chunked_by_hand)
{
    op_cost op = linear_gdn_op(1, 128, 1, 1, 128, 128, 4, 2);
    cr_expect_eq(op.rate, RC_GDN_PREFILL);
    cr_expect(fabs(op.flop - 2 * (6291456.0 + 3145728.0 + 2097152.0 + 2.0 * 262144 / 3)) < 1e-3, "%g", op.flop);
    cr_expect_eq(op.kv_bytes, 262144.0);
}

/* gdn_decode points made from known rates over the measured tables' shapes
 * (batch 1..1024, 4..64 value heads) are fitted back within 1 %: the fixed
 * cost and the byte share, the two a memory-bound kernel shows. */
Test(linear_attention, decode_class_fit_recovers_its_rates)
{
    const op_rate truth = {3.5e-6, 0, 0.5, 0.85, 3, 0, 0};
    const double peak = 989e12, bw = 4.8e12;
    rate_point pts[64];
    int n = 0;
    for (int b = 1; b <= 1024; b *= 2)
        for (int vh = 4; vh <= 64; vh *= 2) {
            op_cost op = linear_gdn_op(b, 1, vh / 4, vh, 128, 128, 4, 2);
            double t = op_rate_time(&truth, op.flop, op_bytes(&op), op.items, 0, peak, bw);
            pts[n++] = (rate_point){op.flop, op_bytes(&op), peak, bw, t, op.items, 0, 0};
        }
    op_rate r = {3e-6, 1e-9, 0.8, 0.8, 2, 1, 1e-6};
    fit_summary s;
    char err[256];
    cr_assert_eq(fit_op_rate(pts, n, &r, &s, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(r.t0 / truth.t0 - 1) < 0.01, "t0 %g", r.t0);
    cr_expect(fabs(r.byte_frac / truth.byte_frac - 1) < 0.01, "byte_frac %g", r.byte_frac);
    /* the blend and the FLOP share are not seen: at 0.875 FLOP a byte every point is memory-bound */
    cr_expect(s.median_abs_err < 0.01, "median %g", s.median_abs_err);
}
