/* Weight formats (model/weight_format.h): the bytes of each format for a
 * stated tensor by hand, DeepSeek-V3's memory with its experts block-scaled
 * against per-tensor fp8 and int4_wo by hand, and the class and peak the
 * experts' format gives their op. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "memory.h"
#include "pricing.h"
#include "specs.h"
#include "transformer.h"

/* One DeepSeek-V3 expert's gate: hidden 7168 in, moe_ffn 2048 out,
 * 14,680,064 weights.  By hand:
 *   bf16       2 B a weight                                   29,360,128 B
 *   fp8        1 B a weight (one per-tensor scale not counted) 14,680,064 B
 *   fp8_block  + (7168/128) x (2048/128) = 896 blocks x 4 B  = 14,683,648 B
 *   int4_wo    0.5 B a weight = 7,340,032 B, + 56 groups of 128 inputs
 *              x 2048 outputs = 114,688 groups x (2 B scale + 0.5 B zero)
 *              = 286,720 B                                  =  7,626,752 B */
Test(weight_format, bytes_of_one_tensor_by_hand)
{
    const double n = 7168.0 * 2048;
    cr_expect_eq(weight_format_bytes(WF_BF16) * n, 29360128.0);
    cr_expect_eq(weight_format_bytes(WF_FP8) * n, 14680064.0);
    cr_expect_eq(weight_format_bytes(WF_FP8_BLOCK) * n, 14683648.0);
    cr_expect_eq(weight_format_bytes(WF_INT4_WO) * n, 7626752.0);
    cr_expect_eq(weight_format_values(WF_INT4_WO), DT_INT4);
    cr_expect_eq(weight_format_math(WF_INT4_WO), DT_BF16);
    cr_expect_eq(weight_format_math(WF_FP8_BLOCK), DT_FP8);
}

Test(weight_format, names_parse_back_and_unknown_ones_do_not)
{
    for (int f = WF_BF16; f < WF_COUNT; f++) {
        weight_format g;
        cr_expect_eq(weight_format_parse(weight_format_name((weight_format)f), &g), 0);
        cr_expect_eq(g, f);
    }
    weight_format g;
    cr_expect_eq(weight_format_parse("dtype", &g), -1, "the --dtype convention is no format a flag names");
    cr_expect_eq(weight_format_parse("int4", &g), -1);
    cr_expect_eq(weight_format_parse("fp4", &g), -1, "a 4-bit float is named with its blocks: nvfp4, mxfp4");
}

/* DeepSeek-V3's routed experts: 58 MoE layers x 256 experts x 3 x 7168 x
 * 2048 = 653,908,770,816 weights (the config's dimensions, as
 * tests/test_cli_today.c counts them).  Block scales add 4 / 16384 B a
 * weight: 653,908,770,816 / 4096 = 159,645,696 B over per-tensor fp8;
 * int4_wo stores them at 133/256 B instead of 1: 314,182,729,728 B less.
 * Everything else stays at the dense weights' 1 B. */
Test(weight_format, deepseek_v3_memory_by_expert_format)
{
    model_spec m = model_builtin("deepseek-v3");
    const double routed = 58.0 * 256 * 3 * 7168 * 2048;
    cr_assert_eq(model_params(&m).routed, routed);
    precision fp8 = precision_uniform(DT_FP8), block = fp8, int4 = fp8, tensor = fp8;
    tensor.weights_format = tensor.moe_format = WF_FP8;
    block.moe_format = WF_FP8_BLOCK;
    int4.moe_format = WF_INT4_WO;
    const double total = model_params(&m).total;
    cr_expect_eq(weight_bytes_at(&m, tensor), total, "per-tensor fp8: 1 B a weight, as --dtype fp8 counts");
    cr_expect_eq(weight_bytes_at(&m, fp8), weight_bytes(&m, DT_FP8));
    cr_expect_eq(weight_bytes_at(&m, block) - weight_bytes_at(&m, tensor), 159645696.0);
    cr_expect_eq(weight_bytes_at(&m, tensor) - weight_bytes_at(&m, int4), 314182729728.0);
    /* at tp 8 (everything split 8 ways) and in a layout with the experts
     * split 8 ways by expert and the rest whole (tp 1, attention-dp 8):
     * the experts' share of the difference is 1/8 either way */
    cr_expect_eq(weight_bytes_per_gpu_at(&m, block, 8) - weight_bytes_per_gpu_at(&m, tensor, 8), 19955712.0);
    parallel_layout dep8 = {1, 8, 1, 8};
    cr_expect(fabs(layout_weight_bytes_per_gpu_at(&m, block, &dep8) - layout_weight_bytes_per_gpu_at(&m, tensor, &dep8) -
                   19955712.0) < 1e-3);
}

static const op_cost *routed_op(const op_cost *ops, int n)
{
    for (int i = 0; i < n; i++)
        if (ops[i].rate >= RC_MOE_BF16 && ops[i].rate <= RC_MOE_INT4)
            return &ops[i];
    cr_assert_fail("no routed experts op");
    return NULL;
}

/* The experts' format picks their class and reads their bytes: Qwen3-235B
 * at one token reads 8 experts of 3 x 4096 x 1536 weights a MoE layer,
 * 150,994,944 weights: fp8_block 150,994,944 x (1 + 1/4096) = 151,031,808 B,
 * int4_wo x 133/256 = 78,446,592 B. */
Test(weight_format, the_experts_format_reaches_their_op)
{
    model_spec m = model_builtin("qwen3-235b-a22b");
    precision p = precision_uniform(DT_FP8);
    op_cost ops[DECODER_MAX_OPS];
    step_shape s = decode_shape(1, 0, 1, p);
    const weight_format f[] = {WF_FP8, WF_FP8_BLOCK, WF_INT4_WO, WF_BF16};
    const rate_class want[] = {RC_MOE_FP8, RC_MOE_FP8_BLOCK, RC_MOE_INT4, RC_MOE_BF16};
    const op_math math[] = {OP_MATH_FP8, OP_MATH_FP8, OP_MATH_BF16, OP_MATH_BF16};
    for (int i = 0; i < 4; i++) {
        s.prec.moe_format = f[i];
        int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
        const op_cost *r = routed_op(ops, n);
        cr_expect_eq(r->rate, want[i], "%s", weight_format_name(f[i]));
        cr_expect_eq(r->math, math[i], "%s", weight_format_name(f[i]));
    }
    const double w = 8.0 * 3 * 4096 * 1536;
    s.prec.moe_format = WF_FP8_BLOCK;
    cr_expect(fabs(routed_op(ops, decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS))->weight_bytes - 151031808.0) < 1e-3);
    s.prec.moe_format = WF_INT4_WO;
    cr_expect(fabs(routed_op(ops, decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS))->weight_bytes - 78446592.0) < 1e-3);
    cr_expect_eq(w * 133 / 256, 78446592.0);
    /* --dtype alone: the class of the release (block-scaled fp8), the step's math */
    s.prec.moe_format = WF_AS_DTYPE;
    const op_cost *r = routed_op(ops, decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS));
    cr_expect_eq(r->rate, RC_MOE_FP8_BLOCK);
    cr_expect_eq(r->math, OP_MATH_STEP);
}

/* An op that states its math is priced at that math's peak whatever the
 * step's: 1e15 FLOP with no bytes on the H100 roofline takes 1e15 /
 * 1978.9e12 s in fp8 and 1e15 / 989.4e12 s in bf16 (the GPU table's dense
 * peaks), the step's peak passed being the other one. */
Test(weight_format, an_op_with_its_own_math_takes_that_peak)
{
    gpu_spec g = gpu_builtin("h100");
    op_cost op = op_lump("experts", RC_MOE_FP8, 1e15, 0, 0, 0);
    op.math = OP_MATH_FP8;
    cr_expect(fabs(price_op(&op, &g, 989.4e12, 1, NULL) / (1e15 / 1978.9e12) - 1) < 1e-12);
    op.math = OP_MATH_BF16;
    cr_expect(fabs(price_op(&op, &g, 1978.9e12, 1, NULL) / (1e15 / 989.4e12) - 1) < 1e-12);
    op.math = OP_MATH_STEP;
    cr_expect(fabs(price_op(&op, &g, 1978.9e12, 1, NULL) / (1e15 / 1978.9e12) - 1) < 1e-12);
}

/* The dense GEMMs' format picks their class: --weights fp8_block in fp8
 * math is the block-scaled kernel's own class (the engines' tables time a
 * different kernel: vLLM's at M = 16, N = 4096, K = 4096 takes 58.8 us
 * against per-tensor fp8's 10.3 us, h200_sxm/vllm/gemm.tsv), per-tensor fp8
 * and --dtype fp8 alone the per-tensor one; the routed experts keep theirs.
 * Priced: qwen3-235b-a22b's qkv_proj (bf16 activations) at batch 1 and TP 1 against rates whose
 * block class is t0 = 60 us with every share 1, and whose per-tensor class
 * is t0 = 10 us: 4096 in, (64 + 2 x 4) x 128 = 9216 out, so 2 x 4096 x 9216
 * = 75,497,472 FLOP and 37,748,736 weight bytes x 1.000244 (fp8_block:
 * 1 + 4 / 128^2) plus 4096 x 2 + 9216 x 2 = 26,624 activation bytes.  At
 * 1978.9 TFLOP/s and 3.35 TB/s (the H100 row) the memory term, 37,784,576.6
 * / 3.35e12 = 11.279 us, is above the FLOP term, 0.038 us, and blend 50
 * takes it alone: 60 + 11.279 = 71.279 us with the block class, and
 * 10 + 11.279 us when the calibration lacks it (the per-tensor class). */
Test(weight_format, the_dense_block_format_takes_its_own_gemm_class)
{
    model_spec m = model_builtin("qwen3-235b-a22b");
    precision p = precision_uniform(DT_FP8);
    p.act = DT_BF16; /* the engines' fp8 recipe: 16-bit activations between ops */
    op_cost ops[DECODER_MAX_OPS];
    const weight_format f[] = {WF_FP8_BLOCK, WF_FP8, WF_AS_DTYPE};
    const rate_class want[] = {RC_GEMM_FP8_BLOCK, RC_GEMM_FP8, RC_GEMM_FP8};
    const op_cost *qkv = NULL;
    for (int i = 0; i < 3; i++) {
        p.weights_format = f[i];
        step_shape s = decode_shape(1, 0, 1, p);
        int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
        qkv = NULL;
        for (int k = 0; k < n; k++)
            if (strcmp(ops[k].name, "qkv_proj") == 0)
                qkv = &ops[k];
        cr_assert(qkv);
        cr_expect_eq(qkv->rate, want[i], "%s", weight_format_name(f[i]));
        cr_expect_eq(routed_op(ops, n)->rate, RC_MOE_FP8_BLOCK, "the experts keep their class");
    }
    p.weights_format = WF_FP8_BLOCK;
    step_shape s = decode_shape(1, 0, 1, p);
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    op_cost q = {0};
    for (int k = 0; k < n; k++)
        if (strcmp(ops[k].name, "qkv_proj") == 0)
            q = ops[k];
    cr_expect(fabs(q.flop - 75497472.0) < 1e-6);
    cr_expect(fabs(q.weight_bytes - 37748736.0 * (1 + 4.0 / (128 * 128))) < 1e-3);
    cr_expect(fabs(q.act_bytes - 26624.0) < 1e-9);
    rate_model r;
    memset(&r, 0, sizeof r);
    r.op[RC_GEMM_FP8] = (op_rate){10e-6, 0, 1, 1, 50, 0, 0};
    r.op[RC_GEMM_FP8_BLOCK] = (op_rate){60e-6, 0, 1, 1, 50, 0, 0};
    r.has_op[RC_GEMM_FP8] = r.has_op[RC_GEMM_FP8_BLOCK] = 1;
    gpu_spec g = gpu_builtin("h100");
    g.rates = &r;
    const double mem = (37748736.0 * (1 + 4.0 / (128 * 128)) + 26624.0) / 3.35e12;
    cr_expect(fabs(mem - 11.279e-6) < 1e-9);
    double t = price_op(&q, &g, gpu_peak_flops(&g, DT_FP8), 1, NULL);
    cr_expect(fabs(t - (60e-6 + mem)) < 1e-9, "block class: %g s", t);
    r.has_op[RC_GEMM_FP8_BLOCK] = 0;
    t = price_op(&q, &g, gpu_peak_flops(&g, DT_FP8), 1, NULL);
    cr_expect(fabs(t - (10e-6 + mem)) < 1e-9, "fallback to per-tensor fp8: %g s", t);
}
