#include "sparse_attention.h"

#include <math.h>

/* SGLang's index cache quantizes each key in blocks of 128 values, one fp32 scale a block */
#define DSA_SCALE_BLOCK 128.0

int dsa_enabled(const model_spec *m)
{
    return m->dsa_heads > 0 && m->dsa_dim > 0 && m->dsa_topk > 0;
}

//> dsa_key_bytes
double dsa_key_bytes_per_token_layer(const model_spec *m)
{
    if (!dsa_enabled(m))
        return 0;
    return m->dsa_dim * 1.0 + ceil(m->dsa_dim / DSA_SCALE_BLOCK) * 4.0; /* fp8 values, fp32 scales */
}
//< dsa_key_bytes

double dsa_params_per_layer(const model_spec *m)
{
    if (!dsa_enabled(m))
        return 0;
    const double q = m->q_lora_rank > 0 ? m->q_lora_rank : m->hidden, h = m->hidden;
    const double H = m->dsa_heads, D = m->dsa_dim;
    return q * H * D /* wq_b */ + h * D /* wk */ + 2 * D /* k_norm */ + h * H /* weights_proj */;
}

double dsa_attended_context(const model_spec *m, double context, double new_tokens)
{
    if (!dsa_enabled(m))
        return context;
    /* the last new token sees context + new_tokens positions; past the top-k it reads k of them */
    const double cap = m->dsa_topk - new_tokens;
    return context > cap ? (cap > 0 ? cap : 0) : context;
}

static op_cost dsa_projection(const char *name, double T, double in, double out, double wb, double ab)
{
    op_cost op = {.name = name, .kind = OP_PROJECTION, .per_layer = OP_EVERY_LAYER, .rate = RC_GEMM_BF16, .fixed_share = 1};
    op.flop = 2 * T * in * out;
    op.weight_bytes = in * out * wb;
    op.act_bytes = T * (in + out) * ab;
    return op;
}

//> dsa_indexer_scan
op_cost dsa_indexer_scan_op(const model_spec *m, double B, double n, double ctx, rate_class scan_class)
{
    op_cost op = {.name = "dsa_indexer", .kind = OP_ATTENTION, .per_layer = OP_EVERY_LAYER, .rate = scan_class,
                  .fixed_share = 1};
    const double H = m->dsa_heads, D = m->dsa_dim, T = B * n;
    const double pairs = ctx * n + n * (n + 1) / 2; /* (query, key) pairs scored, causal */
    /* per pair and head: a D-long dot product (2 D), the ReLU and the weighted sum (2) */
    op.flop = pairs * B * H * (2 * D + 2);
    /* every cached key read once per sequence (fp8 values and scales), the queries in fp8 */
    op.kv_bytes = B * (ctx + n) * dsa_key_bytes_per_token_layer(m);
    /* each score written as fp32 and read back by the top-k pick; the picked indices written (int32) */
    op.act_bytes = T * H * D + 2 * 4 * B * pairs + T * m->dsa_topk * 4;
    /* one work item per query row: its scores are picked by one block, so a long row is a serial tail */
    op.items = T;
    op.span = ctx + n;
    return op;
}
//< dsa_indexer_scan

int dsa_indexer_ops(const model_spec *m, double B, double n, double ctx, double wb, double ab, rate_class scan_class,
                    op_cost *out)
{
    const double T = B * n, h = m->hidden, H = m->dsa_heads, D = m->dsa_dim;
    const double q = m->q_lora_rank > 0 ? m->q_lora_rank : h; /* wq_b reads the query's latent */
    int c = 0;
    out[c++] = dsa_projection("index_q_proj", T, q, H * D, wb, ab);
    op_cost k = dsa_projection("index_k_proj", T, h, D, wb, ab);
    k.kv_bytes = T * dsa_key_bytes_per_token_layer(m); /* the new tokens' keys written to the index cache */
    out[c++] = k;
    out[c++] = dsa_projection("index_weights_proj", T, h, H, wb, ab);
    out[c++] = dsa_indexer_scan_op(m, B, n, ctx, scan_class);
    return c;
}
