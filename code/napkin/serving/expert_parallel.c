#include "expert_parallel.h"

#include "comm.h"
#include "moe.h"
#include "mtp.h"
#include "pricing.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>

ep_layout ep_links_default(int ep, precision prec, const gpu_spec *g)
{
    ep_layout l = {.ep = ep, .gpus_per_node = gpu_node_gpus(g), .net_bw = 50e9, .imbalance = 1};
    l.dispatch_bytes_per_value = dtype_bytes(prec.act) < 2 ? 1.0 : 2.0;
    l.combine_bytes_per_value = 2.0;
    return l;
}

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

/* The old group as a layout: ep GPUs, ep / tp attention ranks of tp, the
 * experts whole (moe_tp 1). */
static parallel_layout ep_as_layout(int ep, int tp)
{
    return (parallel_layout){tp, tp > 0 ? ep / tp : 0, 1, ep};
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
/* The MoE layer's collective when the experts are split over a whole
 * attention-DP replica without expert parallelism (moe_ep 1, moe_tp = every
 * GPU): each GPU gathers the replica's N tokens and reduce-scatters its
 * partial sums back, the ring bytes of one all-reduce of N x hidden over the
 * replica's GPUs. */
static op_cost moe_replica_allreduce(int per_layer, double tokens, double h, double ab, int gpus)
{
    op_cost op = {.name = "moe_allreduce", .kind = OP_ALLREDUCE, .per_layer = per_layer, .fixed_share = 1};
    op.comm_bytes = tokens * h * ab;
    op.group = gpus;
    return op;
}

static int layout_check(const model_spec *m, const step_shape *s, const parallel_layout *pl, char *err,
                        size_t errlen)
{
    if (pl->tp == s->tp && pl->attention_dp >= 1 && pl->moe_tp >= 1 && pl->moe_ep >= 1 &&
        pl->moe_tp * pl->moe_ep == pl->tp * pl->attention_dp &&
        (m->experts > 1 || (pl->moe_ep == 1 && pl->moe_tp == pl->tp * pl->attention_dp)))
        return 0;
    snprintf(err, errlen, "the layout tp %d x attention-dp %d, moe-tp %d x moe-ep %d does not fit the step's tp %d "
             "and %s (moe-tp x moe-ep must be tp x attention-dp)", pl->tp, pl->attention_dp, pl->moe_tp, pl->moe_ep,
             s->tp, m->key);
    return -1;
}

/* At attention_dp 1 (MOE_TOKENS_REPLICATED) the TP group's step as it is,
 * but for the routed experts: this GPU's experts / moe_ep experts, each a
 * 1/moe_tp slice, run on every token of the step, (k imbalance / moe_ep)
 * pairs a token; the shared experts stay split like the rest of the group
 * (1/tp) and both all-reduces stay on every layer. */
static int replicated_step_ops(const model_spec *m, const step_shape *s, const parallel_layout *pl,
                               const ep_layout *busy, double touched, op_cost *ops, int max_ops)
{
    op_cost all[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, s, all, DECODER_MAX_OPS);
    const double fe = m->moe_ffn > 0 ? m->moe_ffn : m->ffn;
    const double T = (double)s->batch * s->new_tokens;
    const double pairs = T * m->experts_active * busy->imbalance / pl->moe_ep;
    int c = 0;
    for (int i = 0; i < n && c < max_ops; i++) {
        if (strcmp(all[i].name, "routed_experts") == 0)
            all[i] = moe_experts_op(all[i].per_layer, pairs, touched, m->hidden, fe / pl->moe_tp,
                                    expert_weight_bytes(m, s->prec.weights), dtype_bytes(s->prec.act), all[i].rate);
        ops[c++] = all[i];
    }
    return c;
}

int layout_decoder_step_ops(const model_spec *m, const gpu_spec *g, const step_shape *s, const parallel_layout *pl,
                            const ep_layout *links, op_cost *ops, int max_ops, char *err, size_t errlen)
{
    if (step_shape_check(m, s, err, errlen) != 0 || layout_check(m, s, pl, err, errlen) != 0)
        return -1;
    const int D = pl->attention_dp, M = pl->moe_tp, E = pl->moe_ep, G = layout_gpus(pl);
    if (m->experts <= 1 || (D == 1 && E == 1)) /* dense ranks are independent copies; plain tensor parallelism */
        return decoder_step_ops(m, s, ops, max_ops);
    const moe_token_path path = layout_moe_token_path(pl, links->exchange);
    /* all-to-all: each GPU's share of its rank's tokens (a reduce-scatter in
     * the rank) sent to the experts' GPUs and back; gathered: the replica's
     * tokens on every GPU, its partial sums reduce-scattered back. */
    const int a2a = path == MOE_TOKENS_ALLTOALL;
    const double N = (double)s->batch * s->new_tokens * D; /* the replica's tokens in one MoE layer */
    const double mine = (double)s->batch * s->new_tokens / s->tp; /* tokens this GPU dispatches (a2a) */
    ep_layout busy = *links;
    busy.ep = E;
    busy.prefill = s->new_tokens > 1; /* many new tokens a sequence: the prefill kernels */
    double touched;
    if (ep_busiest_gpu(m, &busy, N, &busy.imbalance, &touched, err, errlen) != 0)
        return -1;
    if (path == MOE_TOKENS_REPLICATED)
        return replicated_step_ops(m, s, pl, &busy, touched, ops, max_ops);
    ep_cost a2a_cost = {0};
    if (a2a && ep_step_cost(m, g, &busy, mine * M, &a2a_cost, err, errlen) != 0) /* a pair to each of M slices */
        return -1;
    op_cost all[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, s, all, DECODER_MAX_OPS);
    const double h = m->hidden, fe = m->moe_ffn > 0 ? m->moe_ffn : m->ffn, S = m->shared_experts;
    const double ab = dtype_bytes(s->prec.act), eb = routed_weight_bytes(m, s->prec), wb = dense_weight_bytes(s->prec);
    /* This GPU's experts: experts / E of them, each a 1/M slice.  With a2a
     * it receives (k imbalance) pairs for each of the M x mine tokens of its
     * slice group (the replica's N k / E pairs of its expert group,
     * N = mine x tp x D) and runs the shared experts' 1/M slice on those
     * tokens; gathered, it sees all N tokens, their N k imbalance / E pairs
     * to its experts, and runs a 1/G slice of the shared experts on them. */
    const double tokens = a2a ? mine * M : N; /* tokens whose pairs reach this GPU's slice group */
    const double pairs = tokens * m->experts_active * busy.imbalance / (a2a ? 1 : E);
    const double shared_split = a2a ? M : G;
    int c = 0;
    for (int i = 0; i < n && c < max_ops; i++) {
        if (strcmp(all[i].name, "shared_gate_up_proj") == 0) { /* the shared experts' slice */
            static const char *const names[3] = {"shared_gate_up_proj", "shared_act_mul", "shared_down_proj"};
            op_cost mlp[3];
            mlp_step_ops(names, all[i].per_layer, tokens, S, h, fe / shared_split, S, wb, ab, mlp);
            for (int j = 0; j < 3 && c < max_ops; j++) {
                if (mlp[j].kind == OP_PROJECTION) /* priced like the step's other projections (pricing.h) */
                    mlp[j].rate = all[i].rate;
                ops[c++] = mlp[j];
            }
            i += 2; /* shared_act_mul and shared_down_proj follow */
            continue;
        }
        if (strcmp(all[i].name, "routed_experts") == 0) { /* dispatch, this GPU's expert slices, combine */
            op_cost seq[3];
            int q = 0;
            if (a2a)
                seq[q++] = ep_alltoall_op("ep_dispatch", all[i].per_layer, mine * M, a2a_cost.dispatch_bytes,
                                          a2a_cost.intra_share, &busy);
            seq[q++] = moe_experts_op(all[i].per_layer, pairs, touched, h, fe / M, eb, ab, all[i].rate);
            seq[q - 1].math = all[i].math; /* the experts' format's own math (weight_format.h) */
            if (a2a)
                seq[q++] = ep_alltoall_op("ep_combine", all[i].per_layer, mine * M, a2a_cost.combine_bytes,
                                          a2a_cost.intra_share, &busy);
            else if (!s->skip_comm) /* over a DP replica: gather, then reduce-scatter */
                seq[q++] = moe_replica_allreduce(all[i].per_layer, N, h, ab, G);
            for (int j = 0; j < q && c < max_ops; j++)
                ops[c++] = seq[j];
            continue;
        }
        if (strcmp(all[i].name, "mlp_allreduce") == 0) { /* the MoE layers' outputs come back above */
            if (m->dense_layers == 0)
                continue;
            all[i].per_layer = OP_DENSE_LAYERS;
        }
        ops[c++] = all[i];
    }
    return c;
}

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
    const parallel_layout pl = ep_as_layout(l->ep, s->tp);
    return layout_decoder_step_ops(m, g, s, &pl, l, ops, max_ops, err, errlen);
}
//< ep_decoder_step_ops

int layout_decoder_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, const parallel_layout *pl,
                             const ep_layout *links, step_cost *out, char *err, size_t errlen)
{
    op_cost ops[DECODER_MAX_OPS];
    int n = layout_decoder_step_ops(m, g, s, pl, links, ops, DECODER_MAX_OPS, err, errlen);
    if (n < 0)
        return -1;
    return step_cost_of_ops(m, g, s, ops, n, out, err, errlen);
}

int layout_mtp_pass_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, const parallel_layout *pl,
                         const ep_layout *links, step_cost *out, char *err, size_t errlen)
{
    if (s->new_tokens != 1) {
        snprintf(err, errlen, "a module pass drafts one token a sequence (new_tokens %d)", s->new_tokens);
        return -1;
    }
    const model_spec mm = mtp_module_model(m, 1);
    op_cost ops[DECODER_MAX_OPS + MTP_GLUE_OPS];
    int n = layout_decoder_step_ops(&mm, g, s, pl, links, ops, DECODER_MAX_OPS, err, errlen);
    if (n < 0)
        return -1;
    n += mtp_glue_ops(m, s, ops + n);
    return step_cost_of_ops(&mm, g, s, ops, n, out, err, errlen);
}

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
    parallel_layout l = ep_as_layout(ep, tp);
    return layout_weight_bytes_per_gpu(m, w, &l);
}

int ep_fit_adjust(const model_spec *m, precision prec, int ep, int tp, int batch, int context, fit_check *f,
                  char *err, size_t errlen)
{
    if (ep < 1 || m->experts % ep != 0 || tp < 1 || ep % tp != 0) {
        snprintf(err, errlen, "the expert-parallel degree %d must divide the %d routed experts of %s, and the "
                 "tensor-parallel degree %d must divide it", ep, m->experts, m->key, tp);
        return -1;
    }
    parallel_layout l = ep_as_layout(ep, tp);
    return layout_fit_adjust(m, prec, &l, batch, context, f, err, errlen);
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
