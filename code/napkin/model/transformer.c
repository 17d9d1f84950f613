#include "transformer.h"

#include "block_formats.h"

#include "linear_attention.h"
#include "sparse_attention.h"
#include "moe.h"

#include <math.h>
#include <stdio.h>

precision precision_uniform(dtype d)
{
    precision p = {d, d, d, d, WF_AS_DTYPE, WF_AS_DTYPE};
    if (d == DT_INT4) { /* int4 weights are dequantized and multiplied in bf16 */
        p.act = DT_BF16;
        p.compute = DT_BF16;
    }
    return p;
}

//> params
/* Attention weights of one layer.  GQA: q and o are heads*hd wide, k and v
 * only kv_heads*hd.  MLA (DeepSeek-V3): the query through a low-rank
 * q_lora, keys and values from one cached latent kv_lora wide plus a shared
 * rope key, expanded per head by kv_b; o from heads*v_head_dim. */
static double attention_params_per_layer(const model_spec *m)
{
    double h = m->hidden, hd = m->head_dim, H = m->heads;
    double sinks = m->sinks ? H : 0; /* one learned logit per head */
    /* Qwen3.5's output gate: q_proj makes a second heads x hd (sigmoid(gate) scales the output),
     * and q_norm, k_norm (one gain of hd each) */
    double gate = m->attn_gate ? h * H * hd + 2 * hd : 0;
    if (m->kv_lora_rank <= 0)
        return 2 * h * H * hd + 2 * h * m->kv_heads * hd + sinks + gate;
    double q = m->q_lora_rank, kv = m->kv_lora_rank, rope = m->qk_rope_dim, v = m->v_head_dim;
    double q_part = q > 0 ? h * q + q + q * H * hd : h * H * hd; /* q_a, its norm, q_b; or one q_proj */
    double kv_part = h * (kv + rope) + kv + kv * H * (m->qk_nope_dim + v); /* kv_a, its norm, kv_b */
    return q_part + kv_part + H * v * h + sinks + dsa_params_per_layer(m); /* and a sparse-attention indexer */
}

int model_moe_layers(const model_spec *m)
{
    int moe = m->layers - m->dense_layers;
    return m->experts > 1 && moe > 0 ? moe : 0;
}

/* A routed expert's width. */
static double expert_ffn(const model_spec *m)
{
    return m->moe_ffn > 0 ? m->moe_ffn : m->ffn;
}

param_count model_params(const model_spec *m)
{
    double h = m->hidden, L = m->layers, E = m->experts;
    double Lm = model_moe_layers(m), fe = expert_ffn(m), S = m->shared_experts;
    param_count p;
    p.embedding = (double)m->vocab * h;
    p.head = m->tied_embeddings ? 0 : (double)m->vocab * h;
    /* linear-attention layers have their own weights in place of attention's */
    p.attention = (L - m->linear_layers) * attention_params_per_layer(m) +
                  (m->linear_layers > 0 ? m->linear_layers * linear_params_per_layer(m) : 0);
    if (E > 1) { /* gate, up, down of every expert; a mixture's dense layers one MLP ffn wide */
        p.routed = Lm * E * 3 * h * fe;
        p.mlp = (L - Lm) * 3 * h * m->ffn + p.routed + Lm * S * 3 * h * fe;
    } else {
        p.routed = 0;
        p.mlp = L * 3 * h * m->ffn;
    }
    p.router = E > 1 ? Lm * h * E : 0;
    p.norms = L * 2 * h + h; /* two RMSNorms per layer and the final one */
    p.total = p.embedding + p.head + p.attention + p.mlp + p.router + p.norms;
    p.active = p.total - Lm * (E - m->experts_active) * 3 * h * fe;
    p.active_nonembedding = p.active - p.embedding;
    /* DeepSeek-V3's MTP module: enorm and hnorm, eh_proj (2h -> h), one
     * decoder layer of the MoE kind, a final norm, and the copies of the
     * embedding and head the release stores with it */
    const double D = m->mtp_layers, fe_k = E > 1 ? fe : m->ffn;
    const double layer_shared = attention_params_per_layer(m) + 2 * h + 2 * h * h + 3 * h;
    const double mlp_all = E > 1 ? h * E + (E + S) * 3 * h * fe_k : 3 * h * m->ffn;
    const double mlp_used = E > 1 ? h * E + (m->experts_active + S) * 3 * h * fe_k : 3 * h * m->ffn;
    p.mtp = D * (layer_shared + mlp_all + 2.0 * m->vocab * h);
    p.mtp_active = D * (layer_shared + mlp_used);
    /* SGLang's speculative worker points the module's embedding and head at
     * the main model's when it loads it as the draft (eagle_worker.py:
     * "Share the embedding and lm_head") */
    p.mtp_served = D * (layer_shared + mlp_all);
    return p;
}
//< params

double expert_weight_bytes(const model_spec *m, dtype weights)
{
    return m->expert_format == EXPERTS_MXFP4      ? block_format_bytes_per_weight(BF_MXFP4)
           : m->expert_format == EXPERTS_INT4_G32 ? INT4_G32_BYTES_PER_WEIGHT
                                                  : dtype_bytes(weights);
}

double dense_weight_bytes(precision p)
{
    return p.weights_format != WF_AS_DTYPE ? weight_format_bytes(p.weights_format) : dtype_bytes(p.weights);
}

double routed_weight_bytes(const model_spec *m, precision p)
{
    return p.moe_format != WF_AS_DTYPE ? weight_format_bytes(p.moe_format) : expert_weight_bytes(m, p.weights);
}

rate_class dense_rate_class(precision p)
{
    if (p.weights_format == WF_FP8_BLOCK && p.compute == DT_FP8)
        return RC_GEMM_FP8_BLOCK;
    return rate_class_gemm(p.weights, p.compute);
}

rate_class routed_rate_class(const model_spec *m, precision p)
{
    if (p.moe_format != WF_AS_DTYPE)
        return weight_format_moe_class(p.moe_format);
    /* int4 group-32 experts run the int4 kernel; MXFP4 ones the 4-bit block-float kernel */
    const dtype w = m->expert_format == EXPERTS_INT4_G32 ? DT_INT4 : p.weights;
    return rate_class_moe(w, p.compute, m->expert_format != EXPERTS_AS_WEIGHTS, 0);
}

step_shape decode_shape(int batch, int context, int tp, precision prec)
{
    step_shape s = {batch, context, 1, tp, prec, 0, 0, 0, 0};
    return s;
}

step_shape prefill_shape(int batch, int context, int prompt, int tp, precision prec)
{
    step_shape s = {batch, context, prompt, tp, prec, 0, 1, 0, 0};
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
    else if (!(s->routing_skew >= 0) || !isfinite(s->routing_skew))
        what = "the routing skew must be a finite number >= 0";
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
    int ffn = (int)expert_ffn(m) / tp; /* a mixture's experts' width (its dense layers aside) */
    out[0] = (projection_shape){"qkv_proj", m->hidden, (m->attn_gate ? 2 : 1) * q + 2 * kv}; /* q (and its gate), k, v */
    out[1] = (projection_shape){"o_proj", q, m->hidden};
    out[2] = (projection_shape){"gate_up_proj", m->hidden, 2 * ffn};
    out[3] = (projection_shape){"down_proj", ffn, m->hidden};
    return LAYER_PROJECTIONS;
}

static op_cost make_op(const char *name, op_kind kind, int per_layer)
{
    op_cost op = {.name = name, .kind = kind, .per_layer = per_layer, .rate = RC_ELEMENTWISE, .fixed_share = 1};
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

/* attn_output_gate (Qwen3.5's full-attention layers): the attention output
 * times sigmoid of the gate q_proj made, before o_proj; a kernel of its own in
 * the engines.  About 5 FLOP an element (exp, add, divide, multiply, and the
 * negation); the output and the gate read, the product written. */
static op_cost output_gate(double T, double width, double ab)
{
    op_cost op = make_op("attn_output_gate", OP_ELEMENTWISE, 1);
    op.flop = 5 * T * width;
    op.act_bytes = 3 * T * width * ab;
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

/* A residual add fused into the RMSNorm after it (fused_add_rmsnorm): the
 * add's FLOP and the norm's, the two inputs read, the new residual and the
 * normed copy written, the gain read: one kernel where apart there are two
 * and five passes over T x width. */
static op_cost residual_norm(const char *name, double T, double width, double ab)
{
    op_cost op = norm(name, 1, T, width, ab);
    op.flop += T * width;
    op.act_bytes = 4 * T * width * ab;
    return op;
}

/* The attention of one layer kind: every new token attends to `ctx` cached
 * positions (the whole context, or at most the window) and to the new tokens
 * up to itself. */
typedef struct {
    double B, n, ctx, heads_l, kvh_l, hd, kb, ab;
    int sinks;
    double window; /* 0: the whole context; else each query sees the last `window` positions, itself included */
} attention_view;

/* (query, key) pairs per sequence and head, and the positions whose K (or V)
 * the step reads: the new token at position ctx + i (i < n) sees ctx + i + 1
 * positions, or at most `window` of them. */
static void attention_span(double ctx, double n, double window, double *pairs, double *positions)
{
    const double lo = ctx + 1, hi = ctx + n; /* how many positions the first and the last query see */
    if (window <= 0 || hi <= window) {
        *pairs = ctx * n + n * (n + 1) / 2;
        *positions = ctx + n;
        return;
    }
    double below = lo <= window ? (window * (window + 1) - (lo - 1) * lo) / 2 : 0; /* queries not yet capped */
    double capped = hi - (lo > window ? lo - 1 : window);
    *pairs = below + capped * window;
    *positions = n + window - 1 < ctx + n ? n + window - 1 : ctx + n; /* the union of the queries' windows */
}

/* How a calibration prices one fused attention kernel that the cost model
 * counts as two ops (scores, values): decode (one new token) or prefill, over
 * a 16-bit or a one-byte cache; each half carries half the kernel's fixed
 * cost and half its work items, and in decode the positions each item reads
 * (rates.h). */
static void attention_rates(op_cost *score, op_cost *value, double n, double items, double positions, double kb)
{
    score->rate = value->rate =
        n == 1 ? rate_class_decode_attention(kb < 2 ? DT_FP8 : DT_BF16) : RC_ATTN_PREFILL;
    score->fixed_share = value->fixed_share = 0.5;
    score->items = value->items = items / 2;
    score->span = value->span = n == 1 ? positions : 0;
}

//> attention_op
/* Each query head reads the K (then V) of its KV group, so the FLOP per KV
 * byte is about the group size heads/kv_heads times the new tokens per
 * sequence, whatever the batch. */
static void gqa_attention(const attention_view *a, int per_layer, const char *score_name, const char *value_name,
                          op_cost *score, op_cost *value)
{
    const double B = a->B, n = a->n, ctx = a->ctx, heads_l = a->heads_l, kvh_l = a->kvh_l, hd = a->hd;
    const double T = B * n;
    double pairs, positions; /* (query, key) pairs per sequence and head; positions read */
    attention_span(ctx, n, a->window, &pairs, &positions);
    const double kv_read = B * positions * kvh_l * hd * a->kb; /* K or V of every attended position */
    const double kv_write = B * n * kvh_l * hd * a->kb;        /* the new tokens' K or V */
    *score = make_op(score_name, OP_ATTENTION, per_layer);
    score->flop = 2 * B * heads_l * hd * pairs + 5 * B * heads_l * pairs; /* QK^T, then softmax */
    if (a->sinks)
        score->flop += 5 * T * heads_l; /* the sink logit joins each softmax */
    score->kv_bytes = kv_read + kv_write;
    score->act_bytes = T * heads_l * hd * a->ab; /* Q */
    *value = make_op(value_name, OP_ATTENTION, per_layer);
    value->flop = 2 * B * heads_l * hd * pairs; /* P V */
    value->kv_bytes = kv_read + kv_write;
    value->act_bytes = T * heads_l * hd * a->ab; /* the attention output */
    /* work items: a sequence's KV head in decode; in prefill a head's 128-row tile of new tokens */
    attention_rates(score, value, n, n == 1 ? B * kvh_l : B * heads_l * ceil(n / 128), positions, a->kb);
}
//< attention_op

void attention_op_costs(double B, double ctx, double n, double heads_l, double kvh_l, double hd, dtype kv,
                        dtype act, op_cost out[2])
{
    attention_view a = {B, n, ctx, heads_l, kvh_l, hd, dtype_bytes(kv), dtype_bytes(act), 0, 0};
    gqa_attention(&a, 1, "attn_score", "attn_value", &out[0], &out[1]);
}

op_cost norm_op_cost(const char *name, double T, double width, dtype act)
{
    return norm(name, 0, T, width, dtype_bytes(act));
}

op_cost gemm_op_cost(double T, double in, double out, dtype weights, dtype compute, dtype act)
{
    op_cost op = projection("gemm", T, in, out, dtype_bytes(weights), dtype_bytes(act));
    op.rate = rate_class_gemm(weights, compute);
    return op;
}

//> mla_ops
/* One latent attention kernel (mla_kernel_op_costs in transformer.h), as two
 * op records, scores and values, that share one kernel's fixed cost.
 * Absorbed (decode, FlashMLA): every head scores against the cached latent
 * itself (kv_lora + rope per position) and sums latents; the latent is read
 * once, for scores and values both (counted on the scores).  Expanded
 * (prefill): kv_b has already made per-head K (nope + rope) and V
 * (v_head_dim), and the kernel is multi-head attention over them. */
void mla_kernel_op_costs(const mla_shape *k, op_cost out[2])
{
    const double B = k->batch, n = k->new_tokens, ctx = k->context, H = k->heads, T = B * n;
    const double kv = k->kv_lora, rope = k->rope, nope = k->nope, v = k->v_head;
    const double kb = dtype_bytes(k->kv), ab = dtype_bytes(k->act);
    const double pairs = ctx * n + n * (n + 1) / 2;
    const double latent = kv + rope; /* cached values per token per layer */
    op_cost score = make_op("attn_score", OP_ATTENTION, 1), value = make_op("attn_value", OP_ATTENTION, 1);
    if (k->absorbed) {
        score.flop = 2 * B * H * latent * pairs + 5 * B * H * pairs;
        score.kv_bytes = B * (ctx + n) * latent * kb; /* the latent, read once for scores and values */
        score.act_bytes = T * H * latent * ab;
        value.flop = 2 * B * H * kv * pairs;
        value.act_bytes = T * H * kv * ab;
        /* A sequence's heads (times its new tokens) are the rows of FlashMLA's 64-row query
         * tile: one work item per tile, each walking the sequence's cached positions. */
        score.rate = value.rate = rate_class_mla_decode(k->kv);
        score.items = value.items = B * ceil(n * H / 64) / 2;
        score.span = value.span = ctx + n;
    } else {
        const double P = B * (ctx + n); /* positions expanded to K and V */
        score.flop = 2 * B * H * (nope + rope) * pairs + 5 * B * H * pairs;
        score.act_bytes = T * H * (nope + rope) * ab + P * H * (nope + rope) * ab; /* Q, and K */
        value.flop = 2 * B * H * v * pairs;
        value.act_bytes = P * H * v * ab + T * H * v * ab; /* V, and the output */
        /* work items: one head's 128-row tile of new tokens, as in GQA prefill */
        score.rate = value.rate = RC_MLA_PREFILL;
        score.items = value.items = B * H * ceil(n / 128) / 2;
    }
    score.fixed_share = value.fixed_share = 0.5;
    out[0] = score;
    out[1] = value;
}

/* Multi-head latent attention (DeepSeek-V3).  The cache holds, per token and
 * layer, one latent kv_lora wide and one rope key qk_rope wide, shared by
 * every head.  Decode absorbs kv_b into the query and the output: each head
 * scores against the latent itself and sums latents, then maps the result
 * to v_head_dim; the latent is read once.  Prefill (logits_last) expands the
 * latent to per-head K and V with kv_b and attends as multi-head attention:
 * more FLOPs per position, fewer per query.  The kernel between is priced in
 * its own measured class (mla_decode, mla_prefill) at the bf16 peak
 * (pricing.c): two op records, one kernel. */
static int mla_attention(const model_spec *m, const step_shape *s, double wb, double kb, double ab, op_cost *out)
{
    const double tp = s->tp, B = s->batch, n = s->new_tokens, ctx = s->context, T = B * n;
    const double h = m->hidden, H_l = m->heads / tp;
    const double q = m->q_lora_rank, kv = m->kv_lora_rank, nope = m->qk_nope_dim, rope = m->qk_rope_dim,
                 v = m->v_head_dim;
    const double latent = kv + rope; /* cached values per token per layer */
    const int absorbed = !s->logits_last;
    /* Sparse attention: a decode query reads the top-k positions the indexer picks, not the whole
     * cache.  Prefill stays dense: SGLang runs prompts as dense attention over the expanded heads
     * (its dsa_context_module's kernel, dense_mha). */
    const double attended = absorbed ? dsa_attended_context(m, ctx, n) : ctx;
    const mla_shape k = {B, attended, n, H_l, kv, rope, nope, v, s->prec.kv, s->prec.act, absorbed};
    op_cost kernel[2];
    mla_kernel_op_costs(&k, kernel);
    int c = 0;
    /* q_a and kv_a are replicated on every GPU of the group (they are narrow); q_b, kv_b, o split by head */
    if (q > 0) {
        out[c++] = projection("q_a_proj", T, h, q, wb, ab);
        out[c++] = projection("q_b_proj", T, q, H_l * (nope + rope), wb, ab);
    } else {
        out[c++] = projection("q_proj", T, h, H_l * (nope + rope), wb, ab);
    }
    op_cost kv_a = projection("kv_a_proj", T, h, latent, wb, ab);
    kv_a.kv_bytes = T * latent * kb; /* the new tokens' latents written to the cache */
    out[c++] = kv_a;
    if (dsa_enabled(m)) { /* the indexer scores every cached key (replicated on each GPU of the group) */
        /* its scan: decode reads an fp8 cache as the latent kernel does; prefill is an fp8 GEMM of
         * queries against keys (DeepGEMM's fp8_mqa_logits) */
        const rate_class scan = absorbed ? rate_class_mla_decode(DT_FP8) : rate_class_gemm(DT_FP8, DT_FP8);
        c += dsa_indexer_ops(m, B, n, ctx, wb, ab, scan, out + c);
    }
    if (k.absorbed) { /* q_nope through W_UK, attention over the latent, then W_UV */
        op_cost uk = projection("q_absorb", T, nope, H_l * kv, wb, ab); /* per head nope -> kv_lora */
        uk.act_bytes = T * H_l * (nope + kv) * ab;
        out[c++] = uk;
        out[c++] = kernel[0];
        out[c++] = kernel[1];
        op_cost uv = projection("v_absorb", T, kv, H_l * v, wb, ab);
        uv.act_bytes = T * H_l * (kv + v) * ab;
        out[c++] = uv;
    } else { /* expand every attended latent to per-head K (nope) and V, then attend */
        const double P = B * (ctx + n); /* positions expanded */
        op_cost kv_b = projection("kv_b_proj", P, kv, H_l * (nope + v), wb, ab);
        kv_b.kv_bytes = P * latent * kb; /* the cached latents read */
        out[c++] = kv_b;
        out[c++] = kernel[0];
        out[c++] = kernel[1];
    }
    out[c++] = projection("o_proj", T, H_l * v, h, wb, ab);
    return c;
}
//< mla_ops

/* The MLP of one layer kind: T*k token-expert pairs through `width`-wide
 * experts (k = 1 for a dense MLP), with `weights_read` experts' weights read
 * at eb bytes each. */
int mlp_step_ops(const char *const names[3], int per_layer, double T, double k, double h, double width,
                 double weights_read, double eb, double ab, op_cost *out)
{
    op_cost gate_up = projection(names[0], T * k, h, 2 * width, eb, ab);
    gate_up.per_layer = per_layer;
    gate_up.weight_bytes = weights_read * h * 2 * width * eb;
    op_cost act = make_op(names[1], OP_ELEMENTWISE, per_layer); /* SiLU(gate) * up */
    act.flop = 5 * T * k * width;
    act.act_bytes = 3 * T * k * width * ab;
    op_cost down = projection(names[2], T * k, width, h, eb, ab);
    down.per_layer = per_layer;
    down.weight_bytes = weights_read * width * h * eb;
    out[0] = gate_up;
    out[1] = act;
    out[2] = down;
    return 3;
}

//> moe_experts_op
op_cost moe_experts_op(int per_layer, double pairs, double touched, double h, double width, double eb, double ab,
                       rate_class c)
{
    static const char *const names[3] = {"gate_up_proj", "act_mul", "down_proj"};
    op_cost part[3];
    mlp_step_ops(names, per_layer, pairs, 1, h, width, touched, eb, ab, part);
    op_cost op = make_op("routed_experts", OP_PROJECTION, per_layer);
    for (int j = 0; j < 3; j++) { /* one kernel: the three records' work, counted as they count it */
        op.flop += part[j].flop;
        op.weight_bytes += part[j].weight_bytes;
        op.act_bytes += part[j].act_bytes;
    }
    op.rate = c;
    op.items = touched; /* each expert touched is a tile group the kernel sets up */
    return op;
}
//< moe_experts_op

int decoder_step_ops(const model_spec *m, const step_shape *s, op_cost *ops, int max_ops)
{
    char err[256];
    if (step_shape_check(m, s, err, sizeof err) != 0)
        return -1;
    const double tp = s->tp, B = s->batch, n = s->new_tokens, ctx = s->context;
    const double T = B * n; /* tokens in the step */
    const double h = m->hidden, hd = m->head_dim;
    const double wb = dense_weight_bytes(s->prec), kb = dtype_bytes(s->prec.kv), ab = dtype_bytes(s->prec.act);
    const double heads_l = m->heads / tp, kvh_l = kv_heads_local(m, s->tp);
    const double vocab_l = m->vocab / tp;
    projection_shape w[LAYER_PROJECTIONS];
    layer_projection_shapes(m, s->tp, w);
    const double ffn_l = w[3].in;
    const double E = m->experts, k = m->experts_active;
    const double experts_touched = moe_step_experts_touched(m, s, T);

    op_cost all[DECODER_MAX_OPS];
    int c = 0;
    /* Fused (s->fused_add_norm), each layer's two residual adds run inside
     * the norm that follows them: the attention's in the MLP's norm, the
     * MLP's in the next layer's input norm or, after the last layer, the
     * final one; only the first layer's input norm has no add before it. */
    const int fused = s->fused_add_norm;
    if (!fused)
        all[c++] = norm("attn_norm", 1, T, h, ab);
    if (m->kv_lora_rank > 0) {
        c += mla_attention(m, s, wb, kb, ab, all + c);
    } else {
        const int first = c; /* the full-attention layers' ops: only those layers have them beside linear ones */
        all[c++] = projection(w[0].name, T, w[0].in, w[0].out, wb, ab);
        attention_view a = {B, n, ctx, heads_l, kvh_l, hd, kb, ab, m->sinks, 0};
        op_cost score, value;
        if (m->window_layers > 0) { /* the windowed layers attend to at most `window` positions */
            attention_view aw = a;
            aw.window = m->window;
            gqa_attention(&aw, OP_WINDOW_LAYERS, "attn_score_window", "attn_value_window", &score, &value);
            all[c++] = score;
            all[c++] = value;
        }
        if (m->window_layers < m->layers) {
            gqa_attention(&a, m->window_layers > 0 ? OP_FULL_ATTN_LAYERS : OP_EVERY_LAYER, "attn_score",
                          "attn_value", &score, &value);
            all[c++] = score;
            all[c++] = value;
        }
        if (m->attn_gate)
            all[c++] = output_gate(T, heads_l * hd, ab);
        all[c++] = projection(w[1].name, T, w[1].in, w[1].out, wb, ab);
        if (m->linear_layers > 0) {
            for (int i = first; i < c; i++)
                all[i].per_layer = OP_FULL_ATTN_LAYERS;
            c += linear_attention_ops(m, B, n, s->tp, wb, ab, all + c);
        }
    }

    //> tp_collectives
    /* Row-parallel o_proj and down_proj leave partial sums of the residual
     * stream on every GPU: one all-reduce of T x hidden each. */
    const int comm = s->tp > 1 && !s->skip_comm;
    op_cost attn_ar = make_op("attn_allreduce", OP_ALLREDUCE, 1);
    attn_ar.comm_bytes = T * h * ab;
    //< tp_collectives
    if (comm)
        all[c++] = attn_ar;
    if (fused) {
        all[c++] = residual_norm("attn_residual_norm", T, h, ab);
    } else {
        all[c++] = residual("attn_residual", T, h, ab);
        all[c++] = norm("mlp_norm", 1, T, h, ab);
    }
    /* The MLP: k experts per token do the FLOPs; the experts touched are read,
     * and the shared experts (every token visits them) are read whole. */
    const int moe_kind = m->dense_layers > 0 ? OP_MOE_LAYERS : OP_EVERY_LAYER;
    if (E > 1) {
        op_cost router = projection("router", T, h, E, wb, ab);
        router.per_layer = moe_kind;
        all[c++] = router;
    }
    static const char *const mlp_names[3] = {"gate_up_proj", "act_mul", "down_proj"};
    static const char *const shared_names[3] = {"shared_gate_up_proj", "shared_act_mul", "shared_down_proj"};
    const double eb = E > 1 ? routed_weight_bytes(m, s->prec) : wb;
    const double S = m->shared_experts;
    int routed = -1;
    if (E > 1) { /* the shared experts every token visits (dense weights), then the routed ones' grouped GEMM */
        if (S > 0)
            c += mlp_step_ops(shared_names, moe_kind, T, S, h, ffn_l, S, wb, ab, all + c);
        routed = c;
        all[c++] = moe_experts_op(moe_kind, T * k, experts_touched, h, ffn_l, eb, ab, RC_GEMM_BF16);
    } else {
        c += mlp_step_ops(mlp_names, moe_kind, T, 1, h, ffn_l, 1, wb, ab, all + c);
    }
    if (m->dense_layers > 0) {
        static const char *const dense_names[3] = {"dense_gate_up_proj", "dense_act_mul", "dense_down_proj"};
        c += mlp_step_ops(dense_names, OP_DENSE_LAYERS, T, 1, h, (double)(m->ffn / s->tp), 1, wb, ab, all + c);
    }
    if (comm) {
        op_cost mlp_ar = attn_ar;
        mlp_ar.name = "mlp_allreduce";
        all[c++] = mlp_ar;
    }
    all[c++] = fused ? residual_norm("mlp_residual_norm", T, h, ab) : residual("mlp_residual", T, h, ab);

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
    all[c++] = fused ? norm("input_norm", 0, T, h, ab) : norm("final_norm", 0, T, h, ab);
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

    /* fp4 is a GEMM's math only (weight_format.h): nvfp4 projections run in
     * fp4 beside attention in the step's compute dtype */
    const int fp4 = weight_format_math(s->prec.weights_format) == DT_FP4;
    const rate_class gemm = fp4 ? rate_class_gemm(s->prec.weights, DT_FP4) : dense_rate_class(s->prec);
    for (int i = 0; i < c; i++)
        if (all[i].kind == OP_PROJECTION || all[i].kind == OP_LOGITS) {
            all[i].rate = gemm;
            if (fp4)
                all[i].math = OP_MATH_FP4;
        }
    if (routed >= 0) { /* the experts' own class, and their own math when their format states it */
        all[routed].rate = routed_rate_class(m, s->prec);
        all[routed].math = weight_format_op_math(s->prec.moe_format);
    }
    int count = c < max_ops ? c : max_ops;
    for (int i = 0; i < count; i++)
        ops[i] = all[i];
    return count;
}

int op_repeats(const model_spec *m, const op_cost *op)
{
    switch (op->per_layer) {
    case OP_ONCE:
        return 1;
    case OP_FULL_ATTN_LAYERS:
        return m->layers > m->window_layers + m->linear_layers ? m->layers - m->window_layers - m->linear_layers : 0;
    case OP_LINEAR_LAYERS:
        return m->linear_layers;
    case OP_WINDOW_LAYERS:
        return m->window_layers;
    case OP_MOE_LAYERS:
        return model_moe_layers(m);
    case OP_DENSE_LAYERS:
        return m->layers - model_moe_layers(m);
    default:
        return m->layers;
    }
}

double moe_experts_touched(const model_spec *m, double tokens)
{
    double E = m->experts, k = m->experts_active;
    return E > 1 ? E * (1 - pow(1 - k / E, tokens)) : 1;
}

double moe_step_experts_touched(const model_spec *m, const step_shape *s, double tokens)
{
    if (m->experts <= 1 || !(s->routing_skew > 0))
        return moe_experts_touched(m, tokens);
    return moe_zipf_touched(m->experts, m->experts_active, s->routing_skew, tokens);
}
