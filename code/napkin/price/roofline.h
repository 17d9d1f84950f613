/* The roofline: a kernel moving `bytes` and doing `flop` takes at least
 * max(flop / peak, bytes / bandwidth).  Its arithmetic intensity is
 * flop / bytes; the ridge is the intensity where both terms are equal. */
#ifndef NAPKIN_ROOFLINE_H
#define NAPKIN_ROOFLINE_H

typedef enum { BOUND_MEMORY, BOUND_COMPUTE } bound_kind;

/* FLOP per byte. */
double arithmetic_intensity(double flop, double bytes);
/* peak FLOP/s over bandwidth bytes/s: FLOP per byte. */
double ridge_intensity(double peak_flops, double bandwidth);
/* Attainable FLOP/s at an intensity: min(peak, intensity * bandwidth). */
double attainable_flops(double intensity, double peak_flops, double bandwidth);
/* The roofline's two terms: seconds for `flop` at flop_rate FLOP/s, and for
 * `bytes` at bandwidth bytes/s.  A time outside price/ that is one term
 * alone (a step's sums of FLOP and of bytes, a run at its achieved FLOP
 * rate) asks for it here. */
double compute_time(double flop, double flop_rate);
double memory_time(double bytes, double bandwidth);
/* Lower bound on time; *bound (may be NULL) says which term sets it
 * (memory on a tie). */
double roofline_time(double flop, double bytes, double peak_flops, double bandwidth, bound_kind *bound);
const char *bound_name(bound_kind b); /* "memory", "compute" */

#endif
