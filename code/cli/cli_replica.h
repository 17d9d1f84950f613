/* The flags `memory`, `decode`, `graphs` and `lora` share (model, device,
 * tensor parallelism, dtypes, context, memory policy), checked in one
 * place, and the memory section of their reports. */
#ifndef NAPKIN_CLI_REPLICA_H
#define NAPKIN_CLI_REPLICA_H

#include "cli_device.h"
#include "cli_ep.h"
#include "cli_lookup.h"
#include "cli_precision.h"

typedef struct {
    const char *model;
    device_flags device;   /* --gpu, --usable, --hbm here; --calibrate and --roofline where the command prices */
    const char *dtype, *weights, *kv, *act, *compute; /* NULL = not given */
    const char *moe_weights; /* the routed experts' weight format; NULL = not given (--weights, else --dtype) */
    int tp, context;
    int pp;                /* pipeline stages (default 1) */
    int activation_tokens; /* -1 = policy default */
    int sampled_tokens;    /* -1 = policy default */
    const ep_flags *layout; /* the layout flags (cli_ep.h's --ep, --moe-ep, --moe-tp, --attention-dp), where the
                               command takes them; NULL: tp alone */
    char activation_help[128], sampled_help[128]; /* help lines naming the policy defaults */
} replica_flags;

/* Defaults: tp 1, context 4096, bf16, the default memory policy; the
 * device flags the command takes (DEVICE_*: at least DEVICE_GPU and
 * DEVICE_MEMORY). */
replica_flags replica_flags_default(unsigned device_takes);

/* The most cli_opt entries replica_flag_opts writes. */
#define REPLICA_NOPTS_MAX 17
/* The shared flags, into opts (--model, --gpu, the replica's shape and
 * dtypes, --usable, --hbm; --calibrate and --roofline are the command's to
 * place); returns how many.  --compute comes last, so a command without a
 * compute step (memory) leaves the last one out. */
int replica_flag_opts(replica_flags *f, cli_opt *opts);

typedef struct {
    const model_spec *model; /* what one GPU's stage holds: the whole model, or one pipeline stage */
    const model_spec *full;  /* the whole model */
    model_spec stage;        /* with pp > 1: layers / pp and one vocabulary matrix (pipeline.h) */
    int pp;
    const gpu_spec *gpu; /* the device's timed row */
    precision prec;
    memory_policy policy;
    int tp, context;
    int ep;             /* the layout's moe_ep (1 = none) */
    parallel_layout layout; /* the replica's (layout.h): attention ranks of tp GPUs, the experts' split */
    replica_memory mem; /* one GPU of the tp group (of the whole layout when it is split) */
} replica_setup;

/* Resolve and check the flags, the device into *device (out->gpu is its
 * timed row, and out->model may point into *out: do not copy the struct):
 * unknown names, a tp that does not split the heads (EXIT_USAGE), weights
 * and activation reserve over the usable memory (EXIT_NO_FIT, suggesting a
 * larger --tp).  Returns 0 or the exit status, after printing the message. */
int replica_setup_resolve(const char *cmd, const cli_specs *specs, const replica_flags *f, device_setup *device,
                          replica_setup *out);

/* Inputs and per-GPU memory as report sections. */
void replica_report_inputs(report *r, const replica_setup *s);
void replica_report_memory(report *r, const replica_setup *s);

#endif
