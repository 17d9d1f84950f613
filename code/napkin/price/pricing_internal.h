/* The pricing door's parts, price/'s own: every other floor asks price_op
 * (pricing.h), so that no cost skips the calibration in force.
 * tools/check_layers.sh rejects an include of this header from outside
 * price/. */
#ifndef NAPKIN_PRICING_INTERNAL_H
#define NAPKIN_PRICING_INTERNAL_H

#include "pricing.h"

/* Seconds for a compute op of class c on g at the given peak (the compute
 * dtype's).  fixed_share is the part of one kernel's fixed cost the op
 * carries (1 for a kernel of its own; 0.5 for each half of a fused kernel
 * the cost model counts as two ops).  *bound (may be NULL) is the roofline's
 * verdict either way. */
double price_compute(const gpu_spec *g, rate_class c, double flop, double bytes, double peak, double fixed_share,
                     bound_kind *bound);
/* The same for an op of `items` work items, each reading `span` cached
 * positions (rates.h: attention kernels; span 0 where it does not apply). */
double price_compute_items(const gpu_spec *g, rate_class c, double flop, double bytes, double items, double span,
                           double peak, double fixed_share, bound_kind *bound);

/* Seconds for one all-reduce of `bytes` over tp GPUs: the calibrated curve
 * of that TP degree where g carries one, else comm.h's ring. */
double price_allreduce(const gpu_spec *g, int tp, double bytes);
/* One all-gather leaving `bytes` on every GPU.  Calibrated: priced as an
 * all-reduce of half the bytes (a ring all-gather moves half the traffic of
 * a ring all-reduce of the same tensor); the tables measure no all-gather. */
double price_allgather(const gpu_spec *g, int tp, double bytes);

/* One all-to-all phase (op: OP_ALLTOALL): the engine's measured kernel line
 * (rates.h a2a_rate) where g carries one for the op's kernel and the group
 * sits in one node within the line's size, else comm.h's bound. */
double price_alltoall(const gpu_spec *g, const op_cost *op);

/* 1 when g carries achieved rates for class c. */
int gpu_has_rates(const gpu_spec *g, rate_class c);

#endif
