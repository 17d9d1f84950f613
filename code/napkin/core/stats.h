/* Small statistics over measured samples: the median and a least-squares
 * line (the measurements, the fits and the chapters' tables use them). */
#ifndef NAPKIN_STATS_H
#define NAPKIN_STATS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Median of x[0..n) (mean of the two middle values for even n); x is not
 * modified.  NAN for n <= 0. */
double median_of(const double *x, int n);

/* Least-squares line y = a + b*x over n >= 2 points with distinct x.
 * Returns 0, or -1 when the fit is undefined. */
int linear_fit(const double *x, const double *y, int n, double *a, double *b);

#ifdef __cplusplus
}
#endif

#endif
