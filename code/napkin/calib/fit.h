/* Fitting achieved rates (rates.h) to measured times.
 *
 * Compute ops: a Levenberg-Marquardt least-squares fit of the parameters
 * (t0, flop_frac, byte_frac, blend; t_item where the points have work
 * items; item_frac and t_long where they have a span) on the log of
 * predicted over measured
 * time, so a 10 % miss on a 3 us kernel weighs what it weighs on a 3 ms one.
 * The loss is soft-L1 (rho(r) = 2 s^2 (sqrt(1 + (r/s)^2) - 1), solved by
 * reweighting): near zero it is least squares, far out it grows like |r|,
 * so a few kernels that a library chose badly do not drag the fit.
 *
 * Collectives: for each TP degree, the two lines of link_rate, each fitted
 * by linear least squares on relative error to the points on its side of a
 * split; the split that leaves the smallest error of the faster-of-two
 * curve wins (every split is tried: the tables have tens of points). */
#ifndef NAPKIN_FIT_H
#define NAPKIN_FIT_H

#include "rates.h"

#include <stddef.h>

/* One measured compute op: its FLOPs and bytes (as the cost model counts
 * them), the ceilings of the device it ran on, and the measured seconds. */
typedef struct {
    double flop, bytes, peak, bandwidth, time;
    double items; /* work items (0 where the class has none) */
    double span;  /* cached positions each item reads (decode attention; 0 elsewhere) */
    double extra; /* seconds the measured time holds beyond the op itself (a kernel timed with it,
                     priced apart: published.h); the fit compares op time + extra with time */
} rate_point;

typedef struct {
    int points;
    double median_abs_err; /* |predicted / measured - 1|, median */
    double p90_abs_err;
    double p99_abs_err;    /* the worst of the trimmed 99 % */
    double worst_abs_err;
    double median_err;     /* signed: > 0 the model is slow */
    int iterations;
} fit_summary;

/* Fit *r (its fields are the start; blend is kept within [1, 64], the
 * fractions within (0, 1.5], t0 within [0, 1 s]) to n points.  Returns 0, or
 * -1 with a message (too few points, a point that is not positive). */
int fit_op_rate(const rate_point *pts, int n, op_rate *r, fit_summary *s, char *err, size_t errlen);

/* Errors of r on points it was not (or was) fitted to. */
void op_rate_errors(const op_rate *r, const rate_point *pts, int n, fit_summary *s);

/* One measured collective of `bytes` taking `time` seconds. */
typedef struct {
    double bytes, time;
} link_point;

/* Fit *l to n points of one TP degree (at least 4).  Returns 0, or -1. */
int fit_link_rate(const link_point *pts, int n, link_rate *l, fit_summary *s, char *err, size_t errlen);
void link_rate_errors(const link_rate *l, const link_point *pts, int n, fit_summary *s);

/* Median, 90th and 99th percentile and largest of |e| and the median of e,
 * over n relative errors (e is reordered); a percentile q is the
 * floor(q (n - 1))-th smallest |e|. */
void summarize_errors(double *e, int n, fit_summary *s);

#endif
