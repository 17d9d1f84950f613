#include "memory.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>

double weight_bytes(const model_spec *m, dtype w)
{
    return model_params(m).total * dtype_bytes(w);
}

double weight_bytes_per_gpu(const model_spec *m, dtype w, int tp)
{
    return weight_bytes(m, w) / tp;
}

//> kv_bytes_per_token
double kv_bytes_per_token(const model_spec *m, dtype kv)
{
    /* K and V, every layer, every KV head (not attention head: GQA) */
    return 2.0 * m->layers * m->kv_heads * m->head_dim * dtype_bytes(kv);
}
//< kv_bytes_per_token

double kv_bytes_per_token_per_gpu(const model_spec *m, dtype kv, int tp)
{
    double heads_here = m->kv_heads >= tp ? (double)m->kv_heads / tp : 1.0; /* replicated past kv_heads */
    return 2.0 * m->layers * heads_here * m->head_dim * dtype_bytes(kv);
}

double kv_bytes_per_sequence(const model_spec *m, dtype kv, int context)
{
    return kv_bytes_per_token(m, kv) * context;
}

double activation_bytes(const model_spec *m, int tokens, dtype act, int tp)
{
    double T = tokens, ab = dtype_bytes(act);
    double kvh_l = m->kv_heads >= tp ? (double)m->kv_heads / tp : 1.0;
    double q_width = (double)m->heads / tp * m->head_dim;
    double per_token = 2.0 * m->hidden                         /* residual stream and its normed copy */
                       + q_width + 2 * kvh_l * m->head_dim     /* q, k, v */
                       + q_width                               /* attention output */
                       + 3.0 * m->ffn / tp * m->experts_active; /* gate, up, activated */
    return T * per_token * ab + T * ((double)m->vocab / tp) * 4.0; /* fp32 logits */
}

memory_policy memory_policy_default(void)
{
    memory_policy p = {0.90, 8192};
    return p;
}

int replica_memory_plan(const model_spec *m, const gpu_spec *g, precision prec, int tp, memory_policy pol,
                        replica_memory *out, char *err, size_t errlen)
{
    step_shape probe = {1, 0, 1, tp, prec};
    if (step_shape_check(m, &probe, err, errlen) != 0)
        return -1;
    if (!(pol.usable_fraction > 0 && pol.usable_fraction <= 1) || pol.activation_tokens < 0) {
        snprintf(err, errlen, "usable fraction must be in (0, 1] and activation tokens not negative");
        return -1;
    }
    replica_memory r;
    r.hbm = g->mem_bytes;
    r.usable = g->mem_bytes * pol.usable_fraction;
    r.weights = weight_bytes_per_gpu(m, prec.weights, tp);
    r.activations = activation_bytes(m, pol.activation_tokens, prec.act, tp);
    r.kv_budget = r.usable - r.weights - r.activations;
    r.kv_per_token = kv_bytes_per_token_per_gpu(m, prec.kv, tp);
    *out = r;
    if (r.kv_budget <= 0) {
        snprintf(err, errlen,
                 "%s does not fit on %s at tp %d: weights %.1f GB and activation reserve %.1f GB per GPU "
                 "exceed the usable %.1f GB; try a larger tensor-parallel degree",
                 m->key, g->key, tp, r.weights / GB, r.activations / GB, r.usable / GB);
        return -1;
    }
    return 0;
}

//> max_batch
int max_batch_for_memory(const replica_memory *r, int context)
{
    if (r->kv_budget <= 0 || context <= 0)
        return 0;
    double seqs = floor(r->kv_budget / (r->kv_per_token * context));
    return seqs > INT_MAX ? INT_MAX : (int)seqs;
}
//< max_batch

double kv_token_capacity(const replica_memory *r)
{
    return r->kv_budget > 0 ? floor(r->kv_budget / r->kv_per_token) : 0;
}
