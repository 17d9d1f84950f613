/* One forward step of a decoder, priced: the sums over its ops
 * (transformer.h lists them, price_op prices each), the batch where the
 * projections reach the ridge, the smallest compute-bound batch, and the
 * step's tokens per second. */
#ifndef NAPKIN_STEP_H
#define NAPKIN_STEP_H

#include "transformer.h"

typedef struct {
    double flop;         /* per GPU per step */
    double weight_bytes; /* per GPU per step */
    double kv_bytes;
    double act_bytes;
    double bytes;
    double comm_bytes;   /* collectives' message bytes per step */
    double time;         /* sum over ops of the time of each: rooflines plus collectives */
    double time_comm;    /* the collectives' share of time (0 at tp 1 or with skip_comm) */
    double time_memory;  /* the roofline's memory term of the whole step: bytes / bandwidth */
    double time_compute; /* its compute term: flop / peak */
    double intensity;    /* flop / bytes for the whole step */
    bound_kind bound;    /* which sum is larger (communication aside) */
    double tokens;       /* new tokens the step processes: batch * new_tokens */
} step_cost;

/* Cost of one step, each op priced by price_op (the roofline, or the
 * calibrated answer where g carries achieved rates).  Returns 0, or -1 with a message for a bad
 * shape, a GPU without a rate for the compute dtype, or tp > 1 on a GPU row
 * without link figures (unless skip_comm). */
int decoder_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, step_cost *out,
                      char *err, size_t errlen);

/* The same sums over a given list of ops (decoder_step_ops' or a variant's,
 * such as expert_parallel.h's): the shape gives the tokens and the tp group
 * of the collectives.  Returns 0, or -1 with a message for a GPU without a
 * rate for the compute dtype. */
int step_cost_of_ops(const model_spec *m, const gpu_spec *g, const step_shape *s, const op_cost *ops, int n,
                     step_cost *out, char *err, size_t errlen);

/* The decode batch at which a projection's FLOP per weight byte, 2*B /
 * bytes-per-weight, reaches the GPU's ridge for the compute dtype: the
 * "batch 295" of bf16 on an H100.  0 when the GPU has no such rate. */
double ridge_batch(const gpu_spec *g, precision p);

/* The smallest decode batch in 1..batch_max whose whole step is
 * compute-bound (FLOP time above byte time; communication aside), found by
 * bisection on decoder_step_cost: the step's FLOPs grow with each sequence
 * and its bytes are fixed weights plus a per-sequence share, so its
 * intensity rises with the batch and the crossing is a single point.  The
 * shape gives context, new_tokens, tp and precision (its batch is ignored).
 * *batch = 0 when even batch_max is memory-bound.  Returns 0, or -1 with a
 * message for a bad shape or batch_max < 1. */
int compute_bound_batch(const model_spec *m, const gpu_spec *g, const step_shape *s, int batch_max, int *batch,
                        char *err, size_t errlen);

/* What the replica serves: tokens of the whole batch per second. */
double step_tokens_per_second(const step_cost *c);
/* What one user sees: that sequence's new tokens per second. */
double step_user_tokens_per_second(const step_cost *c, const step_shape *s);

#endif
