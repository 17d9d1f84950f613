#include "transformer.h"

#include "comm.h"
#include "pricing.h"

#include <math.h>
#include <stdio.h>

precision precision_uniform(dtype d)
{
    precision p = {d, d, d, d};
    if (d == DT_INT4) { /* int4 weights are dequantized and multiplied in bf16 */
        p.act = DT_BF16;
        p.compute = DT_BF16;
    }
    return p;
}

//> params
param_count model_params(const model_spec *m)
{
    double h = m->hidden, hd = m->head_dim, L = m->layers, E = m->experts;
    param_count p;
    p.embedding = (double)m->vocab * h;
    p.head = m->tied_embeddings ? 0 : (double)m->vocab * h;
    /* q and o are heads*hd wide; k and v only kv_heads*hd (GQA) */
    p.attention = L * (2 * h * m->heads * hd + 2 * h * m->kv_heads * hd);
    p.mlp = L * E * 3 * h * m->ffn; /* gate, up, down of every expert */
    p.router = E > 1 ? L * h * E : 0;
    p.norms = L * 2 * h + h; /* two RMSNorms per layer and the final one */
    p.total = p.embedding + p.head + p.attention + p.mlp + p.router + p.norms;
    p.active = p.total - L * (E - m->experts_active) * 3 * h * m->ffn;
    return p;
}
//< params

step_shape decode_shape(int batch, int context, int tp, precision prec)
{
    step_shape s = {batch, context, 1, tp, prec, 0, 0};
    return s;
}

step_shape prefill_shape(int batch, int context, int prompt, int tp, precision prec)
{
    step_shape s = {batch, context, prompt, tp, prec, 0, 1};
    return s;
}

int step_shape_check(const model_spec *m, const step_shape *s, char *err, size_t errlen)
{
    const char *what = NULL;
    if (s->batch < 1)
        what = "batch must be at least 1";
    else if (s->context < 0)
        what = "context must not be negative";
    else if (s->new_tokens < 1)
        what = "new tokens per sequence must be at least 1";
    else if (s->tp < 1)
        what = "tensor-parallel degree must be at least 1";
    if (what) {
        snprintf(err, errlen, "%s", what);
        return -1;
    }
    if (m->heads % s->tp != 0) {
        snprintf(err, errlen, "tensor-parallel degree %d does not divide the %d attention heads of %s", s->tp,
                 m->heads, m->key);
        return -1;
    }
    if (m->kv_heads % s->tp != 0 && s->tp % m->kv_heads != 0) {
        snprintf(err, errlen, "tensor-parallel degree %d and the %d KV heads of %s: neither divides the other",
                 s->tp, m->kv_heads, m->key);
        return -1;
    }
    return 0;
}

/* KV heads one GPU holds: split when there are enough, else one replicated. */
static double kv_heads_local(const model_spec *m, int tp)
{
    return m->kv_heads >= tp ? (double)m->kv_heads / tp : 1.0;
}

int layer_projection_shapes(const model_spec *m, int tp, projection_shape *out)
{
    int q = m->heads / tp * m->head_dim;
    int kv = (int)kv_heads_local(m, tp) * m->head_dim;
    int ffn = m->ffn / tp;
    out[0] = (projection_shape){"qkv_proj", m->hidden, q + 2 * kv};
    out[1] = (projection_shape){"o_proj", q, m->hidden};
    out[2] = (projection_shape){"gate_up_proj", m->hidden, 2 * ffn};
    out[3] = (projection_shape){"down_proj", ffn, m->hidden};
    return LAYER_PROJECTIONS;
}

static op_cost make_op(const char *name, op_kind kind, int per_layer)
{
    op_cost op = {name, kind, per_layer, 0, 0, 0, 0, 0, RC_ELEMENTWISE, 1, 0};
    return op;
}

//> decode_projection
/* T tokens through an in x out weight: 2*T*in*out FLOP, the whole weight read
 * once, the input read and the output written.  At T = batch (decode) and
 * 2-byte weights, FLOP per weight byte is exactly the batch. */
static op_cost projection(const char *name, double T, double in, double out, double wb, double ab)
{
    op_cost op = make_op(name, OP_PROJECTION, 1);
    op.rate = RC_GEMM_BF16; /* decoder_step_ops names the class from the precision */
    op.flop = 2 * T * in * out;
    op.weight_bytes = in * out * wb;
    op.act_bytes = T * (in + out) * ab;
    return op;
}
//< decode_projection

/* RMSNorm of T x width: square, sum, scale, gain: about 4 FLOP per element
 * against one read and one write. */
static op_cost norm(const char *name, int per_layer, double T, double width, double ab)
{
    op_cost op = make_op(name, OP_NORM, per_layer);
    op.flop = 4 * T * width;
    op.weight_bytes = width * ab;
    op.act_bytes = 2 * T * width * ab;
    return op;
}

/* Residual add: one FLOP per element, two reads and a write. */
static op_cost residual(const char *name, double T, double width, double ab)
{
    op_cost op = make_op(name, OP_ELEMENTWISE, 1);
    op.flop = T * width;
    op.act_bytes = 3 * T * width * ab;
    return op;
}


//> attention_op
void attention_op_costs(double B, double ctx, double n, double heads_l, double kvh_l, double hd, dtype kv,
                        dtype act, op_cost out[2])
{
    const double kb = dtype_bytes(kv), ab = dtype_bytes(act), T = B * n;
    /* Each new token attends to the cached context and to the new tokens up
     * to itself.  Every query head reads the K (then V) of its KV group, so
     * the FLOP per KV byte is about the group size heads/kv_heads times the
     * new tokens per sequence, whatever the batch. */
    const double pairs = ctx * n + n * (n + 1) / 2;      /* (query, key) pairs per sequence and head */
    const double kv_read = B * (ctx + n) * kvh_l * hd * kb; /* K or V of every attended position */
    const double kv_write = B * n * kvh_l * hd * kb;        /* the new tokens' K or V */
    op_cost score = make_op("attn_score", OP_ATTENTION, 1);
    score.flop = 2 * B * heads_l * hd * pairs + 5 * B * heads_l * pairs; /* QK^T, then softmax */
    score.kv_bytes = kv_read + kv_write;
    score.act_bytes = T * heads_l * hd * ab; /* Q */
    op_cost value = make_op("attn_value", OP_ATTENTION, 1);
    value.flop = 2 * B * heads_l * hd * pairs; /* P V */
    value.kv_bytes = kv_read + kv_write;
    value.act_bytes = T * heads_l * hd * ab; /* the attention output */
    //< attention_op
    /* one fused kernel, counted as two ops: each carries half its fixed cost */
    score.rate = value.rate = n == 1 ? rate_class_decode_attention(kv) : RC_ATTN_PREFILL;
    score.fixed_share = value.fixed_share = 0.5;
    /* work items: one per sequence and KV head in decode; in prefill, one per
     * head and 128-row tile of the new tokens (the halves carry half each) */
    double items = n == 1 ? B * kvh_l : B * heads_l * ceil(n / 128);
    score.items = value.items = items / 2;
    out[0] = score;
    out[1] = value;
}

op_cost gemm_op_cost(double T, double in, double out, dtype weights, dtype compute, dtype act)
{
    op_cost op = projection("gemm", T, in, out, dtype_bytes(weights), dtype_bytes(act));
    op.rate = rate_class_gemm(weights, compute);
    return op;
}

int decoder_step_ops(const model_spec *m, const step_shape *s, op_cost *ops, int max_ops)
{
    char err[256];
    if (step_shape_check(m, s, err, sizeof err) != 0)
        return -1;
    const double tp = s->tp, B = s->batch, n = s->new_tokens, ctx = s->context;
    const double T = B * n; /* tokens in the step */
    const double h = m->hidden, hd = m->head_dim;
    const double wb = dtype_bytes(s->prec.weights), ab = dtype_bytes(s->prec.act);
    const double heads_l = m->heads / tp, kvh_l = kv_heads_local(m, s->tp);
    const double vocab_l = m->vocab / tp;
    projection_shape w[LAYER_PROJECTIONS];
    layer_projection_shapes(m, s->tp, w);
    const double ffn_l = w[3].in;
    const double E = m->experts, k = m->experts_active;
    const double experts_touched = moe_experts_touched(m, T);

    op_cost all[DECODER_MAX_OPS];
    int c = 0;
    all[c++] = norm("attn_norm", 1, T, h, ab);
    all[c++] = projection(w[0].name, T, w[0].in, w[0].out, wb, ab);

    op_cost attn[2];
    attention_op_costs(B, ctx, n, heads_l, kvh_l, hd, s->prec.kv, s->prec.act, attn);
    op_cost score = attn[0], value = attn[1];
    all[c++] = score;
    all[c++] = value;

    all[c++] = projection(w[1].name, T, w[1].in, w[1].out, wb, ab);
    //> tp_collectives
    /* Row-parallel o_proj and down_proj leave partial sums of the residual
     * stream on every GPU: one all-reduce of T x hidden each. */
    const int comm = s->tp > 1 && !s->skip_comm;
    op_cost attn_ar = make_op("attn_allreduce", OP_ALLREDUCE, 1);
    attn_ar.comm_bytes = T * h * ab;
    //< tp_collectives
    if (comm)
        all[c++] = attn_ar;
    all[c++] = residual("attn_residual", T, h, ab);
    all[c++] = norm("mlp_norm", 1, T, h, ab);
    if (E > 1)
        all[c++] = projection("router", T, h, E, wb, ab);

    /* The MLP: k experts per token do the FLOPs; the experts touched are read. */
    op_cost gate_up = projection(w[2].name, T * k, w[2].in, w[2].out, wb, ab);
    gate_up.weight_bytes = experts_touched * w[2].in * w[2].out * wb;
    all[c++] = gate_up;
    op_cost act = make_op("act_mul", OP_ELEMENTWISE, 1); /* SiLU(gate) * up */
    act.flop = 5 * T * k * ffn_l;
    act.act_bytes = 3 * T * k * ffn_l * ab;
    all[c++] = act;
    op_cost down = projection(w[3].name, T * k, w[3].in, w[3].out, wb, ab);
    down.weight_bytes = experts_touched * w[3].in * w[3].out * wb;
    all[c++] = down;
    if (comm) {
        op_cost mlp_ar = attn_ar;
        mlp_ar.name = "mlp_allreduce";
        all[c++] = mlp_ar;
    }
    all[c++] = residual("mlp_residual", T, h, ab);

    /* Once per step. */
    op_cost embed = make_op("embedding", OP_EMBEDDING, 0);
    embed.weight_bytes = T * h * wb; /* the rows of the step's tokens */
    embed.act_bytes = T * h * ab;
    all[c++] = embed;
    if (comm) { /* each GPU holds a vocabulary slice of the table: sum the rows */
        op_cost embed_ar = make_op("embed_allreduce", OP_ALLREDUCE, 0);
        embed_ar.comm_bytes = T * h * ab;
        all[c++] = embed_ar;
    }
    all[c++] = norm("final_norm", 0, T, h, ab);
    const double L = s->logits_last ? B : T; /* positions that get logits */
    op_cost logits = projection("logits", L, h, vocab_l, wb, ab);
    logits.kind = OP_LOGITS;
    logits.per_layer = 0;
    logits.act_bytes = L * h * ab + L * vocab_l * 4; /* fp32 logits out */
    all[c++] = logits;
    if (comm) { /* the sampler needs every vocabulary slice of the fp32 logits */
        op_cost gather = make_op("logits_gather", OP_ALLGATHER, 0);
        gather.comm_bytes = L * (double)m->vocab * 4;
        all[c++] = gather;
    }

    const rate_class gemm = rate_class_gemm(s->prec.weights, s->prec.compute);
    for (int i = 0; i < c; i++)
        if (all[i].kind == OP_PROJECTION || all[i].kind == OP_LOGITS)
            all[i].rate = gemm;
    int count = c < max_ops ? c : max_ops;
    for (int i = 0; i < count; i++)
        ops[i] = all[i];
    return count;
}

double op_bytes(const op_cost *op)
{
    return op->weight_bytes + op->kv_bytes + op->act_bytes;
}

int op_is_comm(const op_cost *op)
{
    return op->kind == OP_ALLREDUCE || op->kind == OP_ALLGATHER;
}

double op_time(const op_cost *op, const gpu_spec *g, double peak, int tp, bound_kind *bound)
{
    if (op->kind == OP_ALLREDUCE)
        return price_allreduce(g, tp, op->comm_bytes);
    if (op->kind == OP_ALLGATHER)
        return price_allgather(g, tp, op->comm_bytes);
    return price_compute_items(g, op->rate, op->flop, op_bytes(op), op->items, peak, op->fixed_share, bound);
}

int op_repeats(const model_spec *m, const op_cost *op)
{
    return op->per_layer ? m->layers : 1;
}

//> step_cost
int decoder_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, step_cost *out,
                      char *err, size_t errlen)
{
    if (step_shape_check(m, s, err, errlen) != 0)
        return -1;
    const double peak = gpu_peak_flops(g, s->prec.compute);
    if (peak <= 0) {
        snprintf(err, errlen, "%s has no dense %s rate in the GPU table", g->key, dtype_name(s->prec.compute));
        return -1;
    }
    if (s->tp > 1 && !s->skip_comm && !gpu_has_links(g)) {
        snprintf(err, errlen,
                 "%s has no link bandwidth or all-reduce latency in the GPU table, so a tp %d step cannot "
                 "count its communication (add link_gb_s and allreduce_us, or leave communication out)",
                 g->key, s->tp);
        return -1;
    }
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, s, ops, DECODER_MAX_OPS);
    step_cost c = {0};
    for (int i = 0; i < n; i++) {
        double reps = op_repeats(m, &ops[i]);
        c.flop += reps * ops[i].flop;
        c.weight_bytes += reps * ops[i].weight_bytes;
        c.kv_bytes += reps * ops[i].kv_bytes;
        c.act_bytes += reps * ops[i].act_bytes;
        c.comm_bytes += reps * ops[i].comm_bytes;
        /* each op is bounded on its own: a memory-bound op cannot borrow
         * the idle FLOPs of a compute-bound one, nor hide a collective */
        double t = reps * op_time(&ops[i], g, peak, s->tp, NULL);
        c.time += t;
        if (op_is_comm(&ops[i]))
            c.time_comm += t;
    }
    c.bytes = c.weight_bytes + c.kv_bytes + c.act_bytes;
    c.time_memory = c.bytes / g->mem_bw;
    c.time_compute = c.flop / peak;
    c.intensity = arithmetic_intensity(c.flop, c.bytes);
    c.bound = c.time_compute > c.time_memory ? BOUND_COMPUTE : BOUND_MEMORY;
    c.tokens = (double)s->batch * s->new_tokens;
    *out = c;
    return 0;
}
//< step_cost

//> ridge_batch
double ridge_batch(const gpu_spec *g, precision p)
{
    double peak = gpu_peak_flops(g, p.compute);
    if (peak <= 0)
        return 0;
    /* a multiply-add (2 FLOP) per weight per sequence */
    double flop_per_weight_byte_per_sequence = 2.0 / dtype_bytes(p.weights);
    return ridge_intensity(peak, g->mem_bw) / flop_per_weight_byte_per_sequence;
}
//< ridge_batch

//> compute_bound_batch
int compute_bound_batch(const model_spec *m, const gpu_spec *g, const step_shape *s, int batch_max, int *batch,
                        char *err, size_t errlen)
{
    *batch = 0;
    if (batch_max < 1) {
        snprintf(err, errlen, "the batch to search up to must be at least 1 (got %d)", batch_max);
        return -1;
    }
    step_shape t = *s;
    step_cost c;
    t.batch = batch_max;
    if (decoder_step_cost(m, g, &t, &c, err, errlen) != 0)
        return -1;
    if (c.bound != BOUND_COMPUTE)
        return 0; /* the intensity only rises with the batch: none below either */
    /* invariant: lo is memory-bound (or 0), hi is compute-bound */
    int lo = 0, hi = batch_max;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        t.batch = mid;
        if (decoder_step_cost(m, g, &t, &c, err, errlen) != 0)
            return -1;
        if (c.bound == BOUND_COMPUTE)
            hi = mid;
        else
            lo = mid;
    }
    *batch = hi;
    return 0;
}
//< compute_bound_batch

double moe_experts_touched(const model_spec *m, double tokens)
{
    double E = m->experts, k = m->experts_active;
    return E > 1 ? E * (1 - pow(1 - k / E, tokens)) : 1;
}

//> throughput
double step_tokens_per_second(const step_cost *c)
{
    return c->tokens / c->time; /* aggregate: the whole batch */
}

double step_user_tokens_per_second(const step_cost *c, const step_shape *s)
{
    return s->new_tokens / c->time; /* one sequence's pace */
}
//< throughput
