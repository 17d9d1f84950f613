/* Memory of a serving replica, per GPU: weights, KV cache, activations, and
 * the largest batch the KV budget holds at a context length. */
#ifndef NAPKIN_MEMORY_H
#define NAPKIN_MEMORY_H

#include "specs.h"
#include "transformer.h"

/* All parameters stored at dtype w. */
double weight_bytes(const model_spec *m, dtype w);
/* Weights on one GPU of a tp group (everything sharded evenly). */
double weight_bytes_per_gpu(const model_spec *m, dtype w, int tp);

/* K and V of every layer for one token: 2 * layers * kv_heads * head_dim * bytes.
 * Uses KV heads, not attention heads (GQA). */
double kv_bytes_per_token(const model_spec *m, dtype kv);
/* The share one GPU holds: KV heads split over tp, replicated when tp > kv_heads. */
double kv_bytes_per_token_per_gpu(const model_spec *m, dtype kv, int tp);
/* One sequence of `context` tokens, whole model. */
double kv_bytes_per_sequence(const model_spec *m, dtype kv, int context);

/* Transient activations of one forward step over `tokens` tokens on one GPU:
 * the residual stream and its normed copy, q/k/v, attention output, gate, up
 * and activated MLP width, and fp32 logits.  An estimate of the peak working
 * set, not an allocator's trace. */
double activation_bytes(const model_spec *m, int tokens, dtype act, int tp);

typedef struct {
    double usable_fraction;  /* share of HBM the server may use (0.90 is vLLM's default) */
    int activation_tokens;   /* tokens per step the activation reserve is sized for */
} memory_policy;

memory_policy memory_policy_default(void);

typedef struct {
    double hbm;          /* datasheet memory of one GPU */
    double usable;       /* hbm * usable_fraction */
    double weights;      /* per GPU */
    double activations;  /* reserve per GPU */
    double kv_budget;    /* usable - weights - activations (may be negative) */
    double kv_per_token; /* per GPU */
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

#endif
