/* The published all-to-all tables (code/specs/measured/<system>/<engine>/
 * alltoall.tsv: implementation phase dtype ep nodes hidden topk experts
 * tokens time_s; tools/measured_alltoall.py) turned into the points of
 * fit_alltoall.h, and the lines an engine's serving runs fitted from them.
 *
 * A point's bytes are what one GPU sends: each of its `tokens` tokens once
 * to every other GPU its top-k reaches (moe_expected_gpus_reached: copies to
 * one GPU merged; moe.h moe_alltoall_bytes), the hidden vector at the
 * phase's bytes per value. */
#ifndef NAPKIN_PUBLISHED_ALLTOALL_H
#define NAPKIN_PUBLISHED_ALLTOALL_H

#include "fit_alltoall.h"

#include <stddef.h>

/* Bytes per hidden value of a measured phase: the dtype's (bf16 2, fp8 1,
 * nvfp4/fp4 0.5); "default" (DeepEP under SGLang and vLLM, no dtype column):
 * the low-latency dispatch casts to fp8 (1), everything else moves bf16 (2). */
double published_alltoall_value_bytes(const char *implementation, const char *phase, const char *dtype);

/* The implementation, and the dtype rows, an engine's serving runs for
 * kernel k (rates.h a2a_kernel).  As aiconfigurator-core's serving graph
 * picks them (sdk/operations/moe_comm.py, models/blocks/moe.py):
 *  - trtllm: trtllm_deepep_ll in generation, trtllm_deepep_ht in context;
 *    for an fp8 model the LL dispatch is fp8 and its combine bf16, HT bf16;
 *  - sglang: DeepEP low-latency (deepep_ll) in decode and normal
 *    (deepep_normal) in prefill, SGLang's --deepep-mode auto;
 *  - vllm: deepep_ll in generation and deepep_ht in context (dtype default).
 * Returns 0, or -1 for an engine without a known all-to-all. */
int published_alltoall_kernel(const char *backend, a2a_kernel k, const char **implementation, const char **dtype);

/* The points of one implementation, phase and dtype measured inside one
 * node (the largest EP group there; *ep set to it).  *pts malloc'd; *n may
 * be 0.  Returns 0, or -1 with "file: reason". */
int published_alltoall_points(const char *dir, const char *implementation, const char *phase, const char *dtype,
                              a2a_point **pts, int *n, int *ep, char *err, size_t errlen);

/* Fit the lines of the engine's serving kernels into out->alltoall (has_
 * alltoall set for each the set measures; a set without alltoall.tsv has
 * none).  every_other 0 fits every point, 1 or 2 the odd or even ones.
 * sums (may be NULL) get each line's residuals.  Returns 0, or -1. */
int published_alltoall_fit(const char *dir, const char *backend, int every_other, rate_model *out,
                           fit_summary sums[A2A_KERNELS], char *err, size_t errlen);

/* Every (implementation, phase, dtype, ep, nodes) group of the set at dir
 * fitted on its even points and judged on its odd ones, all groups' errors
 * pooled into *s (points 0 when the set has no alltoall.tsv); *groups the
 * groups fitted.  Returns 0, or -1 with a message. */
int published_alltoall_heldout(const char *dir, fit_summary *s, int *groups, char *err, size_t errlen);

#endif
