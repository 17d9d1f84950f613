/* The roofline applied to one GEMM, Y[m x n] = X[m x k] W^T with W n x k:
 * the prediction every measurement is compared against, and the error
 * arithmetic of that comparison.  The ceilings are arguments, so the same
 * formula serves datasheet numbers and measured ones. */
#ifndef NAPKIN_GEMM_MODEL_H
#define NAPKIN_GEMM_MODEL_H

#include "pricing.h"
#include "roofline.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double flop;      /* 2 m n k */
    double bytes;     /* X and W read once, Y written once */
    double intensity; /* flop / bytes */
} gemm_work;

/* Work of one GEMM whose inputs take in_elem bytes per element and whose
 * output takes out_elem (bf16: 2, 2; fp32: 4, 4). */
gemm_work gemm_work_of(double m, double n, double k, double in_elem, double out_elem);

/* Roofline time max(flop/peak, bytes/bw); *bound (may be NULL) says which. */
double gemm_predicted_time(double m, double n, double k, double in_elem, double out_elem, double peak_flops,
                           double bandwidth, bound_kind *bound);

/* The same GEMM priced on GPU row g as one kernel of class c (pricing.h):
 * the roofline above at g's bandwidth when g carries no achieved rates, the
 * calibrated time (its fixed cost included) when it does. */
double gemm_priced_time(const gpu_spec *g, rate_class c, double m, double n, double k, double in_elem,
                        double out_elem, double peak_flops, bound_kind *bound);

/* The same roofline plus a fixed per-kernel term: t = latency +
 * max(flop/peak, bytes/bw).  A kernel timed alone pays a start-up cost its
 * bytes and FLOP do not account for (the launch, the ramp of the first
 * wave, the drain of the last), which at a few-MB shape is a large share
 * of its time; latency is measured as the event-timed empty kernel of
 * kernels/launch.cu (0 gives the plain roofline). */
double gemm_predicted_time_lat(double m, double n, double k, double in_elem, double out_elem, double peak_flops,
                               double bandwidth, double latency, bound_kind *bound);

/* The batch m at which the compute term overtakes the memory term for an
 * n x k weight: the knee of time against batch.  Solving
 * 2mnk/peak = (in(mk + nk) + out mn)/bw for m.  For a large weight it is
 * close to ridge * in_elem / 2 (the ridge itself for bf16).  INFINITY when
 * the GEMM never becomes compute-bound. */
double gemm_knee_batch(double n, double k, double in_elem, double out_elem, double peak_flops, double bandwidth);

/* The knee read off a measured sweep: the batch where the flat memory floor
 * (the time at the smallest batch) meets the compute line through the
 * largest batch's time, t = m * t_big / m_big. */
double measured_knee_batch(double t_floor, double m_big, double t_big);

/* (predicted - measured) / measured: negative when the prediction is
 * optimistic, which a roofline (a lower bound on time) usually is. */
double relative_error(double predicted, double measured);

typedef struct {
    int n;
    double median_abs; /* median of |relative error| */
    double worst_abs;  /* largest |relative error| */
    double mean;       /* mean signed relative error */
} error_summary;

/* Summary over n pairs; n = 0 gives NAN fields. */
error_summary error_summary_of(const double *predicted, const double *measured, int n);

#ifdef __cplusplus
}
#endif

#endif
