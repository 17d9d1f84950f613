/* A decoder-only transformer, op by op: parameter counts, and the FLOPs and
 * bytes each operation of one forward step moves on one GPU of a
 * tensor-parallel group.  This is the cost model every chapter uses.
 *
 * Conventions (stated once, here):
 *  - A multiply-add is 2 FLOP.  A projection of T tokens through an in x out
 *    weight is 2*T*in*out FLOP and reads in*out weights.
 *  - Tensor parallelism splits attention heads, KV heads, the MLP width and the
 *    vocabulary over `tp` GPUs (Megatron style).  KV heads are replicated when
 *    tp exceeds their number.  Norms and residual adds run whole on every GPU.
 *  - Communication (comm.h) when tp > 1: two all-reduces of the residual
 *    stream per layer (after o_proj and after down_proj), one after the
 *    vocabulary-split embedding, and an all-gather of the logits.  Their time
 *    adds to the step (no overlap); skip_comm leaves them out (pure roofline).
 *  - Attention is fused (flash-style): scores stay on chip; the op reads Q,
 *    the cached K or V of every attended position, and writes the new K or V.
 *  - A step processes `new_tokens` tokens for each of `batch` sequences, each
 *    with `context` tokens already cached; decode is new_tokens = 1.
 *  - Logits are computed for every new token (what speculative verification
 *    needs), or with logits_last for the last new token of each sequence
 *    only (what a prefill that samples its first output token needs).
 *  - Mixture of experts: each token visits experts_active of experts; the
 *    weights read are those of the experts that some token in the step
 *    touches, expected value E*(1-(1-k/E)^T) under uniform routing (moe.h
 *    for skewed routing), plus the shared experts every token visits; a
 *    mixture's dense layers (dense_layers) run one MLP ffn wide.
 *  - Multi-head latent attention (kv_lora_rank > 0): see mla_ops in
 *    transformer.c; windowed layers attend to at most `window` positions;
 *    MXFP4 experts are read at 4.25 bits. */
#ifndef NAPKIN_TRANSFORMER_H
#define NAPKIN_TRANSFORMER_H

#include "rates.h"
#include "roofline.h"
#include "specs.h"
#include "units.h"

#include <stddef.h>

typedef struct {
    dtype weights; /* stored weights */
    dtype kv;      /* KV cache */
    dtype act;     /* activations moved between ops */
    dtype compute; /* whose tensor-core rate applies (bf16 for weight-only quantization) */
} precision;

/* All four the same; for int4 weights the compute dtype is bf16. */
precision precision_uniform(dtype d);

typedef struct {
    double embedding; /* vocab x hidden */
    double head;      /* output projection; 0 when tied */
    double attention; /* q, k, v, o of all layers */
    double mlp;       /* all experts of all layers */
    double router;    /* MoE gate of all layers */
    double norms;     /* RMSNorm gains */
    double total;     /* everything stored */
    double active;    /* used per token: total less the experts not routed to */
    double routed;    /* the routed experts of all layers (in mlp): what MXFP4 stores at 4.25 bits */
    double active_nonembedding; /* active less the input embedding (gpt-oss's and many cards' convention) */
    double mtp;         /* the multi-token-prediction modules as released (their own embedding and head
                           copies included); not in total */
    double mtp_active;  /* used per token in them: one MoE layer's active part, eh_proj, norms
                           (the embedding and head are the main model's) */
} param_count;

/* Layers by kind (the arch column of models.tsv): MoE layers and the dense
 * ones among them, windowed attention layers and full ones. */
int model_moe_layers(const model_spec *m);
/* Bytes per stored routed-expert weight: MXFP4's when the model releases
 * its experts so, else the weights' dtype. */
double expert_weight_bytes(const model_spec *m, dtype weights);

param_count model_params(const model_spec *m);

typedef struct {
    int batch;      /* sequences in the step */
    int context;    /* tokens already cached per sequence */
    int new_tokens; /* tokens per sequence this step: 1 = decode */
    int tp;         /* tensor-parallel degree */
    precision prec;
    int skip_comm;  /* 1: leave the TP collectives out (the pure roofline) */
    int logits_last; /* 1: logits for each sequence's last new token only (a prefill) */
    double routing_skew; /* a mixture's router: 0 uniform, s > 0 Zipf(s) over the experts (moe.h) */
} step_shape;

/* A prefill of `prompt` tokens for each of `batch` sequences with `context`
 * already cached (0 for a fresh prompt, more for a later chunk), sampling
 * only each sequence's last position. */
step_shape prefill_shape(int batch, int context, int prompt, int tp, precision prec);

/* A decode step: new_tokens = 1. */
step_shape decode_shape(int batch, int context, int tp, precision prec);

typedef enum {
    OP_PROJECTION, /* a GEMM against a weight matrix */
    OP_ATTENTION,  /* against the KV cache */
    OP_NORM,
    OP_ELEMENTWISE, /* residual adds, the gated activation */
    OP_EMBEDDING,
    OP_LOGITS,
    OP_ALLREDUCE, /* a TP collective: comm_bytes over the links, no HBM traffic counted */
    OP_ALLGATHER,
    OP_ALLTOALL   /* expert-parallel dispatch or combine: comm_bytes sent by this GPU (comm.h) */
} op_kind;

/* Which layers an op occurs in (op_cost.per_layer). */
enum {
    OP_ONCE = 0,        /* once per step */
    OP_EVERY_LAYER = 1,
    OP_FULL_ATTN_LAYERS, /* layers attending to the whole context */
    OP_WINDOW_LAYERS,    /* sliding-window or chunked layers */
    OP_MOE_LAYERS,       /* layers whose MLP is the experts */
    OP_DENSE_LAYERS      /* a mixture's dense layers (DeepSeek-V3's first three) */
};

typedef struct {
    const char *name; /* "qkv_proj", "attn_score", ... (static) */
    op_kind kind;
    int per_layer;       /* OP_ONCE, OP_EVERY_LAYER, or the layers of one kind (non-zero: per layer) */
    double flop;         /* one occurrence on one GPU */
    double weight_bytes; /* weights and norm gains read */
    double kv_bytes;     /* KV cache read and written */
    double act_bytes;    /* activations read and written */
    double comm_bytes;   /* collectives: the message (all-reduce) or gathered tensor (all-gather) */
    rate_class rate;     /* the class a calibration prices it in (pricing.h) */
    double fixed_share;  /* its share of one kernel's fixed cost: 1, or 0.5 for each half of fused attention */
    double items;        /* work items a calibration charges t_item for (rates.h); 0 for all but attention */
    double span;         /* cached positions each decode attention item reads (rates.h); 0 elsewhere */
    double comm_intra_share; /* OP_ALLTOALL: share of comm_bytes that stays inside the node (NVLink) */
    double comm_net_bw;      /* OP_ALLTOALL: bytes/s per GPU across nodes */
} op_cost;

#define DECODER_MAX_OPS 40

/* The weight matrices of one layer on one GPU of a tp group (Megatron
 * split), in -> out: qkv_proj, o_proj, gate_up_proj, down_proj (the MLP
 * ones per expert).  Returns how many (4), the shapes the step's
 * projections and the GEMM measurements both use. */
typedef struct {
    const char *name;
    int in, out;
} projection_shape;

#define LAYER_PROJECTIONS 4
int layer_projection_shapes(const model_spec *m, int tp, projection_shape *out);

/* The cost model's own records of one GEMM and of one attention kernel,
 * outside a model: what a measured kernel table is fitted against, so that
 * the fit and the step count FLOPs and bytes the same way.
 * gemm_op_cost: T tokens through an in x out weight of dtype weights.
 * attention_op_costs: batch sequences of new_tokens queries each against
 * context cached tokens, heads query heads sharing kv_heads KV heads of
 * head_dim; out[0] the scores (QK^T, softmax), out[1] the values (PV). */
op_cost gemm_op_cost(double T, double in, double out, dtype weights, dtype compute, dtype act);
void attention_op_costs(double batch, double context, double new_tokens, double heads, double kv_heads,
                        double head_dim, dtype kv, dtype act, op_cost out[2]);

/* Check a shape against a model: batch, context, new_tokens and tp positive,
 * tp dividing the attention heads (and the KV heads, or they dividing tp).
 * Returns 0, or -1 with a message. */
int step_shape_check(const model_spec *m, const step_shape *s, char *err, size_t errlen);

/* Fill ops[] with the operations of one forward step on one GPU; returns how
 * many (at most max_ops), or -1 for a bad shape (see step_shape_check). */
int decoder_step_ops(const model_spec *m, const step_shape *s, op_cost *ops, int max_ops);

/* The three ops of an MLP (gate_up, activation, down, named by names[]):
 * T*k token-expert pairs through `width`-wide experts with `weights_read`
 * experts' weights read at eb bytes each (k = 1, weights_read = 1 for a
 * dense MLP); per_layer as in op_cost.  Writes 3 ops, returns 3. */
int mlp_step_ops(const char *const names[3], int per_layer, double T, double k, double h, double width,
                 double weights_read, double eb, double ab, op_cost *out);

/* HBM bytes of the op (weights, KV, activations; not the link traffic). */
double op_bytes(const op_cost *op);
/* 1 for a collective (OP_ALLREDUCE, OP_ALLGATHER, OP_ALLTOALL). */
int op_is_comm(const op_cost *op);
/* Time of one occurrence on one GPU, priced by pricing.h: the roofline time
 * of a compute op and the ring time (comm.h) of a collective over tp GPUs, or
 * their calibrated times where g carries achieved rates.  *bound (may be
 * NULL) is the roofline's verdict, set for compute ops only. */
double op_time(const op_cost *op, const gpu_spec *g, double peak, int tp, bound_kind *bound);
/* How many times the op occurs in a step: the layers of its kind, or 1. */
int op_repeats(const model_spec *m, const op_cost *op);

typedef struct {
    double flop;         /* per GPU per step */
    double weight_bytes; /* per GPU per step */
    double kv_bytes;
    double act_bytes;
    double bytes;
    double comm_bytes;   /* collectives' message bytes per step */
    double time;         /* sum over ops of the time of each: rooflines plus collectives */
    double time_comm;    /* the collectives' share of time (0 at tp 1 or with skip_comm) */
    double time_memory;  /* sum of bytes / bandwidth */
    double time_compute; /* sum of flop / peak */
    double intensity;    /* flop / bytes for the whole step */
    bound_kind bound;    /* which sum is larger (communication aside) */
    double tokens;       /* new tokens the step processes: batch * new_tokens */
} step_cost;

/* Roofline cost of one step.  Returns 0, or -1 with a message for a bad
 * shape, a GPU without a rate for the compute dtype, or tp > 1 on a GPU row
 * without link figures (unless skip_comm). */
int decoder_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, step_cost *out,
                      char *err, size_t errlen);

/* The same sums over a given list of ops (decoder_step_ops' or a variant's,
 * such as expert_parallel.h's): the shape gives the tokens and the tp group
 * of the collectives.  Returns 0, or -1 with a message for a GPU without a
 * rate for the compute dtype. */
int step_cost_of_ops(const model_spec *m, const gpu_spec *g, const step_shape *s, const op_cost *ops, int n,
                     step_cost *out, char *err, size_t errlen);

/* The decode batch at which a projection's FLOP per weight byte, 2*B /
 * bytes-per-weight, reaches the GPU's ridge for the compute dtype: the
 * "batch 295" of bf16 on an H100.  0 when the GPU has no such rate. */
double ridge_batch(const gpu_spec *g, precision p);

/* The smallest decode batch in 1..batch_max whose whole step is
 * compute-bound (FLOP time above byte time; communication aside), found by
 * bisection on decoder_step_cost: the step's FLOPs grow with each sequence
 * and its bytes are fixed weights plus a per-sequence share, so its
 * intensity rises with the batch and the crossing is a single point.  The
 * shape gives context, new_tokens, tp and precision (its batch is ignored).
 * *batch = 0 when even batch_max is memory-bound.  Returns 0, or -1 with a
 * message for a bad shape or batch_max < 1. */
int compute_bound_batch(const model_spec *m, const gpu_spec *g, const step_shape *s, int batch_max, int *batch,
                        char *err, size_t errlen);

/* Experts of a mixture that at least one of `tokens` tokens routes to, in
 * expectation under uniform top-k routing: E * (1 - (1 - k/E)^tokens). */
double moe_experts_touched(const model_spec *m, double tokens);
/* The same under the shape's router: uniform at routing_skew 0, else the
 * Zipf-skewed expectation of moe_zipf_touched. */
double moe_step_experts_touched(const model_spec *m, const step_shape *s, double tokens);

/* What the replica serves: tokens of the whole batch per second. */
double step_tokens_per_second(const step_cost *c);
/* What one user sees: that sequence's new tokens per second. */
double step_user_tokens_per_second(const step_cost *c, const step_shape *s);

#endif
