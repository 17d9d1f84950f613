/* The expert-parallel flags that decode, prefill and serve share (--ep,
 * --gpus-per-node, --net-gb-s, --imbalance, --routing-skew), checked in one
 * place and turned into the library's ep_layout (expert_parallel.h). */
#ifndef NAPKIN_CLI_EP_H
#define NAPKIN_CLI_EP_H

#include "cli_args.h"
#include "cli_report.h"
#include "expert_parallel.h"

typedef struct {
    int ep;              /* 0: not given (no expert parallelism) */
    int gpus_per_node;
    double net_gb_s;
    double imbalance;    /* 0: not given (1) */
    double routing_skew; /* 0: not given (uniform) */
} ep_flags;

/* Defaults: no EP, 8 GPUs a node, 50 GB/s per GPU across nodes, uniform routing. */
ep_flags ep_flags_default(void);

#define EP_NOPTS 5
/* The flags, into opts[0..EP_NOPTS-1]. */
void ep_flag_opts(ep_flags *f, cli_opt *opts);

/* The layout of the flags for model m at tensor-parallel degree tp: the
 * all-to-all in fp8 where the activations are one byte, else bf16; the
 * combine in bf16.  out->ep is 0 without --ep (the skew still applies).
 * Checks that --ep goes with a mixture, divides its experts and is a
 * multiple of tp, that the other EP flags go with --ep, and --imbalance >= 1
 * without --routing-skew.  Returns 0, or EXIT_USAGE after the message. */
int ep_flags_layout(const char *cmd, const ep_flags *f, const model_spec *m, int tp, precision prec,
                    ep_layout *out);

/* The group's lines in a report: EP degree, attention replicas, experts per
 * GPU, the busiest GPU's load and experts, the all-to-all of one MoE layer
 * for `tokens` tokens a GPU dispatches. */
void ep_report(report *r, const model_spec *m, const gpu_spec *g, const ep_layout *l, int tp, double tokens);

#endif
