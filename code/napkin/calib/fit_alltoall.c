#include "fit_alltoall.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The features of a point, each divided by its measured time, so that the
 * least-squares target is 1 for every point (relative error). */
static void features(const a2a_point *p, double x[3])
{
    x[0] = 1 / p->time;
    x[1] = p->tokens / p->time;
    x[2] = p->bytes / p->time;
}

/* Least squares on the terms in `mask` (bit j: term j): the coefficients in
 * c (0 for terms left out) and the sum of squared relative errors, or -1
 * when the normal equations are singular. */
static double solve(const a2a_point *pts, int n, int mask, double c[3])
{
    int idx[3], m = 0;
    for (int j = 0; j < 3; j++)
        if (mask & (1 << j))
            idx[m++] = j;
    /* columns scaled to unit largest value: tokens and bytes span 1e0..1e9 */
    double scale[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        double x[3];
        features(&pts[i], x);
        for (int j = 0; j < m; j++)
            scale[j] = fmax(scale[j], fabs(x[idx[j]]));
    }
    double a[3][4] = {{0}};
    for (int i = 0; i < n; i++) {
        double x[3];
        features(&pts[i], x);
        for (int j = 0; j < m; j++) {
            double xj = scale[j] > 0 ? x[idx[j]] / scale[j] : 0;
            for (int k = 0; k < m; k++)
                a[j][k] += xj * (scale[k] > 0 ? x[idx[k]] / scale[k] : 0);
            a[j][3] += xj; /* target 1 */
        }
    }
    /* Gaussian elimination with partial pivoting on the m x m system */
    for (int col = 0; col < m; col++) {
        int piv = col;
        for (int r = col + 1; r < m; r++)
            if (fabs(a[r][col]) > fabs(a[piv][col]))
                piv = r;
        if (!(fabs(a[piv][col]) > 1e-300))
            return -1;
        for (int k = 0; k < 4; k++) {
            double t = a[col][k];
            a[col][k] = a[piv][k];
            a[piv][k] = t;
        }
        for (int r = 0; r < m; r++) {
            if (r == col)
                continue;
            double f = a[r][col] / a[col][col];
            for (int k = 0; k < 4; k++)
                a[r][k] -= f * a[col][k];
        }
    }
    c[0] = c[1] = c[2] = 0;
    for (int j = 0; j < m; j++)
        c[idx[j]] = a[j][3] / a[j][j] / scale[j];
    double sse = 0;
    for (int i = 0; i < n; i++) {
        double x[3];
        features(&pts[i], x);
        double e = c[0] * x[0] + c[1] * x[1] + c[2] * x[2] - 1;
        sse += e * e;
    }
    return sse;
}

//> fit_a2a_rate
int fit_a2a_rate(const a2a_point *pts, int n, a2a_rate *r, fit_summary *s, char *err, size_t errlen)
{
    if (n < 3) {
        snprintf(err, errlen, "%d points cannot fit a latency, a per-token cost and a bandwidth (3 or more needed)",
                 n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!(pts[i].time > 0 && pts[i].tokens >= 0 && pts[i].bytes >= 0 && isfinite(pts[i].time))) {
            snprintf(err, errlen, "point %d: time must be positive, tokens and bytes not negative", i + 1);
            return -1;
        }
    /* the free fit first; if a term comes out negative, the best of the fits without it */
    static const int MASKS[] = {7, 3, 5, 1}; /* all; latency + tokens; latency + bytes; latency */
    double best = INFINITY, bc[3] = {0, 0, 0};
    for (size_t m = 0; m < sizeof MASKS / sizeof MASKS[0]; m++) {
        double c[3];
        double sse = solve(pts, n, MASKS[m], c);
        if (sse < 0 || !(c[0] > 0) || c[1] < 0 || c[2] < 0 || !(sse < best))
            continue;
        best = sse;
        memcpy(bc, c, sizeof bc);
    }
    if (!isfinite(best)) {
        snprintf(err, errlen, "no fit of the %d points has a positive latency", n);
        return -1;
    }
    r->latency = bc[0];
    r->per_token = bc[1];
    r->bandwidth = bc[2] > 0 ? 1 / bc[2] : 0;
    if (s)
        a2a_rate_errors(r, pts, n, s);
    return 0;
}
//< fit_a2a_rate

void a2a_rate_errors(const a2a_rate *r, const a2a_point *pts, int n, fit_summary *s)
{
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    if (!e) {
        memset(s, 0, sizeof *s);
        return;
    }
    for (int i = 0; i < n; i++)
        e[i] = a2a_rate_time(r, pts[i].tokens, pts[i].bytes) / pts[i].time - 1;
    summarize_errors(e, n, s);
    free(e);
}
