#include "cli_ep.h"

#include <stdio.h>
#include <string.h>

ep_flags ep_flags_default(void)
{
    ep_flags f = {0, 0, 0, 0, 0, 50, 0, 0}; /* gpus_per_node 0: the GPU row's node_gpus */
    return f;
}

void ep_flag_opts(ep_flags *f, cli_opt *o)
{
    const cli_opt opts[EP_NOPTS] = {
        {"--ep", OPT_POS_INT, &f->ep, "N",
         "expert parallelism: a mixture's routed experts over N GPUs, attention replicas of --tp GPUs "
         "(the alias of --moe-ep)", 0, 0},
        {"--moe-ep", OPT_POS_INT, &f->moe_ep, "E", "the routed experts' expert split: E groups of experts", 0, 0},
        {"--moe-tp", OPT_POS_INT, &f->moe_tp, "M",
         "the routed experts' tensor split (moe-tp x moe-ep = tp x attention-dp)", 0, 0},
        {"--attention-dp", OPT_POS_INT, &f->attention_dp, "D",
         "data-parallel attention ranks of --tp GPUs each: the replica spans tp x D GPUs", 0, 0},
        {"--gpus-per-node", OPT_POS_INT, &f->gpus_per_node, "N",
         "with --ep: GPUs joined by NVLink (default: the GPU row's node_gpus, 8 on an HGX board, 72 in an NVL72 "
         "rack)", 0, 0},
        {"--net-gb-s", OPT_POS_REAL, &f->net_gb_s, "B", "with --ep: network GB/s per GPU across nodes (default 50)",
         0, 0},
        {"--imbalance", OPT_POS_REAL, &f->imbalance, "F",
         "with --ep: the busiest GPU's load over the mean, >= 1 (default 1)", 0, 0},
        {"--routing-skew", OPT_POS_REAL, &f->routing_skew, "S",
         "a mixture's router skewed as Zipf(S) over its experts (default uniform)", 0, 0},
    };
    memcpy(o, opts, sizeof opts);
}

int ep_flags_node_gpus(const ep_flags *f, const gpu_spec *g)
{
    return f->gpus_per_node > 0 ? f->gpus_per_node : gpu_node_gpus(g);
}

int layout_is_split(const parallel_layout *pl)
{
    return pl->attention_dp > 1 || pl->moe_ep > 1;
}

int ep_flags_parallel(const char *cmd, const ep_flags *f, const model_spec *m, int tp, parallel_layout *pl)
{
    if (f->ep && f->moe_ep)
        return cli_fail(cmd, EXIT_USAGE, "--ep is the alias of --moe-ep: give one of them");
    char err[256];
    if (layout_resolve(m, "", tp, f->attention_dp, f->moe_tp, f->ep ? f->ep : f->moe_ep, pl, err, sizeof err) != 0)
        return cli_fail(cmd, EXIT_USAGE, "%s%s", err, f->ep && strstr(err, "--moe-ep") ? " (--ep is --moe-ep)" : "");
    return 0;
}

int ep_flags_layout(const char *cmd, const ep_flags *f, const model_spec *m, const gpu_spec *g, int tp,
                    precision prec, ep_layout *out, parallel_layout *pl)
{
    ep_flags d = ep_flags_default();
    memset(out, 0, sizeof *out);
    int rc = ep_flags_parallel(cmd, f, m, tp, pl);
    if (rc != 0)
        return rc;
    const int split = layout_is_split(pl);
    if (!split && (f->gpus_per_node != d.gpus_per_node || f->net_gb_s != d.net_gb_s || f->imbalance > 0))
        return cli_fail(cmd, EXIT_USAGE, "--gpus-per-node, --net-gb-s and --imbalance go with --ep (--moe-ep) or "
                                         "--attention-dp");
    if (f->routing_skew > 0 && m->experts <= 1)
        return cli_fail(cmd, EXIT_USAGE, "--routing-skew %g: %s is dense (no router to skew)", f->routing_skew,
                        m->key);
    if (f->imbalance > 0 && f->routing_skew > 0)
        return cli_fail(cmd, EXIT_USAGE, "give --imbalance or --routing-skew, not both: the skewed router sets the "
                                         "busiest GPU's load");
    if (f->imbalance > 0 && f->imbalance < 1)
        return cli_fail(cmd, EXIT_USAGE, "--imbalance %g: the busiest GPU carries at least the mean (>= 1)",
                        f->imbalance);
    out->routing_skew = f->routing_skew;
    if (!split)
        return 0;
    out->ep = pl->moe_ep > 1 ? pl->moe_ep : 0;
    out->gpus_per_node = ep_flags_node_gpus(f, g);
    out->net_bw = f->net_gb_s * 1e9;
    out->imbalance = f->imbalance > 0 ? f->imbalance : 1;
    out->dispatch_bytes_per_value = dtype_bytes(prec.act) < 2 ? 1.0 : 2.0;
    out->combine_bytes_per_value = 2.0;
    return 0;
}

void layout_report(report *r, const parallel_layout *pl, int per_rank)
{
    report_section(r, "Parallel layout (the measured runs' columns)");
    report_int(r, "layout_tp", "tensor parallelism inside an attention rank", pl->tp);
    report_int(r, "attention_dp", "data-parallel attention ranks", pl->attention_dp);
    report_int(r, "moe_tp", "the experts' tensor split", pl->moe_tp);
    report_int(r, "moe_ep", "the experts' expert split", pl->moe_ep);
    report_int(r, "replica_gpus", "GPUs in the replica (tp x attention-dp)", layout_gpus(pl));
    if (per_rank < 0)
        return;
    report_int(r, "concurrency_per_rank", "sequences per attention rank", per_rank);
    report_int(r, "concurrency_per_replica", "sequences in the replica (all ranks)", per_rank * pl->attention_dp);
}

void ep_report(report *r, const model_spec *m, const gpu_spec *g, const ep_layout *l, int tp, double tokens)
{
    char err[256];
    double imbalance = l->imbalance, touched = 0;
    ep_cost a2a = {0};
    ep_layout busy = *l;
    if (ep_busiest_gpu(m, l, tokens * l->ep, &imbalance, &touched, err, sizeof err) == 0) {
        busy.imbalance = imbalance;
        ep_step_cost(m, g, &busy, tokens, &a2a, err, sizeof err);
    }
    report_section(r, "Expert parallelism (one GPU of the group)");
    report_int(r, "ep", "expert-parallel GPUs", l->ep);
    report_int(r, "attention_replicas", "attention replicas of --tp GPUs in the group", l->ep / tp);
    report_num(r, "experts_per_gpu", "routed experts each GPU holds", U_REAL, (double)m->experts / l->ep);
    report_num(r, "tokens_dispatched_per_gpu", "tokens each GPU dispatches a step", U_REAL, tokens);
    report_num(r, "busiest_gpu_load", l->routing_skew > 0 ? "busiest GPU's load over the mean (skewed router)"
                                                          : "busiest GPU's load over the mean",
               U_REAL, imbalance);
    report_num(r, "experts_touched_per_gpu", "its experts the group's tokens touch", U_REAL, touched);
    report_num(r, "dispatch_bytes", "bytes a GPU sends in a dispatch", U_BYTES, a2a.dispatch_bytes);
    report_num(r, "combine_bytes", "and in a combine", U_BYTES, a2a.combine_bytes);
    report_num(r, "intra_node_share", "share inside the node (NVLink)", U_REAL, a2a.intra_share);
    report_num(r, "alltoall_time_per_layer", "dispatch + combine, one MoE layer", U_SECONDS, a2a.layer_time);
}
