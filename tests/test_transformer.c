/* Parameter counts and the per-op cost model of a decoder step. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "memory.h"
#include "transformer.h"

#define REL(a, b, tol) cr_assert(fabs((a) - (b)) <= (tol) * fabs(b), "%s = %.9g, expected %.9g", #a, (double)(a), (double)(b))

static const op_cost *find_op(const op_cost *ops, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

Test(params, llama3_70b_has_70_55e9)
{
    /* embedding 128256*8192 = 1,050,673,152, untied head the same;
     * attention/layer 2*8192*8192 + 2*8192*1024 = 150,994,944, x80 = 12,079,595,520;
     * mlp/layer 3*8192*28672 = 704,643,072, x80 = 56,371,445,760;
     * norms 80*2*8192 + 8192 = 1,318,912.  Sum: 70,553,706,496. */
    model_spec m = model_builtin("llama3-70b");
    param_count p = model_params(&m);
    cr_assert_eq(p.total, 70553706496.0);
    cr_assert_eq(p.active, p.total);
    cr_assert_eq(p.head, 1050673152.0);
}

Test(params, llama3_8b_and_tied_1b)
{
    /* 8B: 2*525,336,576 + 32*41,943,040 + 32*176,160,768 + 32*8192 + 4096 = 8,030,261,248 (published 8.03B) */
    model_spec m = model_builtin("llama3-8b");
    cr_assert_eq(model_params(&m).total, 8030261248.0);
    /* LLaMA-3.2-1B ties its head: 128256*2048 = 262,668,288 counted once;
     * attention/layer 2*2048*2048 + 2*2048*512 = 10,485,760, x16 = 167,772,160;
     * mlp/layer 3*2048*8192 = 50,331,648, x16 = 805,306,368; norms 16*4096 + 2048 = 67,584.
     * Sum 1,235,814,400 (published 1.24B). */
    model_spec s = model_builtin("llama3.2-1b");
    param_count p = model_params(&s);
    cr_assert_eq(p.head, 0);
    cr_assert_eq(p.total, 1235814400.0);
}

Test(params, mixtral_total_and_active)
{
    /* Mistral's announcement: 46.7B total, 12.9B active per token.
     * Hand: embeddings 2*32000*4096 = 262,144,000; attention 32*41,943,040 = 1,342,177,280;
     * experts 32*8*176,160,768 = 45,097,156,608; router 32*4096*8 = 1,048,576; norms 266,240.
     * Total 46,702,792,704; active drops 6 of 8 experts: -32*6*176,160,768 = 12,879,925,248. */
    model_spec m = model_builtin("mixtral-8x7b");
    param_count p = model_params(&m);
    cr_assert_eq(p.total, 46702792704.0);
    cr_assert_eq(p.active, 12879925248.0);
}

Test(step, batch1_decode_reads_every_weight_once)
{
    /* At batch 1 a decode step reads every weight but the unused embedding rows:
     * (70,553,706,496 - 1,050,673,152 + 8,192 one row) * 2 B = 139,006,083,072 B. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = decode_shape(1, 4096, 1, precision_uniform(DT_BF16));
    step_cost c;
    char err[256];
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.weight_bytes, 139006083072.0);
    /* KV read at batch 1, context 4096: 4097 positions * 327,680 B plus the new token's K and V written */
    REL(c.kv_bytes, 4097.0 * 327680 + 327680, 1e-12);
    cr_assert_eq(c.bound, BOUND_MEMORY);
    /* the time is at least the weight bytes over 3.35 TB/s = 41.49 ms */
    cr_assert(c.time >= 139006083072.0 / 3.35e12);
    cr_assert(c.time < 1.1 * (139006083072.0 + c.kv_bytes + c.act_bytes) / 3.35e12);
}

Test(step, projection_intensity_is_the_batch)
{
    /* A bf16 projection at batch B: 2*B*in*out FLOP over in*out*2 weight bytes = B.
     * Counting the activations too (B*(in+out)*2 bytes) it is B / (1 + B*(in+out)/(in*out));
     * for o_proj of 70B, in = out = 8192: B / (1 + B/4096). */
    model_spec m = model_builtin("llama3-70b");
    int batches[] = {1, 16, 64, 256};
    for (int i = 0; i < 4; i++) {
        step_shape s = decode_shape(batches[i], 4096, 1, precision_uniform(DT_BF16));
        op_cost ops[DECODER_MAX_OPS];
        int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
        const op_cost *o = find_op(ops, n, "o_proj");
        cr_assert_not_null(o);
        REL(o->flop / o->weight_bytes, (double)batches[i], 1e-12);
        cr_assert(o->flop / op_bytes(o) < batches[i]);
        REL(o->flop / op_bytes(o), batches[i] / (1 + batches[i] / 4096.0), 1e-12);
    }
}

Test(step, attention_intensity_is_the_group_size_whatever_the_batch)
{
    /* LLaMA-3-70B: 64 query heads share 8 KV heads, group g = 8.  Score: 2*hd FLOP
     * per (query head, position) against hd*2 bytes of K per (KV head, position):
     * intensity ~ g * (2 hd + 5) / (2 hd) ~ 8.2 for long context, the same at any batch. */
    model_spec m = model_builtin("llama3-70b");
    double first = 0;
    int batches[] = {1, 8, 64, 512};
    for (int i = 0; i < 4; i++) {
        step_shape s = decode_shape(batches[i], 32768, 1, precision_uniform(DT_BF16));
        op_cost ops[DECODER_MAX_OPS];
        int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
        const op_cost *a = find_op(ops, n, "attn_score");
        cr_assert_not_null(a);
        double x = a->flop / op_bytes(a);
        REL(x, 8.0 * (256.0 + 5.0) / 256.0, 0.01);
        if (i == 0)
            first = x;
        REL(x, first, 1e-9);
    }
}

Test(step, norms_and_residuals_stay_at_or_below_one)
{
    model_spec m = model_builtin("llama3-8b");
    step_shape s = decode_shape(512, 2048, 1, precision_uniform(DT_BF16));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    for (int i = 0; i < n; i++)
        if (ops[i].kind == OP_NORM || ops[i].kind == OP_ELEMENTWISE)
            cr_assert(ops[i].flop / op_bytes(&ops[i]) <= 1.0, "%s", ops[i].name);
    /* residual add: 1 FLOP per element over 3 elements of 2 B = 1/6 */
    const op_cost *r = find_op(ops, n, "attn_residual");
    REL(r->flop / op_bytes(r), 1.0 / 6.0, 1e-12);
}

/* Sum over the step's norm and elementwise kernels (repeats counted) of
 * kernels, FLOPs and HBM bytes. */
static void elementwise_totals(const model_spec *m, const op_cost *ops, int n, double *kernels, double *flop,
                               double *bytes)
{
    *kernels = *flop = *bytes = 0;
    for (int i = 0; i < n; i++)
        if (ops[i].kind == OP_NORM || ops[i].kind == OP_ELEMENTWISE) {
            int r = op_repeats(m, &ops[i]);
            *kernels += r;
            *flop += r * ops[i].flop;
            *bytes += r * op_bytes(&ops[i]);
        }
}

Test(step, fused_add_norm_runs_two_kernels_a_layer_where_apart_there_are_four)
{
    /* LLaMA-3-8B, 32 layers, hidden 4096, a decode step of 4 sequences in
     * bf16: T = 4 tokens.  Apart, a layer runs two norms (read T x h, write
     * it: 2 T h x 2 B) and two residual adds (two reads, one write: 3 T h x
     * 2 B); fused, two add + norm kernels (read both, write both: 4 T h x 2
     * B).  Per layer the bytes drop by (2*2 + 2*3 - 2*4) T h x 2 B = 2 x 4 x
     * 4096 x 2 = 65,536 B, 2,097,152 B over 32 layers; the kernels by 2 a
     * layer, 64; the FLOPs stay (2 x 4 + 2 x 1 = 2 x 5 per element).  The
     * gains (h x 2 B a norm) and act_mul are the same either way, and the
     * step's one plain norm (the final one apart, the first layer's input
     * norm fused) costs the same. */
    model_spec m = model_builtin("llama3-8b");
    step_shape s = decode_shape(4, 1024, 1, precision_uniform(DT_BF16));
    op_cost apart[DECODER_MAX_OPS], fused[DECODER_MAX_OPS];
    int na = decoder_step_ops(&m, &s, apart, DECODER_MAX_OPS);
    s.fused_add_norm = 1;
    int nf = decoder_step_ops(&m, &s, fused, DECODER_MAX_OPS);
    double ka, fa, ba, kf, ff, bf;
    elementwise_totals(&m, apart, na, &ka, &fa, &ba);
    elementwise_totals(&m, fused, nf, &kf, &ff, &bf);
    cr_assert_eq(ka - kf, 64.0);
    cr_assert_eq(ba - bf, 2097152.0);
    REL(ff, fa, 1e-12);
    cr_assert_null(find_op(fused, nf, "attn_residual"));
    cr_assert_null(find_op(fused, nf, "final_norm"));
    /* one fused kernel: 5 FLOP per element against 4 T h activations and the gain */
    const op_cost *f = find_op(fused, nf, "attn_residual_norm");
    cr_assert_not_null(f);
    cr_assert_eq(f->flop, 5.0 * 4 * 4096);
    cr_assert_eq(op_bytes(f), 4.0 * 4 * 4096 * 2 + 4096 * 2);
}

Test(step, tensor_parallel_splits_the_weights)
{
    /* At TP 4 each GPU reads a quarter of the sharded projections: qkv of 70B
     * is 8192 x (64+16)*128 = 83,886,080 weights in all, 20,971,520 per GPU. */
    model_spec m = model_builtin("llama3-70b");
    step_shape s = decode_shape(1, 0, 4, precision_uniform(DT_BF16));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    cr_assert_eq(find_op(ops, n, "qkv_proj")->weight_bytes, 20971520.0 * 2);
}

Test(step, bad_shapes_are_errors)
{
    model_spec m = model_builtin("llama3-70b");
    char err[256];
    step_shape s = decode_shape(1, 1024, 3, precision_uniform(DT_BF16));
    cr_assert_eq(step_shape_check(&m, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "does not divide the 64 attention heads") != NULL, "%s", err);
    s = decode_shape(0, 1024, 1, precision_uniform(DT_BF16));
    cr_assert_eq(step_shape_check(&m, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "batch") != NULL, "%s", err);
    op_cost ops[DECODER_MAX_OPS];
    cr_assert_eq(decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS), -1);
    /* fp8 compute on an A100: no such rate */
    gpu_spec a = gpu_builtin("a100");
    step_cost c;
    s = decode_shape(1, 1024, 1, precision_uniform(DT_FP8));
    cr_assert_eq(decoder_step_cost(&m, &a, &s, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "a100 has no dense fp8 rate") != NULL, "%s", err);
}

Test(step, moe_reads_only_the_experts_it_touches)
{
    /* Mixtral at batch 1: 2 of 8 experts -> expert weights read are a quarter of all experts. */
    model_spec m = model_builtin("mixtral-8x7b");
    step_shape s = decode_shape(1, 0, 1, precision_uniform(DT_BF16));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    /* the routed experts' one grouped GEMM reads 2 experts' gate_up and down:
     * 2 * 4096 * 3*14336 * 2 B = 704,643,072 B, one work item per expert */
    const op_cost *e = find_op(ops, n, "routed_experts");
    cr_assert_not_null(e);
    REL(e->weight_bytes, 704643072.0, 1e-12);
    REL(e->items, 2.0, 1e-12);
    cr_expect_eq(e->rate, RC_MOE_BF16);
    /* at a large batch nearly all 8 experts are touched: 8 / 2 times as many bytes */
    s.batch = 256;
    n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    REL(find_op(ops, n, "routed_experts")->weight_bytes, 4 * 704643072.0, 1e-9);
}

Test(step, ridge_batch_scales_with_bytes_per_weight)
{
    gpu_spec h = gpu_builtin("h100");
    /* bf16: 989.4/3.35 = 295.34 FLOP/B, and 2 FLOP per 2-byte weight per sequence -> batch 295.34 */
    REL(ridge_batch(&h, precision_uniform(DT_BF16)), 295.343, 1e-5);
    /* int8 weights, bf16 compute: each sequence adds 2 FLOP per 1-byte weight -> half: 147.67 */
    precision w8a16 = {DT_INT8, DT_BF16, DT_BF16, DT_BF16, WF_AS_DTYPE, WF_AS_DTYPE};
    REL(ridge_batch(&h, w8a16), 147.672, 1e-5);
    /* fp8 throughout: ridge 1978.9/3.35 = 590.716, over 2 FLOP per byte -> 295.358 */
    REL(ridge_batch(&h, precision_uniform(DT_FP8)), 295.358, 1e-5);
    gpu_spec a = gpu_builtin("a100");
    cr_assert_eq(ridge_batch(&a, precision_uniform(DT_FP8)), 0); /* no fp8 rate */
}

Test(step, experts_touched_by_a_step)
{
    /* Mixtral, top-2 of 8: one token touches 2; two tokens 8*(1-(6/8)^2) = 3.5 */
    model_spec m = model_builtin("mixtral-8x7b");
    REL(moe_experts_touched(&m, 1), 2.0, 1e-12);
    REL(moe_experts_touched(&m, 2), 3.5, 1e-12);
    model_spec d = model_builtin("llama3-8b");
    cr_assert_eq(moe_experts_touched(&d, 100), 1.0);
}

Test(step, layer_projection_shapes_follow_the_megatron_split)
{
    /* LLaMA-3-70B at TP 4: 16 of 64 query heads and 2 of 8 KV heads per GPU, head dim 128:
     * qkv 8192 -> 16*128 + 2*2*128 = 2560; o 2048 -> 8192; gate_up 8192 -> 2*28672/4 = 14336;
     * down 7168 -> 8192. */
    model_spec m = model_builtin("llama3-70b");
    projection_shape w[LAYER_PROJECTIONS];
    cr_assert_eq(layer_projection_shapes(&m, 4, w), 4);
    int want[4][2] = {{8192, 2560}, {2048, 8192}, {8192, 14336}, {7168, 8192}};
    const char *names[4] = {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"};
    for (int i = 0; i < 4; i++) {
        cr_assert_str_eq(w[i].name, names[i]);
        cr_assert_eq(w[i].in, want[i][0], "%s in", names[i]);
        cr_assert_eq(w[i].out, want[i][1], "%s out", names[i]);
    }
}
