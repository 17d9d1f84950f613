/* Many fine-tunes on one base: low-rank adapters (LoRA), what each costs in
 * memory and in step time, and how many distinct adapters a batch holds.
 *
 * Conventions (stated once, here):
 *  - An adapter on a module W (in -> out) is A (in x r) and B (r x out):
 *    r * (in + out) parameters.  The module shapes are the model's own: with
 *    grouped-query attention k and v are hidden -> kv_heads * head_dim, not
 *    hidden -> hidden.  For a mixture of experts every expert's MLP module
 *    gets its own adapter (x experts).
 *  - Tensor parallelism (Megatron, as vLLM shards adapters): a column-parallel
 *    module (q, k, v, gate, up) splits its output, so B is split over tp and A
 *    is whole on every GPU; a row-parallel module (o, down) splits its input,
 *    so A is split and B is whole.  The partial sums of a row-parallel
 *    adapter ride the layer's own all-reduce: no collective of its own.
 *  - A decode step with D distinct adapters among B sequences runs, for each
 *    targeted module of each layer, a gathered shrink (x A, one adapter index
 *    per token) and a gathered expand (+= v B): each distinct adapter's A and
 *    B are read once, each token's activations once.  Each op takes its
 *    roofline time plus a fixed cost per kernel launch; the sum adds to the
 *    base step of decoder_step_cost().
 *  - Serving engines pre-allocate `slots` GPU adapter buffers sized for the
 *    largest rank allowed (smaller adapters are zero-padded); the slots come
 *    out of the memory the KV cache would use (memory_fit's extra_bytes). */
#ifndef NAPKIN_LORA_H
#define NAPKIN_LORA_H

#include "memory.h"
#include "specs.h"
#include "transformer.h"

#include <stddef.h>

typedef enum { LORA_Q, LORA_K, LORA_V, LORA_O, LORA_GATE, LORA_UP, LORA_DOWN, LORA_MODULE_COUNT } lora_module;

/* A set of targeted modules: bit (1u << module). */
typedef unsigned lora_targets;
#define LORA_TARGET(m) (1u << (m))
#define LORA_TARGETS_ATTENTION (LORA_TARGET(LORA_Q) | LORA_TARGET(LORA_K) | LORA_TARGET(LORA_V) | LORA_TARGET(LORA_O))
#define LORA_TARGETS_ALL ((1u << LORA_MODULE_COUNT) - 1u)

/* "q", "k", "v", "o", "gate", "up", "down". */
const char *lora_module_name(lora_module m);
/* "q, k, v, o, gate, up, down": for error messages. */
const char *lora_module_choices(void);
/* A comma-separated list of module names ("q,k,v,o"), or "all" or
 * "attention".  Returns 0, or -1 with a message naming the bad name and the
 * valid ones. */
int lora_targets_parse(const char *list, lora_targets *out, char *err, size_t errlen);
/* "q,k,v,o" into buf. */
char *lora_targets_format(lora_targets t, char *buf, size_t n);
int lora_targets_count(lora_targets t);

typedef struct {
    int in, out;         /* the whole module */
    int column_parallel; /* 1: output split over tp (q, k, v, gate, up); 0: input split (o, down) */
    int copies;          /* per layer: experts for an MLP module of a mixture, else 1 */
} lora_module_shape;

lora_module_shape lora_module_shape_of(const model_spec *m, lora_module mod);

typedef struct {
    const model_spec *model;
    int rank;             /* r */
    lora_targets targets;
    dtype adapter_dtype;  /* what A and B are stored in (bf16 usually, whatever the base) */
    int tp;
} lora_config;

/* Check a configuration: a rank from 1 to the hidden size, at least one
 * target, tp valid for the model.  Returns 0, or -1 with a message. */
int lora_config_check(const lora_config *c, char *err, size_t errlen);

/* Parameters of one adapter on one module in one layer (one copy): r (in + out). */
double lora_module_params(const model_spec *m, lora_module mod, int rank);
/* Parameters of one adapter on one GPU of the tp group, one module, one layer copy. */
double lora_module_params_per_gpu(const model_spec *m, lora_module mod, int rank, int tp);

typedef struct {
    double params;        /* whole adapter, every layer and target */
    double bytes;         /* at adapter_dtype */
    double params_per_gpu;
    double bytes_per_gpu; /* one GPU's share under tp */
    double base_params;   /* the base model's total */
    double base_fraction; /* params / base_params */
} lora_size;

int lora_adapter_size(const lora_config *c, lora_size *out, char *err, size_t errlen);

/* ---- full fine-tunes as copies, against one base with adapters ---- */
typedef struct {
    int tenants;
    int gpus_per_deployment;    /* tp */
    int copies_deployments;     /* one replica of the base per tenant */
    int copies_gpus;
    double copies_weight_bytes; /* tenants x the base */
    int adapters_deployments;   /* 1 */
    int adapters_gpus;
    double adapters_weight_bytes; /* one base + tenants adapters (host side, most of them) */
    double gpu_ratio;           /* copies_gpus / adapters_gpus */
} lora_tenancy;

/* Every tenant's traffic is taken to fit one replica's batch: the question is
 * what the weights force, not what the load does. */
int lora_tenancy_compare(const lora_config *c, precision base_prec, int tenants, lora_tenancy *out, char *err,
                         size_t errlen);

/* ---- the memory limit: slots at the largest rank come out of the KV cache ---- */

/* Bytes of one GPU adapter slot sized for c->rank (the largest rank allowed). */
double lora_slot_bytes_per_gpu(const lora_config *c);

/* memory_fit for the base model with `slots` slots of slot_cfg's rank as
 * extra_bytes.  Returns what memory_fit returns. */
int lora_memory_fit(const gpu_spec *g, memory_policy pol, precision base_prec, const lora_config *slot_cfg, int slots,
                    int batch, int context, fit_check *out, char *err, size_t errlen);

/* Seconds to load one adapter from host memory into a slot: this GPU's share
 * over its own PCIe link (bytes_per_gpu / host_bw).  NAN when the GPU row has
 * no host bandwidth. */
double lora_load_time(const gpu_spec *g, const lora_size *s);

/* ---- the step-time limit ---- */

typedef struct {
    double flop, weight_bytes, act_bytes;
} lora_op;

/* One gathered shrink (x A) and expand (y += v B) over `tokens` tokens of an
 * in -> out module at `rank`, with `sets` distinct adapters' A and B read
 * once each; element sizes of the adapter weights and of the activations.
 * The FLOP per weight byte is 2 tokens / (sets * weight bytes): B / D in bf16. */
void lora_bgmv_ops(double tokens, double in, double out, double rank, double sets, double weight_elem_bytes,
                   double act_elem_bytes, lora_op *shrink, lora_op *expand);

/* An assumed fixed cost of one small kernel in a decode step (launch and
 * the kernel's minimum duration): a few microseconds on current GPUs;
 * kernels/launch.cu measures it on a reader's card. */
#define LORA_LAUNCH_S_DEFAULT 2.5e-6

typedef struct {
    int batch;       /* sequences decoded together */
    int context;     /* tokens cached per sequence */
    int distinct;    /* distinct adapters among them, 1 .. batch */
    double launch_s; /* fixed cost of one kernel launch */
    int skip_comm;   /* as step_shape.skip_comm */
} lora_step_shape;

typedef struct {
    step_cost base;        /* decoder_step_cost of the base model alone */
    double flop;           /* adapter ops, per GPU per step */
    double weight_bytes;   /* adapter A and B read per GPU per step: grows with D */
    double act_bytes;      /* token activations read and written by the adapter ops */
    double bytes;
    double intensity;      /* adapter FLOP per adapter weight byte, about B / D * 2 / bytes-per-weight */
    int launches;          /* kernels per step: shrink + expand per target per layer */
    double time_ops;       /* sum of the adapter ops' roofline times */
    double time_launch;    /* launches x launch_s */
    double time_adapter;   /* time_ops + time_launch */
    double time;           /* base.time + time_adapter */
    double ratio;          /* time / base.time */
    double adapter_share;  /* time_adapter / time */
    double tokens_per_s;   /* batch / time */
    int compute_bound_ops; /* adapter ops (per layer) whose roofline is set by compute */
} lora_step_cost;

/* The base step (decoder_step_cost with prec) plus the adapter ops of c for
 * the shape.  Returns 0, or -1 with a message (bad config or shape, distinct
 * outside 1..batch, a GPU without the compute dtype's rate). */
int lora_step_cost_compute(const gpu_spec *g, precision prec, const lora_config *c, const lora_step_shape *s,
                           lora_step_cost *out, char *err, size_t errlen);

/* ---- how many distinct adapters a batch holds ---- */

/* B requests drawn independently and uniformly from N adapters: the expected
 * number of distinct adapters, N (1 - (1 - 1/N)^B), the same shape as the
 * experts a mixture touches. */
double lora_expected_distinct_uniform(int adapters, int batch);

/* Zipf popularity: adapter i (1..N) is asked for with probability
 * i^-s / sum_j j^-s (s = 0 is uniform).  Fills p[0..N-1]; returns 0, or -1
 * for N < 1 or s < 0. */
int lora_zipf_probs(int adapters, double s, double *p);
/* The exact expectation for independent draws from p: sum_i 1 - (1 - p_i)^B. */
double lora_expected_distinct(const double *p, int adapters, int batch);

typedef struct {
    double mean;     /* distinct adapters per batch */
    double stddev;   /* over trials */
    double stderr_;  /* of the mean: stddev / sqrt(trials) */
    double admitted; /* with slots: requests of the batch that run (the rest wait) */
    double admitted_stddev;
} lora_batch_sim;

/* Simulate `trials` batches of B requests drawn from Zipf(s) over N adapters
 * (rng.h, fixed seed): the distinct adapters of each, and with `slots` > 0
 * how many of the B queued requests an engine with that many adapter slots
 * admits when it takes them in order and a request whose adapter would be a
 * (slots+1)-th distinct one waits.  Returns 0, or -1 with a message. */
int lora_distinct_simulate(int adapters, double s, int batch, int slots, int trials, unsigned long long seed,
                           lora_batch_sim *out, char *err, size_t errlen);

/* The expected distinct adapters among B requests drawn independently from
 * Zipf(s) popularity over N adapters: lora_zipf_probs, then
 * lora_expected_distinct.  NAN for N < 1, s < 0, B < 0, or no memory for
 * the N probabilities. */
double lora_expected_distinct_zipf(int adapters, double s, int batch);

#endif
