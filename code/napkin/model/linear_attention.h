/* Linear attention: Gated DeltaNet (Yang, Kautz and Hatamizadeh, "Gated
 * Delta Networks: Improving Mamba2 with Delta Rule", ICLR 2025), the
 * linear_attention layers of Qwen3.5 (model_spec.linear_layers and the
 * linear_* widths, read from the config's linear_num_key_heads,
 * linear_num_value_heads, linear_key_head_dim, linear_value_head_dim,
 * linear_conv_kernel_dim and mamba_ssm_dtype).
 *
 * A layer keeps, per sequence, one state matrix of key dim x value dim per
 * value head (at state_bytes a value) and the last conv - 1 inputs of its
 * causal convolution over q, k and v (at the activation dtype), whatever
 * the context: it grows no cache.  Decode reads and writes that state once
 * a token; prefill runs the chunked form of the delta rule (Yang et al.,
 * "Parallelizing Linear Transformers with the Delta Rule over Sequence
 * Length", NeurIPS 2024: chunks of C = 64 tokens, the WY representation
 * inside a chunk, the state carried between chunks). */
#ifndef NAPKIN_LINEAR_ATTENTION_H
#define NAPKIN_LINEAR_ATTENTION_H

#include "op.h"
#include "specs.h"
#include "units.h"

/* The chunk of the chunked scan (flash-linear-attention's chunk_gated_delta_rule: 64). */
#define LINEAR_CHUNK 64

/* Parameters of one linear-attention layer: in_proj_qkvz (hidden -> 2 Kd +
 * 2 Vd: q, k, v and the output gate z), in_proj_ba (hidden -> 2 value heads:
 * the write strength beta and the decay a), the depthwise conv1d over q, k,
 * v (conv taps each), dt_bias and A_log (one per value head), the gated
 * RMSNorm's gain (value dim) and out_proj (Vd -> hidden); Kd = key heads x
 * key dim, Vd = value heads x value dim. */
double linear_params_per_layer(const model_spec *m);

/* Value (state) heads on one GPU of a tp group: split, or one when tp
 * exceeds them. */
double linear_v_heads_local(const model_spec *m, int tp);
double linear_k_heads_local(const model_spec *m, int tp);

/* Bytes of one sequence's state in one linear layer on one GPU: the
 * recurrent state (value heads x key dim x value dim x state_bytes) and the
 * convolution's (conv - 1) x (2 Kd + Vd) / tp inputs at conv_bytes. */
double linear_state_bytes_per_layer(const model_spec *m, double conv_bytes, int tp);
/* Every linear layer's: what one sequence holds however long it is. */
double linear_state_bytes_per_sequence(const model_spec *m, double conv_bytes, int tp);

/* The Gated DeltaNet kernel of one layer on one GPU: `batch` sequences of
 * `new_tokens` tokens each, kh key heads and vh value heads of kd x vd,
 * state at sb bytes a value, q/k/v/out at ab.  Decode (new_tokens 1): the
 * recurrent step, class gdn_decode; prefill: the chunked scan, class
 * gdn_prefill.  OP_LINEAR_LAYERS. */
op_cost linear_gdn_op(double batch, double new_tokens, double kh, double vh, double kd, double vd, double sb,
                      double ab);

/* The ops of one linear-attention layer (projections, the convolution, the
 * kernel, the gated norm, out_proj), OP_LINEAR_LAYERS each, written to
 * out (LINEAR_OPS of them): T = batch x new_tokens tokens, weights at wb,
 * activations at ab bytes; projections in class RC_GEMM_BF16 (the step
 * names the class from its precision). */
#define LINEAR_OPS 6
int linear_attention_ops(const model_spec *m, double batch, double new_tokens, int tp, double wb, double ab,
                         op_cost *out);

#endif
