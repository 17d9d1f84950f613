#include "expert_parallel.h"

#include "comm.h"
#include "moe.h"
#include "pricing.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>

double ep_alltoall_bytes(double tokens, int k, int hidden, int ep, double imbalance, double bytes_per_value)
{
    /* pairs leaving this GPU: k per token, all but the 1/ep that stay home */
    return tokens * k * (ep - 1.0) / ep * imbalance * hidden * bytes_per_value;
}

double ep_alltoall_merged_bytes(const model_spec *m, double tokens, int ep, double imbalance,
                                double bytes_per_value)
{
    return moe_alltoall_bytes(tokens, m->experts, m->experts_active, m->hidden, ep, bytes_per_value) * imbalance;
}

/* One all-to-all of expert parallelism, a dispatch or a combine, as the op
 * price_op prices: `tokens` tokens and `bytes` sent by this GPU, intra_share
 * of them over NVLink inside the node, the rest over the network at
 * l->net_bw; the kernel the layout's phase runs. */
static op_cost ep_alltoall_op(const char *name, int per_layer, double tokens, double bytes, double intra_share,
                              const ep_layout *l)
{
    op_cost op = {.name = name,
                  .kind = OP_ALLTOALL,
                  .per_layer = per_layer,
                  .comm_bytes = bytes,
                  .fixed_share = 1,
                  .items = tokens,
                  .comm_intra_share = intra_share,
                  .comm_net_bw = l->net_bw,
                  .comm_ranks = l->ep,
                  .a2a_kernel = a2a_kernel_of(l->prefill, strcmp(name, "ep_combine") == 0)};
    return op;
}

//> ep_step_cost
int ep_step_cost(const model_spec *m, const gpu_spec *g, const ep_layout *l, double tokens, ep_cost *out,
                 char *err, size_t errlen)
{
    const char *why = NULL;
    if (m->experts <= 1)
        why = "expert parallelism needs a mixture of experts";
    else if (l->ep < 1 || m->experts % l->ep != 0)
        why = "the expert-parallel degree must divide the routed experts";
    else if (!(l->imbalance >= 1) || !(tokens >= 0) || l->gpus_per_node < 1 || !(l->dispatch_bytes_per_value > 0) ||
             !(l->combine_bytes_per_value > 0))
        why = "imbalance must be at least 1, tokens not negative, GPUs per node and bytes per value positive";
    else if (l->ep > 1 && !gpu_has_links(g))
        why = "the GPU row has no link bandwidth or collective latency";
    else if (l->ep > l->gpus_per_node && !(l->net_bw > 0))
        why = "an expert-parallel group across nodes needs the network bandwidth per GPU";
    if (why) {
        snprintf(err, errlen, "%s (%s, ep %d)", why, m->key, l->ep);
        return -1;
    }
    ep_cost c = {0};
    const double ep = l->ep, k = m->experts_active;
    c.experts_per_gpu = m->experts / ep;
    c.pairs_sent = tokens * k * (ep - 1) / ep * l->imbalance;
    c.dispatch_bytes = ep_alltoall_merged_bytes(m, tokens, l->ep, l->imbalance, l->dispatch_bytes_per_value);
    c.combine_bytes = ep_alltoall_merged_bytes(m, tokens, l->ep, l->imbalance, l->combine_bytes_per_value);
    const double in_node = ep < l->gpus_per_node ? ep : l->gpus_per_node;
    c.intra_share = ep > 1 ? (in_node - 1) / (ep - 1) : 1;
    if (ep > 1) {
        op_cost dispatch = ep_alltoall_op("ep_dispatch", OP_ONCE, tokens, c.dispatch_bytes, c.intra_share, l);
        op_cost combine = ep_alltoall_op("ep_combine", OP_ONCE, tokens, c.combine_bytes, c.intra_share, l);
        c.dispatch_time = price_op(&dispatch, g, 0, 1, NULL);
        c.combine_time = price_op(&combine, g, 0, 1, NULL);
    }
    c.layer_time = c.dispatch_time + c.combine_time;
    c.step_time = c.layer_time * model_moe_layers(m);
    *out = c;
    return 0;
}
//< ep_step_cost

int ep_busiest_gpu(const model_spec *m, const ep_layout *l, double group_tokens, double *imbalance,
                   double *touched, char *err, size_t errlen)
{
    *imbalance = l->imbalance;
    *touched = moe_experts_touched(m, group_tokens) / l->ep;
    if (!(l->routing_skew > 0))
        return 0;
    double load;
    if (!isfinite(l->routing_skew) ||
        moe_zipf_hot_rank(m->experts, m->experts_active, l->routing_skew, l->ep, group_tokens, &load, touched) != 0) {
        snprintf(err, errlen, "routing skew %g over %d experts on %d GPUs: no skewed router", l->routing_skew,
                 m->experts, l->ep);
        return -1;
    }
    if (load > *imbalance)
        *imbalance = load;
    return 0;
}

//> ep_decoder_step_ops
int ep_decoder_step_ops(const model_spec *m, const gpu_spec *g, const step_shape *s, const ep_layout *l,
                        op_cost *ops, int max_ops, char *err, size_t errlen)
{
    if (step_shape_check(m, s, err, errlen) != 0)
        return -1;
    if (l->ep < 1 || l->ep % s->tp != 0) {
        snprintf(err, errlen, "the tensor-parallel degree %d must divide the expert-parallel degree %d", s->tp,
                 l->ep);
        return -1;
    }
    const double T = (double)s->batch * s->new_tokens / s->tp; /* tokens this GPU dispatches */
    ep_layout busy = *l;
    busy.prefill = s->new_tokens > 1; /* many new tokens a sequence: the prefill kernels */
    double touched;
    if (ep_busiest_gpu(m, l, T * l->ep, &busy.imbalance, &touched, err, errlen) != 0)
        return -1;
    ep_cost a2a;
    if (ep_step_cost(m, g, &busy, T, &a2a, err, errlen) != 0)
        return -1;
    op_cost all[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, s, all, DECODER_MAX_OPS);
    const double h = m->hidden, fe = m->moe_ffn > 0 ? m->moe_ffn : m->ffn, S = m->shared_experts;
    const double ab = dtype_bytes(s->prec.act), eb = expert_weight_bytes(m, s->prec.weights);
    const double k_here = m->experts_active * busy.imbalance + S; /* pairs per local token */
    int c = 0;
    for (int i = 0; i < n && c < max_ops; i++) {
        if (strcmp(all[i].name, "gate_up_proj") == 0) { /* the three expert ops, replaced together */
            static const char *const names[3] = {"gate_up_proj", "act_mul", "down_proj"};
            op_cost mlp[3];
            mlp_step_ops(names, all[i].per_layer, T, k_here, h, fe, touched + S, eb, ab, mlp);
            for (int j = 0; j < 3; j++) /* priced like the step's other projections (pricing.h) */
                if (mlp[j].kind == OP_PROJECTION)
                    mlp[j].rate = all[i].rate;
            op_cost dispatch =
                ep_alltoall_op("ep_dispatch", all[i].per_layer, T, a2a.dispatch_bytes, a2a.intra_share, &busy);
            op_cost combine =
                ep_alltoall_op("ep_combine", all[i].per_layer, T, a2a.combine_bytes, a2a.intra_share, &busy);
            const op_cost seq[5] = {dispatch, mlp[0], mlp[1], mlp[2], combine};
            for (int j = 0; j < 5 && c < max_ops; j++)
                ops[c++] = seq[j];
            i += 2; /* act_mul and down_proj follow gate_up_proj */
            continue;
        }
        if (strcmp(all[i].name, "mlp_allreduce") == 0) { /* the experts' outputs come back by the combine */
            if (m->dense_layers == 0)
                continue;
            all[i].per_layer = OP_DENSE_LAYERS;
        }
        ops[c++] = all[i];
    }
    return c;
}
//< ep_decoder_step_ops

int ep_decoder_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, const ep_layout *l,
                         step_cost *out, char *err, size_t errlen)
{
    op_cost ops[DECODER_MAX_OPS];
    int n = ep_decoder_step_ops(m, g, s, l, ops, DECODER_MAX_OPS, err, errlen);
    if (n < 0)
        return -1;
    return step_cost_of_ops(m, g, s, ops, n, out, err, errlen);
}

double ep_weight_bytes_per_gpu(const model_spec *m, dtype w, int ep)
{
    return ep_tp_weight_bytes_per_gpu(m, w, ep, 1);
}

double ep_tp_weight_bytes_per_gpu(const model_spec *m, dtype w, int ep, int tp)
{
    param_count p = model_params(m);
    double routed = p.routed * expert_weight_bytes(m, w);
    double shared = model_moe_layers(m) * m->shared_experts * 3.0 * m->hidden *
                    (m->moe_ffn > 0 ? m->moe_ffn : m->ffn) * dtype_bytes(w);
    return (weight_bytes(m, w) - routed - shared) / tp + shared + routed / ep;
}

int ep_fit_adjust(const model_spec *m, precision prec, int ep, int tp, int batch, int context, fit_check *f,
                  char *err, size_t errlen)
{
    if (ep < 1 || m->experts % ep != 0 || tp < 1 || ep % tp != 0) {
        snprintf(err, errlen, "the expert-parallel degree %d must divide the %d routed experts of %s, and the "
                 "tensor-parallel degree %d must divide it", ep, m->experts, m->key, tp);
        return -1;
    }
    const double freed = weight_bytes_per_gpu(m, prec.weights, tp) - ep_tp_weight_bytes_per_gpu(m, prec.weights, ep, tp);
    f->weights -= freed;
    f->kv_budget += freed;
    double per_seq = kv_sequence_bytes(f->kv_per_token, kv_window_bytes_per_token_per_gpu(m, prec.kv, tp), m->window,
                                       context);
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

int ep_memory_fit(const model_spec *m, const gpu_spec *g, precision prec, memory_policy pol, int ep, int batch,
                  int context, fit_check *out, char *err, size_t errlen)
{
    if (ep < 1 || m->experts % ep != 0) {
        snprintf(err, errlen, "the expert-parallel degree %d must divide the %d routed experts of %s", ep,
                 m->experts, m->key);
        return -1;
    }
    /* the fit of the whole model on one GPU, then the experts it does not hold taken back */
    resident_model rm = {m, prec, 1};
    fit_check f;
    if (memory_fit(g, pol, &rm, 1, 0, batch, context, &f, err, errlen) != 0 ||
        ep_fit_adjust(m, prec, ep, 1, batch, context, &f, err, errlen) != 0)
        return -1;
    *out = f;
    return 0;
}
