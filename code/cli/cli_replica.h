/* The flags `memory` and `decode` share (model, GPU, tensor parallelism,
 * dtypes, context, memory policy), checked in one place, and the memory
 * section of their reports. */
#ifndef NAPKIN_CLI_REPLICA_H
#define NAPKIN_CLI_REPLICA_H

#include "cli_lookup.h"

typedef struct {
    const char *model, *gpu;
    const char *dtype, *weights, *kv, *act, *compute; /* NULL = not given */
    int tp, context;
    int pp;                /* pipeline stages (default 1) */
    double usable;         /* NAN = policy default */
    int activation_tokens; /* -1 = policy default */
    int sampled_tokens;    /* -1 = policy default */
    double hbm;            /* bytes of one GPU; 0 = what the driver reports (the GPU row) */
    int ep;                /* expert-parallel GPUs (not a flag here: cli_ep.h's --ep); 0 or 1 = none */
    char usable_help[96], activation_help[128], sampled_help[128]; /* help lines naming the policy defaults */
} replica_flags;

/* Defaults: tp 1, context 4096, bf16, the default memory policy. */
replica_flags replica_flags_default(void);

/* Number of cli_opt entries replica_flag_opts writes. */
#define REPLICA_NOPTS 14
/* The shared flags, into opts[0..REPLICA_NOPTS-1].  --compute comes last, so
 * a command without a compute step (memory) passes REPLICA_NOPTS - 1. */
void replica_flag_opts(replica_flags *f, cli_opt *opts);

typedef struct {
    const model_spec *model; /* what one GPU's stage holds: the whole model, or one pipeline stage */
    const model_spec *full;  /* the whole model */
    model_spec stage;        /* with pp > 1: layers / pp and one vocabulary matrix (pipeline.h) */
    int pp;
    const gpu_spec *gpu;
    precision prec;
    memory_policy policy;
    int tp, context;
    int ep;             /* expert-parallel group of ep GPUs (attention replicas of tp); 1 = none */
    replica_memory mem; /* one GPU of the tp group (of the ep group with ep > 1) */
} replica_setup;

/* Resolve and check the flags (out->model may point into *out: do not copy
 * the struct): unknown names, a tp that does not split the
 * heads (EXIT_USAGE), weights and activation reserve over the usable memory
 * (EXIT_NO_FIT, suggesting a larger --tp).  Returns 0 or the exit status,
 * after printing the message. */
int replica_setup_resolve(const char *cmd, const cli_specs *specs, const replica_flags *f, replica_setup *out);

/* Inputs and per-GPU memory as report sections. */
void replica_report_inputs(report *r, const replica_setup *s);
void replica_report_memory(report *r, const replica_setup *s);

#endif
