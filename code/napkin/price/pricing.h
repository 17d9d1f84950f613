/* The pricing door: the one place that turns FLOPs and bytes into time.
 *
 * Every module describes its work as an op (op.h) and asks price_op for its
 * seconds.  The GPU row decides which answer comes back: a row without
 * achieved rates (gpu_spec.rates NULL) gives the roofline; a row that
 * carries them (a published calibration, or one fitted to the reader's own
 * measured set) gives the calibrated time of the op's class.  So the
 * roofline and the calibrated answer of every command come from the same
 * call, differing only in the row, and a new calibration reaches every
 * command that prices through here.
 *
 * The op classes, and the two answers of each:
 *  - compute ops, by rate class (op.rate, rates.h: GEMM by dtype, decode
 *    attention by KV dtype, prefill attention, elementwise): the roofline
 *    max(flop / peak, bytes / mem_bw); calibrated, the class's achieved
 *    rates (rates.h), its fixed cost and work items included;
 *  - all-reduce and all-gather over the tp group: the ring of comm.h;
 *    calibrated, the measured curve of that TP degree (an all-gather as an
 *    all-reduce of half the bytes);
 *  - all-to-all (expert parallelism), a dispatch or a combine: comm.h's
 *    bound, NVLink and network at once; calibrated, the engine's measured
 *    kernel (rates.h a2a_rate: latency, per token, merged bytes over a
 *    bandwidth) for a group inside one node, the bound across nodes;
 *  - point-to-point transfer: a latency plus comm_bytes over the link's
 *    bandwidth, the op's own link or else the row's (link_bw,
 *    allreduce_latency; NAN when the row has no link figures);
 *  - host load: comm_bytes over the row's host_bw (NAN when it has none);
 *  - HBM read: the op's HBM bytes over mem_bw, no FLOPs.
 * No measured table covers the last four (rates.h has no class for them and
 * code/specs/calibrations.tsv no rates), so both answers use the same
 * formula: a calibrated row prices them exactly as the roofline does. */
#ifndef NAPKIN_PRICING_H
#define NAPKIN_PRICING_H

#include "op.h"
#include "rates.h"
#include "roofline.h"
#include "specs.h"

/* Seconds for one occurrence of op on one GPU of g: peak is the compute
 * dtype's FLOP rate (compute ops only), tp the tensor-parallel group of a
 * collective.  *bound (may be NULL) is the roofline's verdict, set for
 * compute ops only. */
double price_op(const op_cost *op, const gpu_spec *g, double peak, int tp, bound_kind *bound);

#endif
