/* Expert parallelism: a mixture's routed experts spread over `ep` GPUs, the
 * attention run data-parallel (each GPU its own share of the sequences), and
 * two all-to-alls per MoE layer: dispatch (each token's hidden state to the
 * GPUs holding its top-k experts) and combine (the experts' outputs back).
 *
 * Conventions:
 *  - Each GPU holds `tokens` tokens of the step.  Under uniform routing a
 *    (token, expert) pair stays on its own GPU with probability 1/ep, so
 *    tokens * k * (ep-1)/ep pairs leave each GPU; but a token's copies bound
 *    for one GPU travel once (DeepEP and TensorRT-LLM's kernels fan them out
 *    on arrival), so it sends each token's hidden vector once to each other
 *    GPU its top-k reaches (moe.h moe_alltoall_bytes), and combine returns
 *    as many.
 *  - Of the ep-1 other GPUs, those in the same node (gpus_per_node) are
 *    reached over NVLink at the GPU row's link_bw, the rest over the
 *    network at net_bw per GPU; the two run at once, so an all-to-all takes
 *    the longer of the two plus the row's fixed collective latency.
 *  - Load imbalance: the busiest GPU receives `imbalance` (>= 1) times the
 *    mean, and the step waits for it.
 *  - The time: price_op's, the bound above on a plain row; on a calibrated
 *    row inside one node, the engine's measured kernel (decode's low-latency
 *    or prefill's throughput kernel, by `prefill`), a latency, a cost per
 *    token sent and the merged bytes over a bandwidth (rates.h a2a_rate). */
#ifndef NAPKIN_EXPERT_PARALLEL_H
#define NAPKIN_EXPERT_PARALLEL_H

#include "layout.h"
#include "memory.h"
#include "specs.h"
#include "transformer.h"

#include <stddef.h>

typedef struct {
    int ep;              /* GPUs the experts are spread over */
    int gpus_per_node;   /* GPUs joined by NVLink (the row's node_gpus: 8 on an HGX board, 72 in an NVL72) */
    double net_bw;       /* bytes/s per GPU across nodes (a 400 Gb/s NIC: 50e9) */
    double imbalance;    /* busiest GPU's load over the mean, >= 1 */
    double dispatch_bytes_per_value; /* 1 for fp8 dispatch, 2 for bf16 */
    double combine_bytes_per_value;  /* 2: outputs come back in bf16 */
    double routing_skew; /* 0: uniform routing; s > 0: a Zipf(s) router, whose hottest GPU
                            (moe_zipf_hot_rank) sets the imbalance and the experts it reads */
    int prefill;         /* 1: the prefill kernels (many tokens a sequence), 0: decode's */
    moe_exchange exchange; /* at attention_dp > 1: the all-to-all (0, the default) or all-gather and
                              reduce-scatter (layout.h); at attention_dp 1 no exchange is run */
} ep_layout;

typedef struct {
    double experts_per_gpu;   /* routed experts each GPU holds */
    double pairs_sent;        /* (token, expert) pairs a GPU sends to others, busiest GPU */
    double dispatch_bytes;    /* bytes a GPU sends in one dispatch (busiest GPU) */
    double combine_bytes;     /* and in one combine */
    double intra_share;       /* share of those bytes that stay inside the node */
    double dispatch_time;     /* one dispatch, seconds */
    double combine_time;      /* one combine */
    double layer_time;        /* dispatch + combine of one MoE layer */
    double step_time;         /* every MoE layer of a step */
} ep_cost;

/* The links and router of a group of ep GPUs on g when none are given: the
 * row's GPUs a node (gpu_node_gpus: 8 on an HGX board, 72 in an NVL72
 * rack), 50 GB/s per GPU across nodes (a 400 Gb/s NIC), no imbalance,
 * uniform routing, the dispatch in fp8 where the activations are one byte
 * (else bf16), the combine in bf16. */
ep_layout ep_links_default(int ep, precision prec, const gpu_spec *g);

/* The copies one GPU's tokens make, unmerged: `tokens` tokens, each to k
 * experts, (ep-1)/ep of the pairs leaving the GPU, `imbalance` times the
 * mean, a hidden vector of bytes_per_value each.  The count by hand that
 * an exercise starts from; the model sends the merged bytes
 * (ep_alltoall_merged_bytes), which are fewer. */
double ep_alltoall_bytes(double tokens, int k, int hidden, int ep, double imbalance, double bytes_per_value);
/* Bytes one GPU sends in one all-to-all with copies to one GPU merged
 * (moe_alltoall_bytes), `imbalance` times the mean. */
double ep_alltoall_merged_bytes(const model_spec *m, double tokens, int ep, double imbalance,
                                double bytes_per_value);

/* The all-to-all cost of one step with `tokens` tokens on each GPU.
 * Returns 0, or -1 with a message for a dense model, ep < 1, ep not
 * dividing the routed experts, imbalance < 1, a GPU row without link
 * figures, or net_bw <= 0 when ep spans nodes. */
int ep_step_cost(const model_spec *m, const gpu_spec *g, const ep_layout *l, double tokens, ep_cost *out,
                 char *err, size_t errlen);

/* The busiest GPU's load over the mean and the expected routed experts of
 * its own that `group_tokens` tokens of the whole group touch: the
 * layout's imbalance and (E/ep)(1 - (1 - k/E)^T) under uniform routing;
 * under a skewed router (routing_skew > 0) the hottest GPU's, from
 * moe_zipf_hot_rank, with the imbalance the larger of the two.  Returns 0,
 * or -1 with a message. */
int ep_busiest_gpu(const model_spec *m, const ep_layout *l, double group_tokens, double *imbalance,
                   double *touched, char *err, size_t errlen);

/* One step on one GPU of the expert-parallel group.  The attention runs in
 * ep/tp data-parallel replicas of tp GPUs each (tp = 1: data-parallel
 * attention; tp must divide ep); the shape is one replica's (its batch, its
 * tp).  Each GPU dispatches T/tp of its replica's T tokens; the decoder's ops
 * at that tp are kept but for the routed experts, replaced by this GPU's
 * share: its experts touched by the group's (T/tp) ep tokens, (T/tp) k
 * imbalance token-expert pairs (the shared experts, whole on every GPU, on
 * its own T/tp tokens), and a dispatch and a combine per MoE layer
 * (OP_ALLTOALL, priced by price_op).  At tp > 1 the attention's all-reduce
 * stays (in a MoE layer a reduce-scatter into the dispatch and an all-gather
 * after the combine, the same ring bytes) and the MLP's is left to the dense
 * layers.  Returns the op count, or -1 with a message (bad shape, tp not
 * dividing ep, what ep_step_cost refuses). */
int ep_decoder_step_ops(const model_spec *m, const gpu_spec *g, const step_shape *s, const ep_layout *l,
                        op_cost *ops, int max_ops, char *err, size_t errlen);

/* One step on one GPU of a replica laid out as pl (layout.h), generalizing
 * ep_decoder_step_ops (which is this at tp, ep / tp attention ranks,
 * moe_tp 1, moe_ep ep, and gives the numbers it always gave).  The shape is
 * one attention rank's: s->batch sequences on s->tp = pl->tp GPUs (its
 * attention, KV and dense projections split tp ways, decoder_step_ops).
 * The routed experts: each GPU holds experts / moe_ep of them, each a
 * 1/moe_tp slice (the shared experts 1/moe_tp), and the replica's
 * N = batch x new_tokens x attention_dp tokens reach them by the path
 * layout_moe_token_path (layout.h) decides from the layout and
 * links->exchange:
 *  - attention_dp 1 (replicated): decoder_step_ops at tp with the routed
 *    experts replaced by this GPU's: N k imbalance / moe_ep pairs at width
 *    ffn / moe_tp, no all-to-all, both TP all-reduces on every layer;
 *  - the all-to-all (attention_dp > 1, moe_ep > 1): each GPU dispatches its batch x new_tokens / tp tokens
 *    (links: the all-to-all's links, router and imbalance; its ep is set
 *    to moe_ep), every (token, expert) pair to the moe_tp GPUs of its
 *    expert's slices, and combines the outputs back: ep_step_cost's
 *    dispatch and combine at moe_ep with tokens x moe_tp; the GPU serves
 *    (k imbalance + shared) x moe_tp pairs per token it dispatches at
 *    width ffn / moe_tp; the MLP's all-reduce stays for the dense layers;
 *  - gathered (attention_dp > 1 with moe_ep 1, or the gather exchange):
 *    each GPU gathers all N tokens, runs its experts' 1/moe_tp slices on
 *    their N k imbalance / moe_ep pairs, and reduce-scatters the partial sums back: one all-reduce of
 *    N x hidden over the replica's GPUs (op.group) per MoE layer;
 *  - a dense model, or attention_dp = moe_ep = 1: decoder_step_ops (the
 *    ranks of a dense model are independent copies).
 * Returns the op count, or -1 with a message (a layout whose moe_tp x
 * moe_ep is not tp x attention_dp or whose tp is not the shape's, what
 * ep_step_cost refuses). */
int layout_decoder_step_ops(const model_spec *m, const gpu_spec *g, const step_shape *s, const parallel_layout *pl,
                            const ep_layout *links, op_cost *ops, int max_ops, char *err, size_t errlen);
int layout_decoder_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, const parallel_layout *pl,
                             const ep_layout *links, step_cost *out, char *err, size_t errlen);

/* One pass of m's multi-token-prediction module (mtp.h's mtp_pass_cost)
 * on one GPU of the layout pl: the module's decoder layer, of the MoE kind,
 * split as the main model's layers are (its experts over the same moe_tp x
 * moe_ep GPUs, its tokens through the same all-to-all), and the module's
 * glue ops.  s is the decode shape (new_tokens 1).  0, or -1 with a
 * message. */
int layout_mtp_pass_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, const parallel_layout *pl,
                         const ep_layout *links, step_cost *out, char *err, size_t errlen);

/* Their cost (step_cost_of_ops).  Returns 0, or -1 with a message. */
int ep_decoder_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, const ep_layout *l,
                         step_cost *out, char *err, size_t errlen);

/* Weights on one GPU of the group: everything but the routed experts
 * whole, and 1/ep of those. */
double ep_weight_bytes_per_gpu(const model_spec *m, dtype w, int ep);
/* The same with tensor-parallel attention replicas of tp GPUs: the routed
 * experts 1/ep, the shared experts whole, everything else 1/tp
 * (layout_weight_bytes_per_gpu at moe_tp 1, moe_ep ep). */
double ep_tp_weight_bytes_per_gpu(const model_spec *m, dtype w, int ep, int tp);

/* Whether `batch` sequences of `context` tokens fit one GPU of the group
 * (its own sequences' KV, whole: attention is data-parallel).  Fills *out
 * and returns 0; -1 with a message for a bad policy or ep. */
int ep_memory_fit(const model_spec *m, const gpu_spec *g, precision prec, memory_policy pol, int ep, int batch,
                  int context, fit_check *out, char *err, size_t errlen);

/* Turn memory_fit's answer for one GPU of a tp replica (the whole model
 * split 1/tp, `batch` sequences of `context` tokens, any extra bytes
 * already in) into that GPU's in an ep group: the weights become
 * ep_tp_weight_bytes_per_gpu's, the KV budget and the largest batch follow.
 * Returns 0, or -1 with a message (ep not dividing the experts, tp not
 * dividing ep). */
int ep_fit_adjust(const model_spec *m, precision prec, int ep, int tp, int batch, int context, fit_check *f,
                  char *err, size_t errlen);

#endif
