#include "memory.h"

#include "linear_attention.h"
#include "mtp.h"
#include "sparse_attention.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

double weight_bytes_at(const model_spec *m, precision prec)
{
    param_count p = model_params(m);
    const double dense = dense_weight_bytes(prec), routed = routed_weight_bytes(m, prec);
    if (routed == dense) /* one format throughout */
        return p.total * dense;
    return (p.total - p.routed) * dense + p.routed * routed;
}

double weight_bytes(const model_spec *m, dtype w)
{
    return weight_bytes_at(m, precision_uniform(w));
}

double weight_bytes_per_gpu_at(const model_spec *m, precision prec, int tp)
{
    return weight_bytes_at(m, prec) / tp;
}

double weight_bytes_per_gpu(const model_spec *m, dtype w, int tp)
{
    return weight_bytes(m, w) / tp;
}

double mtp_weight_bytes_per_gpu_at(const model_spec *m, precision prec, int tp)
{
    if (m->mtp_layers < 1)
        return 0;
    const model_spec mm = mtp_module_model(m, m->mtp_layers);
    const double routed = model_params(&mm).routed; /* the modules' routed experts, stored as the model's are */
    const double served = model_params(m).mtp_served;
    return ((served - routed) * dense_weight_bytes(prec) + routed * routed_weight_bytes(m, prec)) / tp;
}

double mtp_weight_bytes_per_gpu(const model_spec *m, dtype w, int tp)
{
    return mtp_weight_bytes_per_gpu_at(m, precision_uniform(w), tp);
}

double mtp_kv_bytes_per_token_per_gpu(const model_spec *m, dtype kv, int tp)
{
    if (m->mtp_layers < 1)
        return 0;
    const model_spec mm = mtp_module_model(m, m->mtp_layers);
    return kv_bytes_per_token_per_gpu(&mm, kv, tp);
}

double layout_weight_bytes_per_gpu_at(const model_spec *m, precision prec, const parallel_layout *l)
{
    param_count p = model_params(m);
    double routed = p.routed * routed_weight_bytes(m, prec);
    double shared = model_moe_layers(m) * m->shared_experts * 3.0 * m->hidden *
                    (m->moe_ffn > 0 ? m->moe_ffn : m->ffn) * dense_weight_bytes(prec);
    if (m->experts <= 1) /* dense: no experts, the MLP is split with the rest */
        routed = shared = 0;
    return (weight_bytes_at(m, prec) - routed - shared) / l->tp + shared / l->moe_tp +
           routed / ((double)l->moe_tp * l->moe_ep);
}

double layout_weight_bytes_per_gpu(const model_spec *m, dtype w, const parallel_layout *l)
{
    return layout_weight_bytes_per_gpu_at(m, precision_uniform(w), l);
}

int layout_fit_adjust(const model_spec *m, precision prec, const parallel_layout *l, int batch, int context,
                      fit_check *f, char *err, size_t errlen)
{
    if (l->tp < 1 || l->moe_tp < 1 || l->moe_ep < 1 || (m->experts > 1 && m->experts % l->moe_ep != 0)) {
        snprintf(err, errlen, "the layout (tp %d, moe-tp %d, moe-ep %d) does not split %s's %d routed experts",
                 l->tp, l->moe_tp, l->moe_ep, m->key, m->experts);
        return -1;
    }
    const double freed = weight_bytes_per_gpu_at(m, prec, l->tp) - layout_weight_bytes_per_gpu_at(m, prec, l);
    f->weights -= freed;
    f->kv_budget += freed;
    double per_seq = kv_sequence_bytes(f->kv_per_token, kv_window_bytes_per_token_per_gpu(m, prec.kv, l->tp),
                                       m->window, context) +
                     state_bytes_per_sequence_per_gpu(m, l->tp);
    if (f->kv_budget <= 0)
        f->max_batch = 0;
    else if (context == 0 || !(per_seq > 0))
        f->max_batch = INT_MAX;
    else {
        double seqs = floor(f->kv_budget / per_seq);
        f->max_batch = seqs > INT_MAX ? INT_MAX : (int)seqs;
    }
    f->fits = f->kv_budget > 0 && batch <= f->max_batch;
    return 0;
}

//> kv_bytes_per_token
double kv_bytes_per_token(const model_spec *m, dtype kv)
{
    if (m->kv_lora_rank > 0) /* MLA: one latent and one rope key per layer, shared by every head; sparse
                                attention's indexer key beside it (its own fp8 format, whatever kv is) */
        return (double)m->layers * ((m->kv_lora_rank + m->qk_rope_dim) * dtype_bytes(kv) +
                                    dsa_key_bytes_per_token_layer(m));
    /* K and V, every softmax-attention layer (linear layers keep a state instead: linear_attention.h),
     * every KV head (not attention head: GQA) */
    return 2.0 * (m->layers - m->linear_layers) * m->kv_heads * m->head_dim * dtype_bytes(kv);
}
//< kv_bytes_per_token

double kv_bytes_per_token_per_gpu(const model_spec *m, dtype kv, int tp)
{
    if (m->kv_lora_rank > 0) /* every GPU of the group keeps the whole latent (its heads all read it) */
        return kv_bytes_per_token(m, kv);
    double heads_here = m->kv_heads >= tp ? (double)m->kv_heads / tp : 1.0; /* replicated past kv_heads */
    return 2.0 * (m->layers - m->linear_layers) * heads_here * m->head_dim * dtype_bytes(kv);
}

//> state_per_sequence
double state_bytes_per_sequence_per_gpu(const model_spec *m, int tp)
{
    /* the recurrent state at the config's state dtype, the convolution's inputs at the model's bf16
     * (SGLang's mamba pool: ssm state at mamba_ssm_dtype, conv state at the model dtype) */
    return linear_state_bytes_per_sequence(m, dtype_bytes(DT_BF16), tp);
}
//< state_per_sequence

double kv_window_bytes_per_token_per_gpu(const model_spec *m, dtype kv, int tp)
{
    return m->window_layers > 0 ? kv_bytes_per_token_per_gpu(m, kv, tp) * m->window_layers / m->layers : 0;
}

//> kv_sequence_bytes
double kv_sequence_bytes(double per_token, double window_per_token, int window, int context)
{
    /* the windowed layers stop growing at `window` tokens */
    double beyond = context > window ? (double)context - window : 0;
    return per_token * context - window_per_token * beyond;
}
//< kv_sequence_bytes

double kv_bytes_per_sequence(const model_spec *m, dtype kv, int context)
{
    return kv_sequence_bytes(kv_bytes_per_token(m, kv), kv_window_bytes_per_token_per_gpu(m, kv, 1), m->window,
                             context) +
           state_bytes_per_sequence_per_gpu(m, 1);
}

//> activation_bytes
double activation_bytes(const model_spec *m, int tokens, int sampled, dtype act, int tp)
{
    double T = tokens, S = sampled < tokens ? sampled : tokens, ab = dtype_bytes(act);
    double kvh_l = m->kv_heads >= tp ? (double)m->kv_heads / tp : 1.0;
    double q_width = (double)m->heads / tp * m->head_dim;
    double per_token = 2.0 * m->hidden                         /* residual stream and its normed copy */
                       + q_width + 2 * kvh_l * m->head_dim     /* q, k, v */
                       + q_width                               /* attention output */
                       + 3.0 * m->ffn / tp * m->experts_active; /* gate, up, activated */
    if (m->moe_ffn > 0 || m->shared_experts > 0) /* experts narrower than ffn, and the shared ones */
        per_token += 3.0 * ((m->moe_ffn > 0 ? m->moe_ffn : m->ffn) * (double)(m->experts_active + m->shared_experts) -
                            (double)m->ffn * m->experts_active) / tp;
    /* fp32 logits of the sampled positions, and the sampler's fp32 probabilities */
    return T * per_token * ab + 2.0 * S * ((double)m->vocab / tp) * 4.0;
}
//< activation_bytes

memory_policy memory_policy_default(void)
{
    /* vLLM's defaults: gpu_memory_utilization 0.9, 8192 batched tokens, 256 sequences */
    memory_policy p = {0.90, 8192, 256, 0};
    return p;
}

double policy_capacity(const memory_policy *p, const gpu_spec *g)
{
    return p->capacity > 0 ? p->capacity : g->mem_bytes;
}

static int policy_check(const memory_policy *pol, char *err, size_t errlen)
{
    if (!(pol->usable_fraction > 0 && pol->usable_fraction <= 1) || pol->activation_tokens < 0 ||
        pol->sampled_tokens < 0 || !(pol->capacity >= 0 && isfinite(pol->capacity))) {
        snprintf(err, errlen, "usable fraction must be in (0, 1], activation and sampled tokens not negative, "
                              "capacity not negative");
        return -1;
    }
    return 0;
}

int replica_memory_plan(const model_spec *m, const gpu_spec *g, precision prec, int tp, memory_policy pol,
                        replica_memory *out, char *err, size_t errlen)
{
    step_shape probe = decode_shape(1, 0, tp, prec);
    if (step_shape_check(m, &probe, err, errlen) != 0)
        return -1;
    resident_model rm = {m, prec, tp};
    fit_check f;
    if (memory_fit(g, pol, &rm, 1, 0, 1, 1, &f, err, errlen) != 0)
        return -1;
    replica_memory r;
    r.hbm = f.capacity;
    r.usable = f.usable;
    r.weights = f.weights;
    r.activations = f.activations;
    r.kv_budget = f.kv_budget;
    r.kv_per_token = f.kv_per_token;
    r.kv_window_per_token = kv_window_bytes_per_token_per_gpu(m, prec.kv, tp);
    r.window = m->window;
    r.state_per_sequence = state_bytes_per_sequence_per_gpu(m, tp);
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
    double seqs = floor(r->kv_budget / (kv_sequence_bytes(r->kv_per_token, r->kv_window_per_token, r->window, context) +
                                        r->state_per_sequence));
    return seqs > INT_MAX ? INT_MAX : (int)seqs;
}
//< max_batch

double kv_token_capacity(const replica_memory *r)
{
    return r->kv_budget > 0 ? floor(r->kv_budget / r->kv_per_token) : 0;
}

int memory_policy_engine(const char *engine, const gpu_spec *g, const resident_model *rm, memory_policy *out)
{
    memory_policy p = memory_policy_default();
    *out = p;
    const double cap = policy_capacity(&p, g);
    if (!engine || !(cap > 0))
        return -1;
    if (strcmp(engine, "vllm") == 0)
        return 0; /* the default is vLLM's */
    if (strcmp(engine, "sglang") == 0) {
        /* the reserve outside mem_fraction_static holds activations and CUDA graphs */
        const double gib = 1073741824.0;
        double reserved = (cap < 90 * gib ? 9.5 : 12.0) + rm->tp / 2.0;
        out->usable_fraction = 1 - reserved * gib / cap;
        out->activation_tokens = out->sampled_tokens = 0;
        return out->usable_fraction > 0 ? 0 : -1;
    }
    if (strcmp(engine, "trtllm") == 0) {
        double held = weight_bytes_per_gpu_at(rm->model, rm->prec, rm->tp) +
                      activation_bytes(rm->model, p.activation_tokens, p.sampled_tokens, rm->prec.act, rm->tp);
        out->usable_fraction = fmin(1.0, 0.9 + 0.1 * held / cap);
        return 0;
    }
    return -1;
}

//> memory_fit
/* The budget, the KV the batch needs, the largest batch and the verdict
 * of a fit whose weights, reserve, extra, KV per token and linear-attention
 * state per sequence are set; window_saving: the KV bytes per sequence the
 * windows spare at context. */
static void fit_verdict(fit_check *f, int batch, int context, double window_saving)
{
    f->kv_budget = f->usable - f->weights - f->activations - f->extra;
    const double seq_bytes = context * f->kv_per_token - window_saving + f->state_per_sequence;
    const int per_seq = window_saving > 0 || f->state_per_sequence > 0;
    f->kv_needed = per_seq ? batch * seq_bytes : (double)batch * context * f->kv_per_token;
    if (f->kv_budget <= 0)
        f->max_batch = 0;
    else if (context == 0 && !(f->state_per_sequence > 0))
        f->max_batch = INT_MAX;
    else {
        double seqs = floor(f->kv_budget / (per_seq ? seq_bytes : f->kv_per_token * context));
        f->max_batch = seqs > INT_MAX ? INT_MAX : (int)seqs;
    }
    f->fits = f->kv_budget > 0 && batch <= f->max_batch;
}

int memory_fit(const gpu_spec *g, memory_policy pol, const resident_model *rm, int n, double extra_bytes,
               int batch, int context, fit_check *out, char *err, size_t errlen)
{
    if (n < 1 || !(extra_bytes >= 0) || batch < 0 || context < 0) {
        snprintf(err, errlen, "a fit check needs a resident model, and extra bytes, batch and context not negative");
        return -1;
    }
    if (policy_check(&pol, err, errlen) != 0)
        return -1;
    fit_check f = {0};
    double window_saving = 0; /* KV bytes per sequence the windows spare at this context */
    f.capacity = policy_capacity(&pol, g);
    f.usable = f.capacity * pol.usable_fraction;
    f.extra = extra_bytes;
    for (int i = 0; i < n; i++) {
        step_shape probe = decode_shape(1, 0, rm[i].tp, rm[i].prec);
        if (step_shape_check(rm[i].model, &probe, err, errlen) != 0)
            return -1;
        f.weights += weight_bytes_per_gpu_at(rm[i].model, rm[i].prec, rm[i].tp);
        f.kv_per_token += kv_bytes_per_token_per_gpu(rm[i].model, rm[i].prec.kv, rm[i].tp);
        f.state_per_sequence += state_bytes_per_sequence_per_gpu(rm[i].model, rm[i].tp);
        const model_spec *mi = rm[i].model; /* windowed layers hold at most `window` tokens */
        window_saving += kv_window_bytes_per_token_per_gpu(mi, rm[i].prec.kv, rm[i].tp) *
                         (context > mi->window ? (double)context - mi->window : 0);
        /* the models run one after another, so one reserve, sized for the largest */
        double a = activation_bytes(rm[i].model, pol.activation_tokens, pol.sampled_tokens, rm[i].prec.act,
                                    rm[i].tp);
        if (a > f.activations)
            f.activations = a;
    }
    fit_verdict(&f, batch, context, window_saving);
    *out = f;
    return 0;
}
//< memory_fit

int mtp_fit_adjust(const resident_model *rm, int batch, int context, fit_check *f, char *err, size_t errlen)
{
    const model_spec *m = rm->model;
    if (m->mtp_layers < 1) {
        snprintf(err, errlen, "%s ships no multi-token-prediction module", m->key);
        return -1;
    }
    f->weights += mtp_weight_bytes_per_gpu_at(m, rm->prec, rm->tp);
    f->kv_per_token += mtp_kv_bytes_per_token_per_gpu(m, rm->prec.kv, rm->tp); /* the modules keep no window */
    const double window_saving =
        kv_window_bytes_per_token_per_gpu(m, rm->prec.kv, rm->tp) * (context > m->window ? (double)context - m->window : 0);
    fit_verdict(f, batch, context, window_saving);
    return 0;
}

void fit_check_describe(const fit_check *f, int batch, int context, char *buf, size_t n)
{
    if (f->kv_budget <= 0)
        snprintf(buf, n,
                 "the weights (%.1f GB), activation reserve (%.1f GB) and other allocations (%.1f GB) per GPU "
                 "exceed the usable %.1f GB, so no batch fits",
                 f->weights / GB, f->activations / GB, f->extra / GB, f->usable / GB);
    else if (f->max_batch == 0)
        snprintf(buf, n, "not one sequence of %d tokens fits the %.1f GB left for KV per GPU", context,
                 f->kv_budget / GB);
    else
        snprintf(buf, n,
                 "batch %d of %d tokens needs %.1f GB of KV per GPU; %.1f GB are left, so the largest batch "
                 "that fits is %d",
                 batch, context, f->kv_needed / GB, f->kv_budget / GB, f->max_batch);
}
