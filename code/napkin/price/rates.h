/* Achieved rates: how far measured kernels sit from the roofline, op class
 * by op class, in a few parameters with physical names.
 *
 * A compute op (a GEMM, an attention kernel, an elementwise pass) of `flop`
 * FLOPs moving `bytes` bytes takes
 *
 *     t = t0 + t_item * items + (tc^q + tm^q)^(1/q),
 *         tc = flop / (flop_frac * peak),  tm = bytes / (byte_frac * bandwidth)
 *
 *  - t0, the fixed cost of one kernel (launch tail, prologue, the last wave);
 *  - t_item, the cost of one work item the kernel splits into (attention:
 *    one sequence's KV head in decode, one 128-row query tile of one head
 *    in prefill), its setup and its output write: items = 0 for GEMMs;
 *  - flop_frac and byte_frac, the shares of the FLOP and byte ceilings that
 *    the kernel reaches when one of them is all that limits it;
 *  - q, the blend: how sharply the kernel turns from memory- to compute-bound
 *    (q -> infinity is the roofline's max; q = 1 is no overlap at all).
 * With t0 = 0, both fractions 1 and q -> infinity it is the roofline.
 *
 * Decode attention has two more terms, for ops that say how many cached
 * positions each work item reads (its span):
 *
 *     span <= RATE_SHORT_SPAN:  t = t0 + t_serial + (ti^q + tc^q + tm^q)^(1/q)
 *     span >  RATE_SHORT_SPAN:  t = t0 + t_serial + t_long + ti + (tc^q + tm^q)^(1/q)
 *         ti = t_item * items,  t_serial = (bytes / items) / (item_frac * bandwidth)
 *
 *  - a short cache fits the kernel's first tile, which it reads while it sets
 *    the item up, so the two overlap; a longer one is walked tile by tile
 *    after the setup, split over more blocks and merged, at t_long more;
 *  - t_serial, the tail: one work item's bytes, read at item_frac of the
 *    bandwidth with nothing left to overlap them (the last block of the
 *    split, then the merge).  It is small against a large batch's read and
 *    a visible share of a batch of a few sequences (item_frac = 0: no tail).
 * Ops with span 0 (GEMMs, prefill, elementwise) use the first formula.
 *
 * A collective (all-reduce) of `bytes` over tp GPUs takes the faster of two
 * algorithms, each a latency plus bytes over a bandwidth:
 *
 *     t = min(latency1 + bytes / bandwidth1, latency2 + bytes / bandwidth2)
 *
 * (one-shot: every GPU reads every peer's message, fast to start; two-shot:
 * reduce-scatter then all-gather, slower to start, more bandwidth).  One
 * pair of lines per TP degree: the measured curve, not one constant. */
#ifndef NAPKIN_RATES_H
#define NAPKIN_RATES_H

#include "units.h"

#include <stddef.h>

typedef enum {
    RC_GEMM_BF16,        /* projections with 16-bit weights (bf16, fp16; int4/int8 weight-only dequantize to them) */
    RC_GEMM_FP8,         /* projections with fp8 weights and activations (per-tensor scales) */
    RC_ATTN_DECODE_BF16, /* one new token per sequence against a 16-bit KV cache */
    RC_ATTN_DECODE_FP8,  /* the same against an fp8 KV cache */
    RC_ATTN_PREFILL,     /* many new tokens per sequence (prefill, verification) */
    RC_ELEMENTWISE,      /* norms, residual adds, activation products, embedding rows */
    /* The routed experts of one MoE layer, one fused grouped-GEMM kernel
     * (gate/up, activation, down) per weight format; items = the experts
     * touched on the GPU, t_item each one's tile-group setup (its weights'
     * first tiles, its slice of the scheduler), t0 the routing, permute and
     * the launch. */
    RC_MOE_BF16,         /* 16-bit expert weights */
    RC_MOE_FP8,          /* fp8 weights and activations, per-tensor scales */
    RC_MOE_FP8_BLOCK,    /* fp8 with 128 x 128 block scales (DeepSeek-V3's and Qwen3's fp8 releases) */
    RC_MOE_W4A16,        /* MXFP4 weights into 16-bit math (gpt-oss's released experts, a Triton kernel) */
    RC_MOE_INT4,         /* int4 weight-only, group-scaled, into 16-bit math (a Marlin WNA16 kernel) */
    RC_MLA_DECODE_BF16,  /* latent attention, absorbed (FlashMLA): queries against a 16-bit cached latent */
    RC_MLA_DECODE_FP8,   /* the same against an fp8 latent (an engine may run another kernel for it) */
    RC_MLA_PREFILL,      /* latent attention, expanded: prefill over per-head K and V made by kv_b */
    RC_GEMM_FP8_BLOCK,   /* projections with fp8 weights in 128 x 128 blocks and fp8 activations scaled per
                            128-wide group (the fp8 releases of the mixtures; the engines run their own
                            kernel for it: a calibration without the class prices it as RC_GEMM_FP8) */
    /* Gated DeltaNet linear attention (linear_attention.h): no work items
     * (each state matrix is the same size, its cost is its bytes). */
    RC_GDN_DECODE,       /* the recurrent step: each state read and written once */
    RC_GDN_PREFILL,      /* the chunked scan */
    RC_COUNT
} rate_class;

typedef struct {
    double t0;        /* seconds, fixed cost of one kernel */
    double t_item;    /* seconds per work item (0 for classes without items) */
    double flop_frac; /* share of the dense peak reached when compute-bound */
    double byte_frac; /* share of the HBM bandwidth reached when memory-bound */
    double blend;     /* q >= 1 */
    double item_frac; /* share of the bandwidth one work item's tail is read at (0: no tail) */
    double t_long;    /* seconds, the extra fixed cost of a cache longer than one tile */
} op_rate;

/* The cached positions one tile of a decode attention kernel holds. */
#define RATE_SHORT_SPAN 128

typedef struct {
    double latency1, bandwidth1; /* the algorithm that starts fast (s, B/s) */
    double latency2, bandwidth2; /* the one that moves bytes fast */
} link_rate;

/* TP degrees with their own all-reduce curve: 2, 4, 8. */
#define RATE_TP_SLOTS 3
int rate_tp_slot(int tp); /* 0, 1, 2 for tp 2, 4, 8; -1 otherwise */
int rate_slot_tp(int slot);

/* One phase of an expert-parallel all-to-all (a dispatch or a combine) on
 * one GPU of a group of `ep` GPUs inside one node:
 *
 *     t = latency + per_token * tokens + bytes / bandwidth
 *
 *  - latency, the fixed cost of one call (launch, the peers' handshake);
 *  - per_token, the cost of each token this GPU sends (routing metadata,
 *    layout, the receiver's bookkeeping);
 *  - bandwidth, the rate of the bytes it sends, each token's hidden vector
 *    counted once per other GPU it reaches (copies to one GPU merged;
 *    0: the measured times show no byte term).
 * Decode and prefill run different kernels (DeepEP low-latency against
 * normal/high-throughput), each phase its own line. */
typedef struct {
    double latency, per_token, bandwidth;
    int ep; /* the group size the line was measured at */
} a2a_rate;

typedef enum {
    A2A_DECODE_DISPATCH,
    A2A_DECODE_COMBINE,
    A2A_PREFILL_DISPATCH,
    A2A_PREFILL_COMBINE,
    A2A_KERNELS
} a2a_kernel;

/* "alltoall_decode_dispatch", ...; a2a_kernel_parse: -1 when unknown. */
const char *a2a_kernel_name(a2a_kernel k);
int a2a_kernel_parse(const char *s);
/* The kernel of one phase (combine 0 or 1) in decode or prefill (1). */
a2a_kernel a2a_kernel_of(int prefill, int combine);
/* Seconds for one phase that sends `tokens` tokens and `bytes` merged bytes. */
double a2a_rate_time(const a2a_rate *r, double tokens, double bytes);

#define RATE_NAME_MAX 80

typedef struct rate_model {
    char name[RATE_NAME_MAX]; /* "published:h100_sxm/trtllm", or a measured set's directory */
    char gpu[32];             /* the GPU table key the rates belong to ("h100"), or "" */
    op_rate op[RC_COUNT];
    int has_op[RC_COUNT];
    link_rate allreduce[RATE_TP_SLOTS];
    int has_allreduce[RATE_TP_SLOTS];
    a2a_rate alltoall[A2A_KERNELS]; /* the engine's own all-to-all kernels (published.h) */
    int has_alltoall[A2A_KERNELS];
} rate_model;

const char *rate_class_name(rate_class c);
/* "gemm_bf16" -> RC_GEMM_BF16; -1 when unknown. */
int rate_class_parse(const char *s);

/* The time of a compute op of `items` work items, each reading `span`
 * cached positions (0 where the op has no such span), under r (see above). */
double op_rate_time(const op_rate *r, double flop, double bytes, double items, double span, double peak,
                    double bandwidth);
/* The time of one collective of `bytes` under l. */
double link_rate_time(const link_rate *l, double bytes);

/* The class a GEMM with weights (and compute) of dtype d is priced in.
 * fp4 math (nvfp4 weights and activations) has no class of its own yet:
 * no fp4 GEMM table is fitted, so its GEMMs take the block-scaled
 * low-precision classes (gemm_fp8, and moe_fp8_block for the experts), a
 * calibration's achieved shares of them applied to the fp4 peak; the
 * roofline, which has no classes, is exact either way. */
rate_class rate_class_gemm(dtype weights, dtype compute);
/* The class the routed experts are priced in: weights (the experts' stored
 * dtype; four_bit when they are stored at 4 bits whatever the dtype, as
 * gpt-oss's MXFP4 experts are) and compute.  fp8 experts are block-scaled
 * unless fp8_per_tensor: the fp8 checkpoints of the mixtures we price
 * (DeepSeek-V3, Qwen3-30B-A3B-FP8, Qwen3-235B-A22B-FP8) carry 128 x 128
 * block scales in their quantization_config. */
rate_class rate_class_moe(dtype weights, dtype compute, int four_bit, int fp8_per_tensor);
/* The class a calibration without class c prices its ops in instead (a
 * MoE class: the GEMM class of its weights, items dropped, as before the
 * MoE classes existed; block-scaled fp8 GEMMs: the per-tensor fp8 class);
 * c itself for every other class. */
rate_class rate_class_fallback(rate_class c);
/* 1 for the latent attention classes, which compute in bf16 whatever the
 * weights or the cache (the measured tables' mla_dtype is bfloat16): priced
 * at the bf16 peak, roofline and calibration alike (pricing.c). */
int rate_class_is_mla(rate_class c);
/* 1 for the Gated DeltaNet classes, whose kernels compute in bf16 and fp32
 * whatever the step's weights: priced at the bf16 peak, as latent attention. */
int rate_class_is_gdn(rate_class c);
/* The class of absorbed latent attention over a latent cache of dtype kv. */
rate_class rate_class_mla_decode(dtype kv);
/* The class of decode attention over a KV cache of dtype kv. */
rate_class rate_class_decode_attention(dtype kv);

#endif
