/* Tensor-parallel communication: the collectives a TP group runs each step,
 * as a latency term plus a bandwidth term.
 *
 * Ring algorithms over tp GPUs, each link carrying link_bw per direction:
 *  - all-reduce of a message of `bytes`: every GPU sends and receives
 *    2(tp-1)/tp of the message (reduce-scatter, then all-gather);
 *  - all-gather to `bytes` in all: every GPU receives (tp-1)/tp of it.
 * The latency term is the GPU row's allreduce_us: what one small collective
 * costs however few bytes it carries (launch, synchronisation, hops).
 * Nothing overlaps: in a decode step each all-reduce sits between two layers
 * on the critical path.  Modules outside price/ ask price_op (pricing.h)
 * for these times. */
#ifndef NAPKIN_COMM_H
#define NAPKIN_COMM_H

#include "specs.h"

/* Seconds for one ring all-reduce of `bytes` over tp GPUs; 0 when tp is 1,
 * NAN when tp > 1 and the GPU row has no link figures. */
double allreduce_time(const gpu_spec *g, int tp, double bytes);
/* Seconds for one ring all-gather that leaves `bytes` (the whole tensor) on
 * every GPU; 0 when tp is 1, NAN without link figures. */
double allgather_time(const gpu_spec *g, int tp, double bytes);
/* Seconds for one all-to-all (expert parallelism) in which each GPU sends
 * `bytes`: intra_share of them over NVLink at link_bw, the rest over the
 * network at net_bw per GPU, the two at once, plus the row's fixed latency. */
double alltoall_time(const gpu_spec *g, double bytes, double intra_share, double net_bw);
/* Seconds to send `bytes` from one GPU to one other over a link of
 * `bandwidth` bytes/s that takes `latency` seconds to start (a pipeline
 * stage's hand-off, a KV cache sent to a decode instance). */
double p2p_time(double bytes, double bandwidth, double latency);
/* 1 when the row has what a TP > 1 step needs: link bandwidth and latency. */
int gpu_has_links(const gpu_spec *g);

#endif
