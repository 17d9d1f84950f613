/* Training arithmetic: the FLOPs of a run, the cluster that meets a deadline,
 * and what one GPU holds while it trains (weights, gradients, optimizer state
 * and the activations kept for the backward pass).
 *
 * Conventions (stated once, here):
 *  - A multiply-add is 2 FLOP.  Training one token costs 6 FLOP per
 *    parameter that multiplies (2 forward, 4 backward: the gradient with
 *    respect to the input and to the weight), plus the attention products
 *    QK^T and AV, 12 L s d per token counted without the causal mask (the
 *    convention of Chowdhery et al., 2022, arXiv 2204.02311, Appendix B,
 *    and of Korthikanti et al., 2022, arXiv 2205.05198).
 *  - MFU counts model FLOPs (recomputation excluded); HFU counts what the
 *    hardware runs (recomputation included).
 *  - Mixed-precision Adam keeps 16 bytes per parameter: bf16 weights (2) and
 *    gradients (2), fp32 master weights, momentum and variance (12)
 *    (Rajbhandari et al., 2020, ZeRO, arXiv 1910.02054).  ZeRO stage 1
 *    shards the 12 over the data-parallel group, stage 2 the gradients too,
 *    stage 3 the weights too.
 *  - Activations are 16-bit; a dropout mask is 1 byte per element.
 *  - Tensor parallelism (Megatron) splits heads, KV heads (replicated when
 *    tp exceeds them), the MLP width and the vocabulary over tp GPUs.
 *  - A pipeline stage holds layers / pp layers; the first stage also holds
 *    the embedding and, with 1F1B, the most microbatches in flight, so the
 *    first stage is the one sized.  With pp = 1 the GPU also holds the
 *    output head, the final norm and the fp32 logits of the loss. */
#ifndef NAPKIN_TRAIN_H
#define NAPKIN_TRAIN_H

#include "specs.h"

#include <stddef.h>

/* ------------------------------------------------------------ compute */

typedef enum { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL } recompute_kind;

const char *recompute_name(recompute_kind r);        /* "none", "selective", "full" */
int recompute_parse(const char *s, recompute_kind *out); /* 0, or -1 */
const char *recompute_choices(void);                  /* "none, selective, full" */

/* Parameters that multiply a token's activations: every stored parameter
 * but the input embedding, which is a lookup (the output head stays). */
double train_matmul_params(const model_spec *m);

typedef struct {
    double dense;     /* 6 N */
    double attention; /* 12 L s d, d = heads * head_dim; 0 without a shape */
    double model;     /* dense + attention: what MFU counts */
    double recompute; /* the extra forward work recomputation runs */
    double hardware;  /* model + recompute: what HFU counts */
} train_flop;

/* FLOPs per token to train `params` multiplying parameters at sequence
 * length seq.  shape gives the layers and attention width for the attention
 * term (NULL: omitted).  Selective recomputation re-runs the attention
 * core's forward (4 L s d); full recomputation re-runs the whole forward
 * (2 N + 4 L s d). */
train_flop train_flop_per_token(double params, const model_spec *shape, int seq, recompute_kind r);

/* MFU of a measured run: model FLOP/s achieved per GPU over its dense peak
 * (Llama 3 reports 430 TFLOP/s per H100: 430 / 989.4). */
double train_mfu(double model_flops_per_gpu, double peak);
/* The average utilisation a run's reported GPU-hours imply:
 * flop / (peak x gpu_hours x 3600).  Below the MFU while training, because
 * the hours include every stall, restart and evaluation. */
double train_implied_utilisation(double flop, double peak, double gpu_hours);

/* ------------------------------------------------------------ cluster */

/* Goodput: the share of wall-clock time that trains.  Interruptions arrive
 * at a rate per GPU-day, so a cluster of G GPUs sees G times as many, and
 * each costs the whole job hours_lost (restart, reload, work since the last
 * checkpoint).  other is what everything else leaves (checkpoint stalls,
 * evaluations); 1 for nothing. */
typedef struct {
    double interruptions_per_gpu_day;
    double hours_lost;
    double other;
} goodput_model;

/* Llama 3 405B (Grattafiori et al., 2024, arXiv 2407.21783, section 3.3.4):
 * 466 interruptions in 54 days on 16,384 GPUs, "higher than 90% effective
 * training time".  The rate is 466 / (54 x 16384) per GPU-day; hours_lost is
 * the loss per interruption that leaves exactly 90% at that size,
 * 0.10 x 54 x 24 / 466 hours. */
goodput_model goodput_model_llama3(void);
/* A fixed goodput, the same for every cluster size. */
goodput_model goodput_model_fixed(double goodput);

/* other x (1 - rate x gpus x hours_lost / 24), never below 0. */
double goodput_at(const goodput_model *g, double gpus);

typedef struct {
    double flop; /* model FLOPs of the whole run */
    double peak; /* dense FLOP/s of one GPU (never the sparse figure) */
    double mfu;  /* model FLOPs per second over gpus x peak, while training */
    goodput_model goodput;
} train_run;

/* GPU-seconds of training itself, flop / (peak x mfu): no interruptions. */
double train_gpu_seconds(const train_run *r);
/* Wall-clock seconds on a cluster of `gpus`; INFINITY when goodput is 0. */
double train_seconds_on(const train_run *r, int gpus);

typedef struct {
    int gpus;            /* whole nodes of node_size GPUs */
    int nodes;
    double gpus_exact;   /* the fractional count the deadline asks for */
    double goodput;      /* at that cluster size */
    double seconds;      /* wall clock on that cluster (at or under the deadline) */
    double gpu_hours;    /* gpus x seconds / 3600: what is rented */
} cluster_plan;

/* The smallest cluster of whole nodes that finishes within `seconds`.
 * Returns 0, or -1 when no size does: failures grow with the cluster, so
 * G x goodput(G) has a maximum, and a deadline past it cannot be met
 * (*out then holds the best size and its time). */
int train_cluster_for_deadline(const train_run *r, double seconds, int node_size, cluster_plan *out);

/* ------------------------------------------------------------ memory */

typedef enum {
    ACT_KORTHIKANTI, /* GPT layer as Korthikanti et al. count it: MHA, scores
                        and softmax stored (the s^2 term), dropout, 4h GeLU MLP */
    ACT_MODERN       /* flash attention (scores never stored, a logsumexp per row),
                        no dropout, RMSNorm, GQA, gated MLP of the model's ffn */
} activation_model;

const char *activation_model_name(activation_model a);          /* "korthikanti", "modern" */
int activation_model_parse(const char *s, activation_model *out); /* 0, or -1 */

typedef enum { PIPE_1F1B, PIPE_GPIPE } pipe_schedule;
const char *pipe_schedule_name(pipe_schedule p);          /* "1f1b", "gpipe" */
int pipe_schedule_parse(const char *s, pipe_schedule *out); /* 0, or -1 */

/* Microbatches whose activations the first pipeline stage holds at its
 * peak: 1F1B starts a backward as soon as the first microbatch returns, so
 * it holds min(pp, m); GPipe runs every forward first and holds all m. */
int pipeline_in_flight(pipe_schedule s, int pp, int microbatches);

typedef struct {
    int seq;          /* tokens per sequence */
    int micro_batch;  /* sequences per microbatch */
    int tp, pp, dp;   /* tensor, pipeline, data parallel degrees */
    int sp;           /* sequence parallelism over the tp group (1/0) */
    recompute_kind recompute;
    int zero;         /* ZeRO stage 0..3 over dp */
    activation_model act;
    pipe_schedule schedule;
    int microbatches; /* per step through the pipeline; 0 = pp */
} train_layout;

/* seq 8192, micro_batch 1, tp = pp = dp = 1, no sp, no recompute, ZeRO 0,
 * the modern activation model, 1F1B. */
train_layout train_layout_default(void);

typedef struct {
    double weights, grads, optimizer; /* bytes per parameter */
} train_state_bytes;

/* Mixed-precision Adam: 2, 2, 12 (bf16 weights and gradients; fp32 master,
 * momentum and variance), the count of ZeRO (Rajbhandari et al. 2020). */
train_state_bytes train_state_adam_mixed(void);

/* Mixed-precision Adam with the gradients kept in grad_dtype ("bf16" or
 * "fp32": Megatron-LM accumulates and all-reduces in fp32 by default) and
 * the master weights in master_dtype ("fp32", or "bf16" for none beyond the
 * bf16 weights themselves).  Returns 0, or -1 with a message naming
 * --grad-dtype or --master-dtype. */
int train_state_adam(const char *grad_dtype, const char *master_dtype, train_state_bytes *out, char *err,
                     size_t errlen);

/* Check a layout against a model: positive sizes, tp dividing the heads
 * (and the KV heads, or they dividing tp), pp dividing the layers, ZeRO 0..3.
 * Returns 0, or -1 with a message naming the flag (--tp, --pp, ...). */
int train_layout_check(const model_spec *m, const train_layout *l, char *err, size_t errlen);

/* Bytes one transformer layer keeps for its backward pass, for one
 * microbatch, on one GPU of the tp group.  Korthikanti et al. Table 2 for
 * ACT_KORTHIKANTI: sbh(34 + 5as/h) whole; sbh(10 + 24/t + 5as/(ht)) with
 * TP; sbh(34/t + 5as/(ht)) with TP + SP; selective recomputation drops the
 * 5as/h term; full recomputation keeps the layer input, 2sbh (/t with SP). */
double train_layer_activation_bytes(const model_spec *m, const train_layout *l);

typedef struct {
    double params;       /* parameters of this GPU's stage share (over tp), before ZeRO */
    double weights, grads, optimizer;
    int layers;          /* on this stage */
    int in_flight;       /* microbatches whose activations it holds */
    double act_per_layer;
    double act_layers;   /* layers x in_flight x act_per_layer */
    double act_working;  /* full recomputation: one layer rebuilt for its backward */
    double act_logits;   /* pp = 1: fp32 logits of the loss, 4 s b V / tp */
    double activations;  /* act_layers + act_working + act_logits */
    double total;
    double capacity;     /* usable memory: memory_policy_default()'s share of what the driver reports */
    int fits;            /* total <= capacity */
} train_memory;

/* Plan the first stage's GPU.  Returns 0 (see fits), or -1 with a message
 * for a layout train_layout_check refuses. */
int train_memory_plan(const model_spec *m, const gpu_spec *g, const train_layout *l, const train_state_bytes *b,
                      train_memory *out, char *err, size_t errlen);

/* The largest micro_batch (1 .. limit) with which the layout fits; 0 when
 * not even one sequence does, -1 for a bad layout. */
int train_max_micro_batch(const model_spec *m, const gpu_spec *g, const train_layout *l, const train_state_bytes *b,
                          int limit);

typedef struct {
    int tp, pp, dp;
    int max_micro_batch; /* the largest that fits (capped at the search limit) */
    double total;        /* bytes per GPU at the layout's micro_batch */
} layout_fit;

/* Every tp (a power of two up to node_size dividing the heads) and pp
 * (dividing the layers) with tp x pp x dp = gpus that fits at the layout's
 * micro_batch, ordered by tp x pp (least model parallelism first), then by
 * pp (pipeline bubbles cost more than NVLink all-reduces).  Writes up to max
 * into out; returns how many fit in all (0: none), or -1 for bad input. */
int train_layout_search(const model_spec *m, const gpu_spec *g, int gpus, int node_size, const train_layout *base,
                        const train_state_bytes *b, layout_fit *out, int max);

#endif
