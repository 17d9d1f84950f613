#include "expert_parallel.h"

#include "comm.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>

//> alltoall_time
double alltoall_time(const gpu_spec *g, double bytes, double intra_share, double net_bw)
{
    double intra = bytes * intra_share / g->link_bw;
    double inter = intra_share < 1 ? bytes * (1 - intra_share) / net_bw : 0;
    return g->allreduce_latency + (intra > inter ? intra : inter); /* the two paths run at once */
}
//< alltoall_time

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
    const double ep = l->ep, k = m->experts_active, h = m->hidden;
    c.experts_per_gpu = m->experts / ep;
    /* pairs leaving this GPU: k per token, all but the 1/ep that stay home */
    c.pairs_sent = tokens * k * (ep - 1) / ep * l->imbalance;
    c.dispatch_bytes = c.pairs_sent * h * l->dispatch_bytes_per_value;
    c.combine_bytes = c.pairs_sent * h * l->combine_bytes_per_value;
    const double in_node = ep < l->gpus_per_node ? ep : l->gpus_per_node;
    c.intra_share = ep > 1 ? (in_node - 1) / (ep - 1) : 1;
    if (ep > 1) {
        c.dispatch_time = alltoall_time(g, c.dispatch_bytes, c.intra_share, l->net_bw);
        c.combine_time = alltoall_time(g, c.combine_bytes, c.intra_share, l->net_bw);
    }
    c.layer_time = c.dispatch_time + c.combine_time;
    c.step_time = c.layer_time * model_moe_layers(m);
    *out = c;
    return 0;
}
//< ep_step_cost
