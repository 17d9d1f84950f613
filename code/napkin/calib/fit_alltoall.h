/* Fitting an all-to-all phase's line (rates.h a2a_rate) to measured times:
 *
 *     t = latency + per_token * tokens + bytes / bandwidth
 *
 * is linear in (latency, per_token, 1 / bandwidth), so it is fitted by
 * linear least squares on the relative error (predicted / measured - 1: a
 * 10 % miss on 10 us weighs what it weighs on 1 ms).  No term may be
 * negative (a kernel does not get faster with more tokens or bytes): where
 * the free fit gives one, the best fit among those that drop the negative
 * terms wins (the latency is always kept). */
#ifndef NAPKIN_FIT_ALLTOALL_H
#define NAPKIN_FIT_ALLTOALL_H

#include "fit.h"

#include <stddef.h>

/* One measured phase: tokens one GPU sent, its merged bytes, seconds. */
typedef struct {
    double tokens, bytes, time;
} a2a_point;

/* Fit r's latency, per_token and bandwidth (0: no byte term) to n >= 3
 * points; r->ep is left as it was.  Returns 0, or -1 with a message (too
 * few points, a point that is not positive, no fit with a positive
 * latency). */
int fit_a2a_rate(const a2a_point *pts, int n, a2a_rate *r, fit_summary *s, char *err, size_t errlen);

/* Errors of r on n points (fitted to or held out). */
void a2a_rate_errors(const a2a_rate *r, const a2a_point *pts, int n, fit_summary *s);

#endif
