/* The expert-parallel flags that decode, prefill and serve share (--ep,
 * --gpus-per-node, --net-gb-s, --imbalance, --routing-skew), checked in one
 * place and turned into the library's ep_layout (expert_parallel.h). */
#ifndef NAPKIN_CLI_EP_H
#define NAPKIN_CLI_EP_H

#include "cli_args.h"
#include "cli_report.h"
#include "expert_parallel.h"

typedef struct {
    int ep;              /* --ep, the alias of --moe-ep; 0: not given (no expert parallelism) */
    int moe_ep;          /* --moe-ep; 0: not given */
    int attention_dp;    /* --attention-dp; 0: not given (layout.h's defaults) */
    int moe_tp;          /* --moe-tp; 0: not given */
    int gpus_per_node;   /* --gpus-per-node; 0: not given (the GPU row's node_gpus) */
    double net_gb_s;
    double imbalance;    /* 0: not given (1) */
    double routing_skew; /* 0: not given (uniform) */
} ep_flags;

/* Defaults: no EP, the GPU row's GPUs a node, 50 GB/s per GPU across nodes,
 * uniform routing. */
ep_flags ep_flags_default(void);

#define EP_NOPTS 8
/* The first EP_LAYOUT_NOPTS of them are the layout's (--ep, --moe-ep,
 * --moe-tp, --attention-dp): all a command without a step (memory) takes. */
#define EP_LAYOUT_NOPTS 4
/* The flags, into opts[0..EP_NOPTS-1]. */
void ep_flag_opts(ep_flags *f, cli_opt *opts);

/* The replica's layout of the flags for model m at tensor-parallel degree
 * tp (layout_resolve: --attention-dp, --moe-tp, --moe-ep or its alias
 * --ep), into *pl, and the all-to-all's links on GPU g into *out (its
 * node: ep_flags_node_gpus): the dispatch in
 * fp8 where the activations are one byte, else bf16; the combine in bf16.
 * out->ep is the layout's moe_ep when above 1, else 0 (the skew still
 * applies).  Refuses, naming the flag: a layout layout_resolve refuses,
 * --ep with --moe-ep, the link flags without a split layout, and
 * --imbalance < 1 or with --routing-skew.  Returns 0, or EXIT_USAGE after
 * the message. */
int ep_flags_layout(const char *cmd, const ep_flags *f, const model_spec *m, const gpu_spec *g, int tp,
                    precision prec, ep_layout *out, parallel_layout *pl);

/* The GPUs a node of the all-to-all's links: --gpus-per-node, or the GPU
 * row's NVLink domain (gpu_node_gpus: 8 on an HGX board, 72 in an NVL72). */
int ep_flags_node_gpus(const ep_flags *f, const gpu_spec *g);

/* The layout alone (the first step of ep_flags_layout), refused naming the
 * flag.  Returns 0, or EXIT_USAGE after the message. */
int ep_flags_parallel(const char *cmd, const ep_flags *f, const model_spec *m, int tp, parallel_layout *pl);

/* 1 when the layout goes beyond one tensor-parallel group (attention ranks
 * or an expert split): the step is layout_decoder_step_cost's. */
int layout_is_split(const parallel_layout *pl);

/* The layout's lines in a report: tp, attention_dp, moe_tp, moe_ep, GPUs,
 * the concurrency per attention rank and per replica (per_rank < 0: none). */
void layout_report(report *r, const parallel_layout *pl, int per_rank);

/* The group's lines in a report: EP degree, attention replicas, experts per
 * GPU, the busiest GPU's load and experts, the all-to-all of one MoE layer
 * for `tokens` tokens a GPU dispatches. */
void ep_report(report *r, const model_spec *m, const gpu_spec *g, const ep_layout *l, int tp, double tokens);

#endif
