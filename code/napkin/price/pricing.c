#include "pricing_internal.h"

#include "comm.h"

#include <math.h>

int gpu_has_rates(const gpu_spec *g, rate_class c)
{
    return g->rates && c >= 0 && c < RC_COUNT && g->rates->has_op[c];
}

//> price_compute
double price_compute_items(const gpu_spec *g, rate_class c, double flop, double bytes, double items, double span,
                           double peak, double fixed_share, bound_kind *bound)
{
    double roofline = roofline_time(flop, bytes, peak, g->mem_bw, bound);
    if (!gpu_has_rates(g, c) && gpu_has_rates(g, rate_class_fallback(c))) {
        c = rate_class_fallback(c); /* a set without the class: its GEMM class, with no items */
        items = 0;
    }
    if (!gpu_has_rates(g, c))
        return roofline;
    op_rate r = g->rates->op[c];
    /* an op that is part of a kernel carries its share of the kernel's fixed
     * costs and of its tail: the op's bytes per item are the whole kernel's,
     * so dividing item_frac by the share scales the tail by the share */
    r.t0 *= fixed_share;
    r.t_long *= fixed_share;
    if (fixed_share > 0)
        r.item_frac /= fixed_share;
    else
        r.item_frac = 0;
    return op_rate_time(&r, flop, bytes, items, span, peak, g->mem_bw);
}
//< price_compute

double price_compute(const gpu_spec *g, rate_class c, double flop, double bytes, double peak, double fixed_share,
                     bound_kind *bound)
{
    return price_compute_items(g, c, flop, bytes, 0, 0, peak, fixed_share, bound);
}

double price_allreduce(const gpu_spec *g, int tp, double bytes)
{
    int slot = rate_tp_slot(tp);
    if (tp > 1 && g->rates && slot >= 0 && g->rates->has_allreduce[slot])
        return link_rate_time(&g->rates->allreduce[slot], bytes);
    return allreduce_time(g, tp, bytes);
}

double price_allgather(const gpu_spec *g, int tp, double bytes)
{
    int slot = rate_tp_slot(tp);
    if (tp > 1 && g->rates && slot >= 0 && g->rates->has_allreduce[slot])
        return link_rate_time(&g->rates->allreduce[slot], bytes / 2);
    return allgather_time(g, tp, bytes);
}

//> price_alltoall
double price_alltoall(const gpu_spec *g, const op_cost *op)
{
    int k = op->a2a_kernel;
    /* the measured kernels ran inside one node at the line's group size: a
     * group of that size or smaller in one node takes the line (fewer peers
     * are no slower to reach), anything across nodes the bound */
    if (g->rates && k >= 0 && k < A2A_KERNELS && g->rates->has_alltoall[k] && op->comm_intra_share >= 1 &&
        op->comm_ranks > 1 && op->comm_ranks <= g->rates->alltoall[k].ep)
        return a2a_rate_time(&g->rates->alltoall[k], op->items, op->comm_bytes);
    return alltoall_time(g, op->comm_bytes, op->comm_intra_share, op->comm_net_bw);
}
//< price_alltoall

double price_op(const op_cost *op, const gpu_spec *g, double peak, int tp, bound_kind *bound)
{
    if (op->group > 0) /* a collective over a group of its own, not the step's tp */
        tp = op->group;
    switch (op->kind) {
    case OP_ALLREDUCE:
        return price_allreduce(g, tp, op->comm_bytes);
    case OP_ALLGATHER:
        return price_allgather(g, tp, op->comm_bytes);
    case OP_ALLTOALL:
        return price_alltoall(g, op);
    /* the kinds below have no measured rates (pricing.h): one formula gives both answers */
    case OP_P2P:
        if (op->link_bw > 0) /* a link of its own: its bandwidth and its latency (0 allowed) */
            return p2p_time(op->comm_bytes, op->link_bw, op->link_latency);
        return gpu_has_links(g) ? p2p_time(op->comm_bytes, g->link_bw, g->allreduce_latency) : NAN;
    case OP_HOST_LOAD:
        return g->host_bw > 0 ? memory_time(op->comm_bytes, g->host_bw) : NAN;
    case OP_HBM_READ:
        /* a bare read has no class in the measured tables: the bandwidth prices it in both answers */
        return memory_time(op_bytes(op), g->mem_bw);
    default:
        /* weights in a format of their own run at that format's peak (a row without it keeps the one given) */
        if (op->math != OP_MATH_STEP && gpu_peak_flops(g, op_math_dtype(op->math)) > 0)
            peak = gpu_peak_flops(g, op_math_dtype(op->math));
        /* Latent attention computes in bf16 over an fp8 cache and beside fp8 weights (the measured
         * tables' mla_dtype): its ceiling is the bf16 peak, in the roofline as in the calibration. */
        if (rate_class_is_mla(op->rate)) {
            if (gpu_peak_flops(g, DT_BF16) > 0) /* a row without a bf16 rate keeps the one given */
                peak = gpu_peak_flops(g, DT_BF16);
            /* a calibration without the latent attention tables (vLLM measured only whole
             * modules) prices prefill as its tiles of query rows, in the attention prefill class,
             * and the absorbed decode kernel, which streams each sequence's latent once, in the
             * decode attention class (the prefill class's byte share is no streaming rate: in
             * vLLM's H200 set 0.27, which priced Kimi-K2.5's latent read at 4x its roofline) */
            if (g->rates && !gpu_has_rates(g, op->rate)) {
                const rate_class c = op->rate == RC_MLA_PREFILL       ? RC_ATTN_PREFILL
                                     : op->rate == RC_MLA_DECODE_FP8 ? RC_ATTN_DECODE_FP8
                                                                     : RC_ATTN_DECODE_BF16;
                return price_compute_items(g, c, op->flop, op_bytes(op), op->items,
                                           c == RC_ATTN_PREFILL ? 0 : op->span, peak, op->fixed_share, bound);
            }
        }
        /* Gated DeltaNet's kernels too compute in bf16 (and fp32) beside fp8 weights */
        if (rate_class_is_gdn(op->rate) && gpu_peak_flops(g, DT_BF16) > 0)
            peak = gpu_peak_flops(g, DT_BF16);
        return price_compute_items(g, op->rate, op->flop, op_bytes(op), op->items, op->span, peak, op->fixed_share,
                                   bound);
    }
}
