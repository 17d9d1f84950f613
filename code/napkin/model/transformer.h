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
 *    MXFP4 experts are read at 4.25 bits, int4 group-32 experts at 4.5. */
#ifndef NAPKIN_TRANSFORMER_H
#define NAPKIN_TRANSFORMER_H

#include "op.h"
#include "pricing.h"
#include "rates.h"
#include "roofline.h"
#include "specs.h"
#include "units.h"
#include "weight_format.h"

#include <stddef.h>

typedef struct {
    dtype weights; /* stored weights (the values' dtype of weights_format when it is given) */
    dtype kv;      /* KV cache */
    dtype act;     /* activations moved between ops */
    dtype compute; /* whose tensor-core rate applies (bf16 for weight-only quantization) */
    weight_format weights_format; /* every weight but the routed experts (--weights); WF_AS_DTYPE: `weights` */
    weight_format moe_format;     /* the routed experts (--moe-weights); WF_AS_DTYPE: as released, else `weights` */
} precision;

/* All four the same, both formats WF_AS_DTYPE; for int4 weights the compute
 * dtype is bf16. */
precision precision_uniform(dtype d);
/* Bytes one dense weight occupies (everything but the routed experts:
 * attention, shared experts, dense layers, router, embedding, head, norms):
 * its format's (scales included), or the weights dtype's. */
double dense_weight_bytes(precision p);
/* Bytes one routed-expert weight occupies: its format's, or with
 * WF_AS_DTYPE expert_weight_bytes of the weights dtype. */
double routed_weight_bytes(const model_spec *m, precision p);
/* The class the routed experts are priced in: their format's, or with
 * WF_AS_DTYPE rate_class_moe of the weights and compute dtypes (block-scaled
 * fp8, MXFP4 as W4A16). */
rate_class routed_rate_class(const model_spec *m, precision p);
/* The class the dense GEMMs (projections, router, head) are priced in:
 * block-scaled fp8 weights (--weights fp8_block) in fp8 math have their own
 * (the engines run another kernel for them: per-group activation scales),
 * else rate_class_gemm of the weights and compute dtypes. */
rate_class dense_rate_class(precision p);

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
    double mtp_served;  /* what a server holds of them when it speculates with them: mtp less the
                           copies of the embedding and head, which it shares with the main model */
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
    int fused_add_norm; /* 1: each residual add runs inside the norm after it, one kernel
                           (the engines' fused_add_rmsnorm: engine_defaults); 0: apart */
} step_shape;

/* A prefill of `prompt` tokens for each of `batch` sequences with `context`
 * already cached (0 for a fresh prompt, more for a later chunk), sampling
 * only each sequence's last position. */
step_shape prefill_shape(int batch, int context, int prompt, int tp, precision prec);

/* A decode step: new_tokens = 1. */
step_shape decode_shape(int batch, int context, int tp, precision prec);

/* The op record (op_kind, op_cost) is price/op.h's: the pricing door
 * prices what the model fills. */

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
/* One RMSNorm of T tokens `width` wide, once per step (the record the
 * step's own norms use). */
op_cost norm_op_cost(const char *name, double T, double width, dtype act);
void attention_op_costs(double batch, double context, double new_tokens, double heads, double kv_heads,
                        double head_dim, dtype kv, dtype act, op_cost out[2]);

/* One latent attention (MLA) kernel of `heads` heads on one GPU: batch
 * sequences of new_tokens queries against context cached positions of a
 * latent kv_lora wide plus a rope key; absorbed 1 is decode's kernel over
 * the latent (FlashMLA), 0 prefill's over K and V expanded by kv_b (nope +
 * rope wide keys, v_head wide values).  The step (mla_ops) and the fit of
 * the measured MLA tables (calib/) both count it here. */
typedef struct {
    double batch, context, new_tokens, heads;
    double kv_lora, rope, nope, v_head; /* the model's latent widths */
    dtype kv, act;
    int absorbed;
} mla_shape;
/* out[0] the scores, out[1] the values: one kernel, each carrying half its
 * fixed cost and work items, in class mla_decode or mla_prefill. */
void mla_kernel_op_costs(const mla_shape *k, op_cost out[2]);

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

/* The routed experts of one MoE layer on one GPU as one grouped-GEMM
 * kernel ("routed_experts"): `pairs` token-expert pairs through
 * `width`-wide experts of which `touched` are read at eb bytes a weight;
 * its FLOPs and bytes the sum of mlp_step_ops' three records (gate_up,
 * activation, down), one work item per expert touched, class c
 * (rate_class_moe).  The step and the expert-parallel step both build it;
 * so does the fit of the MoE tables (published.c). */
op_cost moe_experts_op(int per_layer, double pairs, double touched, double h, double width, double eb, double ab,
                       rate_class c);

/* How many times the op occurs in a step: the layers of its kind, or 1. */
int op_repeats(const model_spec *m, const op_cost *op);

/* Experts of a mixture that at least one of `tokens` tokens routes to, in
 * expectation under uniform top-k routing: E * (1 - (1 - k/E)^tokens). */
double moe_experts_touched(const model_spec *m, double tokens);
/* The same under the shape's router: uniform at routing_skew 0, else the
 * Zipf-skewed expectation of moe_zipf_touched. */
double moe_step_experts_touched(const model_spec *m, const step_shape *s, double tokens);

/* The step over these ops, priced (step.c): every user of the cost model
 * wants both, so this header brings step.h's declarations along. */
#include "step.h"

#endif
