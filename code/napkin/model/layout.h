/* A replica's parallel layout, in the terms the engines and their measured
 * runs use (the columns tp_size, attention_dp_size, moe_tp_size,
 * moe_ep_size):
 *
 *   tp            tensor parallelism inside one attention rank;
 *   attention_dp  data-parallel attention ranks, each holding its own
 *                 sequences; the replica spans tp x attention_dp GPUs;
 *   moe_tp        the tensor split of every routed expert;
 *   moe_ep        the expert split: each GPU holds experts / moe_ep experts,
 *                 each a 1/moe_tp slice; moe_tp x moe_ep = tp x attention_dp.
 *
 * A dense model has moe_tp = tp x attention_dp and moe_ep = 1 (its MLP is
 * split like its attention within a rank; attention_dp ranks of a dense
 * model are independent copies).  Flags not given are 0 and resolve so:
 *   - attention_dp not given: moe_tp x moe_ep / tp when both expert flags
 *     are given; moe_ep / tp when only moe_ep is (the experts whole on each
 *     GPU: the meaning --ep has always had, ep / tp attention replicas of
 *     tp GPUs); else 1;
 *   - then moe_tp not given: tp x attention_dp / moe_ep (moe_ep not given:
 *     1, so the experts are split like the rest of the replica);
 *   - then moe_ep not given: tp x attention_dp / moe_tp. */
#ifndef NAPKIN_LAYOUT_H
#define NAPKIN_LAYOUT_H

#include "specs.h"

#include <stddef.h>

typedef struct {
    int tp;
    int attention_dp;
    int moe_tp;
    int moe_ep;
} parallel_layout;

/* The layout of no parallelism: every degree 1. */
parallel_layout layout_single(void);

/* The layout of the flags as given (0 = not given, see above) for model m.
 * Refuses, naming the flag: a degree below 0 (or tp below 1), an expert
 * flag on a dense model, moe_tp x moe_ep != tp x attention_dp, moe_ep not
 * dividing the routed experts, tp not dividing the attention heads.
 * `prefix` is put before each flag's name in a message ("" or "prefill-").
 * Returns 0, or -1 with a message. */
int layout_resolve(const model_spec *m, const char *prefix, int tp, int attention_dp, int moe_tp, int moe_ep,
                   parallel_layout *out, char *err, size_t errlen);

/* GPUs one replica spans: tp x attention_dp. */
int layout_gpus(const parallel_layout *l);

/* 1 when the experts are split over more than one expert group. */
int layout_has_ep(const parallel_layout *l);

/* How the exchange of a MoE layer's tokens is run between the attention
 * ranks when there are several (attention_dp > 1) and the experts are split
 * by expert (moe_ep > 1): an all-to-all that sends each token to the GPUs of
 * its experts and back (DeepEP's and TensorRT-LLM's kernels; the default, the
 * kernels napkin's measured all-to-all classes time), or an all-gather of
 * every rank's tokens and a reduce-scatter of the partial sums (the engines'
 * plain NCCL path, which aiconfigurator-core 0.12.0 prices for its fused MoE
 * dispatch when no wide-EP backend is chosen). */
typedef enum { MOE_EXCHANGE_ALLTOALL = 0, MOE_EXCHANGE_GATHER } moe_exchange;

/* How a MoE layer's tokens reach its experts' GPUs in a layout. */
typedef enum {
    MOE_TOKENS_REPLICATED, /* attention_dp 1: every GPU of the TP group holds every token of the step, runs its
                              experts' slices on all of them, and the all-reduce the group already does after
                              the MLP sums the partial outputs (TensorRT-LLM, vLLM and SGLang without DP
                              attention; aiconfigurator-core prices the dispatch there as that all-reduce) */
    MOE_TOKENS_ALLTOALL,   /* attention_dp > 1, moe_ep > 1 and the all-to-all exchange: dispatch and combine */
    MOE_TOKENS_GATHERED    /* attention_dp > 1 otherwise: all-gather the replica's tokens, reduce-scatter back */
} moe_token_path;

/* The one place that decides the path of a layout's MoE tokens, from its
 * attention_dp and moe_ep and the exchange the engine runs at
 * attention_dp > 1. */
moe_token_path layout_moe_token_path(const parallel_layout *l, moe_exchange exchange);

#endif
