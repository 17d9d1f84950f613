/* DeepSeek sparse attention (DeepSeek-AI, "DeepSeek-V3.2-Exp: Boosting
 * Long-Context Efficiency with DeepSeek Sparse Attention", 2025), the
 * attention of GLM-5 (glm_moe_dsa): latent attention (MLA) whose queries
 * each read only the dsa_topk cached tokens a lightweight indexer picks
 * (model_spec.dsa_heads, dsa_dim, dsa_topk, read from the config's
 * index_n_heads, index_head_dim, index_topk).
 *
 * The indexer of a layer projects the query's low-rank latent to dsa_heads
 * x dsa_dim (wq_b), the hidden state to one dsa_dim key (wk, then a
 * LayerNorm) and to one weight per head (weights_proj); each query scores
 * every cached key (ReLU of q.k per head, summed by the weights) and keeps
 * the top dsa_topk.  Its keys are cached beside the latent, in fp8 with one
 * fp32 scale per 128 values (SGLang's index cache, index_head_dim +
 * index_head_dim / 128 * 4 bytes a token).  The engines replicate the
 * indexer on every GPU of a TP group (its heads are not split). */
#ifndef NAPKIN_SPARSE_ATTENTION_H
#define NAPKIN_SPARSE_ATTENTION_H

#include "op.h"
#include "specs.h"
#include "units.h"

/* 1 when the model has sparse attention. */
int dsa_enabled(const model_spec *m);

/* Bytes of one token's indexer key in one layer (fp8 values and their fp32
 * block scales); 0 without sparse attention. */
double dsa_key_bytes_per_token_layer(const model_spec *m);

/* Parameters of one layer's indexer: wq_b (q_lora x heads x dim), wk
 * (hidden x dim), k_norm (a LayerNorm's gain and bias, 2 x dim) and
 * weights_proj (hidden x heads); 0 without sparse attention. */
double dsa_params_per_layer(const model_spec *m);

/* Cached positions one new token's attention reads when `context` tokens
 * precede the step's n new ones: all of them, or the top-k past it
 * (decode: min(context + 1, topk)). */
double dsa_attended_context(const model_spec *m, double context, double new_tokens);

/* The indexer's ops on one GPU for `batch` sequences of `new_tokens` new
 * tokens over `context` cached ones: its three projections (weights at wb,
 * activations at ab; the key's bytes written to the cache on index_k) and
 * the scoring and top-k pick over every cached key, in `scan_class`.
 * DSA_INDEXER_OPS of them, written to out. */
#define DSA_INDEXER_OPS 4
int dsa_indexer_ops(const model_spec *m, double batch, double new_tokens, double context, double wb, double ab,
                    rate_class scan_class, op_cost *out);

/* The scoring and top-k pick alone (the last of dsa_indexer_ops): every
 * new token scores every cached key and the new ones before it. */
op_cost dsa_indexer_scan_op(const model_spec *m, double batch, double new_tokens, double context,
                            rate_class scan_class);

#endif
