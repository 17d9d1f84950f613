/* The op record: one piece of work the pricing door (pricing.h) turns into
 * seconds.  Every module that wants a time describes its work as an op_cost
 * of one kind, with the FLOPs and bytes of one occurrence on one GPU, and
 * asks price_op; the model (transformer.h) fills these for a decoder step.
 *
 * What each kind counts, and so how price_op prices it:
 *  - compute kinds (projection, attention, norm, elementwise, embedding,
 *    logits): flop and the HBM bytes of weight_bytes + kv_bytes + act_bytes,
 *    priced in their rate class `rate` (rates.h);
 *  - collectives (all-reduce, all-gather over the tp group; all-to-all of
 *    expert parallelism): comm_bytes over the GPU row's links;
 *  - a point-to-point transfer: comm_bytes over one link, a latency plus
 *    bytes over its bandwidth (the op's own link, or the row's);
 *  - a host load: comm_bytes from host memory over the row's host_bw;
 *  - an HBM read: the HBM bytes read at the row's mem_bw, no FLOPs. */
#ifndef NAPKIN_OP_H
#define NAPKIN_OP_H

#include "rates.h"

typedef enum {
    OP_PROJECTION, /* a GEMM against a weight matrix */
    OP_ATTENTION,  /* against the KV cache */
    OP_NORM,
    OP_ELEMENTWISE, /* residual adds, the gated activation */
    OP_EMBEDDING,
    OP_LOGITS,
    OP_ALLREDUCE, /* a TP collective: comm_bytes over the links, no HBM traffic counted */
    OP_ALLGATHER,
    OP_ALLTOALL,  /* expert-parallel dispatch or combine: comm_bytes sent by this GPU (comm.h) */
    OP_P2P,       /* a point-to-point transfer of comm_bytes: a pipeline hand-off, a KV cache sent on */
    OP_HOST_LOAD, /* comm_bytes copied from host memory into HBM (an adapter brought in) */
    OP_HBM_READ   /* the HBM bytes read and nothing else (a weight read a step pays once) */
} op_kind;

/* Which layers an op occurs in (op_cost.per_layer). */
enum {
    OP_ONCE = 0,        /* once per step */
    OP_EVERY_LAYER = 1,
    OP_FULL_ATTN_LAYERS, /* layers attending to the whole context */
    OP_WINDOW_LAYERS,    /* sliding-window or chunked layers */
    OP_MOE_LAYERS,       /* layers whose MLP is the experts */
    OP_DENSE_LAYERS,     /* a mixture's dense layers (DeepSeek-V3's first three) */
    OP_LINEAR_LAYERS     /* linear-attention layers (Qwen3.5's Gated DeltaNet: linear_attention.h) */
};

/* Whose tensor-core peak an op's math runs at (op_cost.math). */
typedef enum {
    OP_MATH_STEP = 0, /* the peak the step is priced at (its compute dtype) */
    OP_MATH_BF16,     /* 16-bit math whatever the step's: experts in bf16 or int4_wo beside fp8 GEMMs */
    OP_MATH_FP8,      /* fp8 math whatever the step's: fp8 experts beside 16-bit GEMMs */
    OP_MATH_FP4       /* fp4 math (nvfp4 weights): GEMMs on the fp4 tensor cores beside bf16 or fp8 attention */
} op_math;

/* The dtype whose peak an op of math m runs at (DT_BF16 for OP_MATH_STEP:
 * the caller keeps the step's peak then). */
dtype op_math_dtype(op_math m);

typedef struct {
    const char *name; /* "qkv_proj", "attn_score", ... (static) */
    op_kind kind;
    int per_layer;       /* OP_ONCE, OP_EVERY_LAYER, or the layers of one kind (non-zero: per layer) */
    double flop;         /* one occurrence on one GPU */
    double weight_bytes; /* weights and norm gains read */
    double kv_bytes;     /* KV cache read and written */
    double act_bytes;    /* activations read and written */
    double comm_bytes;   /* off the GPU's HBM: a collective's message (all-reduce) or gathered tensor
                            (all-gather), the bytes sent (all-to-all, point-to-point), the bytes loaded
                            from the host */
    rate_class rate;     /* the class a calibration prices it in (pricing.h) */
    double fixed_share;  /* its share of one kernel's fixed cost: 1, or 0.5 for each half of fused attention */
    double items;        /* work items a calibration charges t_item for (rates.h); 0 for all but attention
                            and the all-to-all (the tokens this GPU sends) */
    double span;         /* cached positions each decode attention item reads (rates.h); 0 elsewhere */
    double comm_intra_share; /* OP_ALLTOALL: share of comm_bytes that stays inside the node (NVLink) */
    double comm_net_bw;      /* OP_ALLTOALL: bytes/s per GPU across nodes */
    double link_bw;      /* OP_P2P: bytes/s of the op's own link; 0: the GPU row's link (link_bw) */
    double link_latency; /* OP_P2P: seconds to start a transfer on the op's own link (used when link_bw > 0;
                            with link_bw 0 the row's allreduce_latency applies) */
    int group;           /* OP_ALLREDUCE, OP_ALLGATHER: GPUs in the collective when not the step's tp group
                            (a mixture's experts split over a whole attention-DP replica); 0: the tp group */
    int comm_ranks;          /* OP_ALLTOALL: GPUs in the expert-parallel group */
    int a2a_kernel;          /* OP_ALLTOALL: which phase and kernel (rates.h a2a_kernel); items = tokens sent */
    op_math math;            /* a compute op whose weights state their own math (--moe-weights); 0: the step's */
} op_cost;

/* A lump of compute the caller prices as one op of class c (a whole
 * encoder, a diffusion forward, a few small heads' GEMMs): not one kernel,
 * so it carries no kernel's fixed cost (fixed_share 0), and no work items. */
op_cost op_lump(const char *name, rate_class c, double flop, double weight_bytes, double kv_bytes,
                double act_bytes);

/* HBM bytes of the op (weights, KV, activations; not comm_bytes). */
double op_bytes(const op_cost *op);
/* 1 for an op that moves bytes between GPUs (OP_ALLREDUCE, OP_ALLGATHER,
 * OP_ALLTOALL, OP_P2P): what a step counts as its communication. */
int op_is_comm(const op_cost *op);

#endif
