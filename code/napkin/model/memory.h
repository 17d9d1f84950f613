/* Memory of a serving replica, per GPU: weights, KV cache, activations, and
 * the largest batch the KV budget holds at a context length. */
#ifndef NAPKIN_MEMORY_H
#define NAPKIN_MEMORY_H

#include "layout.h"
#include "specs.h"
#include "transformer.h"

/* All parameters stored at prec's formats: the routed experts at
 * routed_weight_bytes, the rest at dense_weight_bytes (transformer.h). */
double weight_bytes_at(const model_spec *m, precision prec);
/* All parameters stored at dtype w (precision_uniform(w): the experts as released). */
double weight_bytes(const model_spec *m, dtype w);
/* Weights on one GPU of a tp group (everything sharded evenly). */
double weight_bytes_per_gpu_at(const model_spec *m, precision prec, int tp);
double weight_bytes_per_gpu(const model_spec *m, dtype w, int tp);
/* Weights on one GPU of a replica laid out as l (layout.h): the routed
 * experts 1/(moe_tp x moe_ep) (experts / moe_ep of them, each a 1/moe_tp
 * slice), the shared experts 1/moe_tp (split like the routed ones' width),
 * everything else (attention, dense layers, embedding, head, norms)
 * 1/tp: each attention rank holds it whole over its tp GPUs.  At
 * moe_tp = moe_ep = 1 and tp = 1 it is the whole model; at moe_tp = tp
 * (moe_ep = 1, attention_dp = 1) weight_bytes_per_gpu's 1/tp. */
double layout_weight_bytes_per_gpu_at(const model_spec *m, precision prec, const parallel_layout *l);
double layout_weight_bytes_per_gpu(const model_spec *m, dtype w, const parallel_layout *l);

/* K and V of every layer for one token: 2 * layers * kv_heads * head_dim * bytes.
 * Uses KV heads, not attention heads (GQA).  MLA caches one latent per layer,
 * layers * (kv_lora_rank + qk_rope_dim) values, whole on every GPU of a tp
 * group.  A windowed layer counts here as if it kept every token; see
 * kv_sequence_bytes. */
double kv_bytes_per_token(const model_spec *m, dtype kv);
/* The share one GPU holds: KV heads split over tp, replicated when tp > kv_heads. */
double kv_bytes_per_token_per_gpu(const model_spec *m, dtype kv, int tp);
/* The windowed layers' share of kv_bytes_per_token_per_gpu (0 without a window). */
double kv_window_bytes_per_token_per_gpu(const model_spec *m, dtype kv, int tp);
/* KV of one sequence of `context` tokens when per_token bytes grow with
 * every token but window_per_token of them stop at `window` tokens:
 * per_token * context - window_per_token * max(0, context - window). */
double kv_sequence_bytes(double per_token, double window_per_token, int window, int context);
/* Linear-attention layers' state of one sequence on one GPU of a tp group,
 * whatever its length (linear_attention.h; 0 without such layers): what a
 * sequence holds beside its KV, counted with it in every fit. */
double state_bytes_per_sequence_per_gpu(const model_spec *m, int tp);
/* One sequence of `context` tokens, whole model (windows and linear-attention state counted). */
double kv_bytes_per_sequence(const model_spec *m, dtype kv, int context);

/* Transient activations of one forward step over `tokens` tokens on one GPU,
 * `sampled` of which get logits: the residual stream and its normed copy,
 * q/k/v, attention output, gate, up and activated MLP width for every token,
 * and the fp32 logits with the sampler's fp32 probabilities for the sampled
 * positions only (a server computes logits where it samples: the last token
 * of each sequence).  An estimate of the peak working set, not an
 * allocator's trace. */
double activation_bytes(const model_spec *m, int tokens, int sampled, dtype act, int tp);

typedef struct {
    double usable_fraction;  /* share of the GPU's memory the server may use (0.90 is vLLM's default) */
    int activation_tokens;   /* tokens per step the activation reserve is sized for (max batched tokens) */
    int sampled_tokens;      /* positions per step that get logits (at most the sequences in a step) */
    double capacity;         /* bytes of one GPU; 0 = what the driver reports for the GPU row */
} memory_policy;

/* 0.90 usable, 8192 tokens per step, 256 sampled, the driver's capacity. */
memory_policy memory_policy_default(void);

/* The capacity the policy plans with: its own, or the GPU row's driver figure. */
double policy_capacity(const memory_policy *p, const gpu_spec *g);

typedef struct {
    double hbm;          /* memory of one GPU the plan starts from (driver-reported unless overridden) */
    double usable;       /* hbm * usable_fraction */
    double weights;      /* per GPU */
    double activations;  /* reserve per GPU */
    double kv_budget;    /* usable - weights - activations (may be negative) */
    double kv_per_token; /* per GPU */
    double kv_window_per_token; /* the windowed layers' share of it (0 without a window) */
    int window;          /* tokens a windowed layer keeps */
    double state_per_sequence; /* linear-attention state of one sequence (0 without linear layers) */
} replica_memory;

/* Plan one GPU of a tp replica.  Returns 0, or -1 with a message when the
 * shape is invalid or the weights and reserve do not fit.  When only the fit
 * fails, *out is still filled (with a kv_budget at or below zero), so a
 * table can show how far short the GPU falls. */
int replica_memory_plan(const model_spec *m, const gpu_spec *g, precision prec, int tp, memory_policy pol,
                        replica_memory *out, char *err, size_t errlen);

/* Sequences of `context` tokens whose KV fits the budget; 0 when none. */
int max_batch_for_memory(const replica_memory *r, int context);
/* Total tokens of KV the budget holds. */
double kv_token_capacity(const replica_memory *r);

/* ---- does a configuration fit?  The one check every timed result passes ---- */

/* A model resident on a GPU: its per-GPU share of weights and of the KV of
 * every sequence in the batch. */
typedef struct {
    const model_spec *model;
    precision prec;
    int tp; /* GPUs the model is split over; this GPU holds 1/tp of it */
} resident_model;

/* What the MTP modules a server drafts with add to one GPU of a tp group:
 * their weights (param_count.mtp_served, split like the model's) and the
 * KV of their layers per token of a sequence (0 and 0 without modules). */
double mtp_weight_bytes_per_gpu_at(const model_spec *m, precision prec, int tp);
double mtp_weight_bytes_per_gpu(const model_spec *m, dtype w, int tp);
double mtp_kv_bytes_per_token_per_gpu(const model_spec *m, dtype kv, int tp);

/* A serving engine's own default memory policy for rm on GPU row g (0 when
 * the engine is known, -1 when not: *out is then the default):
 *  - vllm: gpu_memory_utilization 0.9 of the GPU for weights, the activation
 *    peak of a max_num_batched_tokens step (8192) and the KV cache;
 *  - sglang: mem_fraction_static for weights and KV pool, the rest of the
 *    GPU the reserve for activations and graphs: on a GPU of under 90 GiB
 *    9.5 + tp/2 GiB reserved, under 160 GiB 12 + tp/2 (server_args.py);
 *  - trtllm: KvCacheConfig.free_gpu_memory_fraction 0.9 of the memory left
 *    once weights W and the activations A of a max_num_tokens step (8192)
 *    are allocated: KV = 0.9 (cap - W - A), a usable share of
 *    0.9 + 0.1 (W + A) / cap. */
int memory_policy_engine(const char *engine, const gpu_spec *g, const resident_model *rm, memory_policy *out);

typedef struct {
    double capacity;     /* one GPU, as planned (driver-reported unless overridden) */
    double usable;       /* capacity * usable fraction */
    double weights;      /* every resident model's share */
    double activations;  /* the reserve: the largest of the resident models' (they run one at a time) */
    double extra;        /* other fixed allocations: adapter slots, graph pools */
    double kv_budget;    /* usable - weights - activations - extra */
    double kv_per_token; /* every resident model's KV per token of one sequence, this GPU */
    double state_per_sequence; /* every resident model's linear-attention state of one sequence, this GPU */
    double kv_needed;    /* batch * (context * kv_per_token + state_per_sequence) (windows spared) */
    int max_batch;       /* sequences of `context` tokens the budget holds (0 when none) */
    int fits;            /* 1 when the weights fit and batch <= max_batch */
} fit_check;

/* Whether `batch` sequences of `context` tokens (prompt, generated and any
 * speculated tokens: everything whose KV is held) fit one GPU on which the
 * models rm[0..n-1] are resident, with `extra_bytes` of other fixed
 * allocations.  Fills *out either way and returns 0; -1 with a message only
 * for bad input (a shape step_shape_check refuses, n < 1, a bad policy). */
int memory_fit(const gpu_spec *g, memory_policy pol, const resident_model *rm, int n, double extra_bytes,
               int batch, int context, fit_check *out, char *err, size_t errlen);

/* One line for a result that does not fit: "batch 256 of 4096 tokens needs
 * 85.1 GB of KV per GPU; 24.3 GB are left, so the largest batch that fits is
 * 104". */
/* A fit of rm alone (memory_fit with n = 1) with rm's multi-token-
 * prediction modules resident too (served as the draft, mtp.h): their
 * weights (mtp_weight_bytes_per_gpu) and the KV of their layers added, the
 * largest batch and the verdict redone.  Returns 0, or -1 with a message
 * for a model without modules. */
int mtp_fit_adjust(const resident_model *rm, int batch, int context, fit_check *f, char *err, size_t errlen);

void fit_check_describe(const fit_check *f, int batch, int context, char *buf, size_t n);

/* Turn memory_fit's answer for one GPU of a tp replica (the whole model
 * split 1/tp with tp = l->tp, `batch` sequences of `context` tokens: one
 * attention rank's, any extra bytes already in) into that GPU's under
 * layout l: the weights become layout_weight_bytes_per_gpu's, the KV
 * budget and the largest batch follow (the KV is the rank's own, split
 * over its tp GPUs as before).  Returns 0, or -1 with a message for a
 * layout whose expert split does not divide the model's experts. */
int layout_fit_adjust(const model_spec *m, precision prec, const parallel_layout *l, int batch, int context,
                      fit_check *f, char *err, size_t errlen);

#endif
