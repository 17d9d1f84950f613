#include "fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NP 7                /* t0, flop_frac, byte_frac, blend, t_item, item_frac, t_long */
#define SOFT_L1_SCALE 0.10  /* residuals (in log time) beyond ~10 % count linearly, not squared */
#define MAX_ITER 300

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void summarize_errors(double *e, int n, fit_summary *s)
{
    memset(s, 0, sizeof *s);
    s->points = n;
    if (n <= 0)
        return;
    double *a = malloc((size_t)n * sizeof *a);
    if (!a)
        return;
    for (int i = 0; i < n; i++)
        a[i] = fabs(e[i]);
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    qsort(e, (size_t)n, sizeof *e, cmp_double);
    s->median_abs_err = n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
    s->p90_abs_err = a[(int)floor(0.9 * (n - 1))];
    s->p99_abs_err = a[(int)floor(0.99 * (n - 1))];
    s->worst_abs_err = a[n - 1];
    s->median_err = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
    free(a);
}

/* The parameters as the fit sees them: logs, so each moves on its own scale. */
static void to_rate(const double *u, int np, op_rate *r)
{
    r->t0 = exp(u[0]);
    r->flop_frac = exp(u[1]);
    r->byte_frac = exp(u[2]);
    r->blend = exp(u[3]);
    r->t_item = np > 4 ? exp(u[4]) : 0;
    r->item_frac = np > 5 ? exp(u[5]) : 0;
    r->t_long = np > 6 ? exp(u[6]) : 0;
}

/* The box each parameter's log stays in. */
static void bounds(double lo[NP], double hi[NP])
{
    const double l[NP] = {log(1e-9), log(1e-3), log(1e-3), 0, log(1e-15), log(1e-3), log(1e-12)};
    const double h[NP] = {0, log(1.5), log(1.5), log(64.0), log(1e-3), log(1.5), log(1e-3)};
    memcpy(lo, l, sizeof l);
    memcpy(hi, h, sizeof h);
}

static void clamp_u(double *u)
{
    double lo[NP], hi[NP];
    bounds(lo, hi);
    for (int i = 0; i < NP; i++)
        u[i] = u[i] < lo[i] ? lo[i] : u[i] > hi[i] ? hi[i] : u[i];
}

/* A parameter on its bound whose gradient pushes it further out is held
 * there for the step (a projected step): otherwise each step is clamped
 * back and the descent crawls along the bound for hundreds of iterations. */
static void hold_bound_parameters(const double *u, int np, double a[NP][NP], double *g)
{
    double lo[NP], hi[NP];
    bounds(lo, hi);
    for (int k = 0; k < np; k++) {
        int out = (u[k] <= lo[k] && g[k] > 0) || (u[k] >= hi[k] && g[k] < 0); /* the step is -g */
        if (!out)
            continue;
        for (int l = 0; l < np; l++)
            a[k][l] = a[l][k] = 0;
        a[k][k] = 1;
        g[k] = 0;
    }
}

static double residual(const double *u, int np, const rate_point *p)
{
    op_rate r;
    to_rate(u, np, &r);
    return log((op_rate_time(&r, p->flop, p->bytes, p->items, p->span, p->peak, p->bandwidth) + p->extra) / p->time);
}

static double robust_cost(const double *u, int np, const rate_point *pts, int n)
{
    const double s = SOFT_L1_SCALE;
    double c = 0;
    for (int i = 0; i < n; i++) {
        double r = residual(u, np, &pts[i]) / s;
        c += 2 * s * s * (sqrt(1 + r * r) - 1);
    }
    return c;
}

/* Solve a x = b for a small dense system (Gaussian elimination, partial
 * pivoting).  Returns -1 when singular. */
static int solve(int m, double a[NP][NP], double *b, double *x)
{
    for (int c = 0; c < m; c++) {
        int piv = c;
        for (int r = c + 1; r < m; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c]))
                piv = r;
        if (fabs(a[piv][c]) < 1e-300)
            return -1;
        if (piv != c) {
            for (int k = 0; k < m; k++) {
                double t = a[c][k];
                a[c][k] = a[piv][k];
                a[piv][k] = t;
            }
            double t = b[c];
            b[c] = b[piv];
            b[piv] = t;
        }
        for (int r = c + 1; r < m; r++) {
            double f = a[r][c] / a[c][c];
            for (int k = c; k < m; k++)
                a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int r = m - 1; r >= 0; r--) {
        double s = b[r];
        for (int k = r + 1; k < m; k++)
            s -= a[r][k] * x[k];
        x[r] = s / a[r][r];
    }
    return 0;
}

/* How many parameters the points can tell apart: t_item only where some
 * point has work items, item_frac and t_long only where some has a span. */
static int parameters_of(const rate_point *pts, int n)
{
    int np = 4;
    for (int i = 0; i < n; i++) {
        if (pts[i].items > 0 && np < 5)
            np = 5;
        if (pts[i].span > 0 && pts[i].items > 0)
            np = 7;
    }
    return np;
}

/* One Levenberg-Marquardt descent from u; returns the robust cost reached. */
static double descend(const rate_point *pts, int n, int np, double *u, double *res, double *jac, int *iterations);

int fit_op_rate(const rate_point *pts, int n, op_rate *r, fit_summary *s, char *err, size_t errlen)
{
    int np = parameters_of(pts, n);
    if (n < np + 1) {
        snprintf(err, errlen, "%d points cannot fit %d parameters", n, np);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!(pts[i].time > 0) || !(pts[i].peak > 0) || !(pts[i].bandwidth > 0) || pts[i].flop < 0 ||
            pts[i].bytes < 0 || pts[i].items < 0 || !(pts[i].flop + pts[i].bytes > 0) ||
            !(pts[i].extra >= 0 && pts[i].extra < pts[i].time)) {
            snprintf(err, errlen,
                     "point %d: time, peak and bandwidth must be positive, flop and bytes not negative, "
                     "and the time priced apart less than the time",
                     i + 1);
            return -1;
        }
    double u[NP] = {log(r->t0 > 0 ? r->t0 : 1e-6),       log(r->flop_frac > 0 ? r->flop_frac : 0.8),
                    log(r->byte_frac > 0 ? r->byte_frac : 0.8), log(r->blend >= 1 ? r->blend : 2),
                    log(r->t_item > 0 ? r->t_item : 1e-9),     log(r->item_frac > 0 ? r->item_frac : 1),
                    log(r->t_long > 0 ? r->t_long : 1e-6)};
    clamp_u(u);
    double *res = malloc((size_t)n * sizeof *res);
    double *jac = malloc((size_t)n * NP * sizeof *jac);
    if (!res || !jac) {
        free(res);
        free(jac);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int it = 0;
    descend(pts, n, np, u, res, jac, &it);
    free(res);
    free(jac);
    to_rate(u, np, r);
    op_rate_errors(r, pts, n, s);
    s->iterations = it;
    return 0;
}

static double descend(const rate_point *pts, int n, int np, double *u, double *res, double *jac, int *iterations)
{
    double cost = robust_cost(u, np, pts, n), lambda = 1e-3;
    int it = 0;
    for (; it < MAX_ITER; it++) {
        /* Jacobian by forward differences; robust weights at the current point */
        double a[NP][NP] = {{0}}, g[NP] = {0};
        for (int i = 0; i < n; i++) {
            res[i] = residual(u, np, &pts[i]);
            for (int k = 0; k < np; k++) {
                double v[NP];
                memcpy(v, u, sizeof v);
                const double h = 1e-6;
                v[k] += h;
                jac[i * NP + k] = (residual(v, np, &pts[i]) - res[i]) / h;
            }
            double z = res[i] / SOFT_L1_SCALE, w = 1 / sqrt(1 + z * z);
            for (int k = 0; k < np; k++) {
                g[k] += w * jac[i * NP + k] * res[i];
                for (int l = 0; l < np; l++)
                    a[k][l] += w * jac[i * NP + k] * jac[i * NP + l];
            }
        }
        hold_bound_parameters(u, np, a, g);
        int accepted = 0;
        while (lambda < 1e12) {
            double m[NP][NP], b[NP], d[NP];
            for (int k = 0; k < np; k++) {
                for (int l = 0; l < np; l++)
                    m[k][l] = a[k][l];
                m[k][k] += lambda * (a[k][k] > 0 ? a[k][k] : 1e-12);
                b[k] = -g[k];
            }
            if (solve(np, m, b, d) != 0) {
                lambda *= 4;
                continue;
            }
            double v[NP];
            memcpy(v, u, sizeof v);
            for (int k = 0; k < np; k++)
                v[k] = u[k] + d[k];
            clamp_u(v);
            double c = robust_cost(v, np, pts, n);
            if (c < cost) {
                double drop = cost - c, moved = 0;
                for (int k = 0; k < np; k++)
                    moved = fabs(v[k] - u[k]) > moved ? fabs(v[k] - u[k]) : moved;
                memcpy(u, v, NP * sizeof *u);
                cost = c;
                lambda = lambda / 3 > 1e-12 ? lambda / 3 : 1e-12;
                /* converged: the step gained less than a billionth, or moved no
                 * parameter by a millionth of itself (logs: 1e-6 is 0.0001 %) */
                accepted = drop > 1e-9 * cost && moved > 1e-6 ? 1 : 2;
                break;
            }
            lambda *= 4;
        }
        if (accepted != 1)
            break;
    }
    *iterations = it;
    return cost;
}

void op_rate_errors(const op_rate *r, const rate_point *pts, int n, fit_summary *s)
{
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    if (!e) {
        memset(s, 0, sizeof *s);
        return;
    }
    for (int i = 0; i < n; i++)
        e[i] = (op_rate_time(r, pts[i].flop, pts[i].bytes, pts[i].items, pts[i].span, pts[i].peak,
                             pts[i].bandwidth) +
                pts[i].extra) / pts[i].time -
               1;
    summarize_errors(e, n, s);
    free(e);
}

/* Least squares on relative error of t ~ a + b x over pts[lo, hi): rows
 * (1/t, x/t) . (a, b) = 1.  A slope that comes out negative or zero (a flat
 * stretch) becomes a bandwidth too large to matter. */
static void fit_line(const link_point *p, int lo, int hi, double *a, double *b)
{
    double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
    for (int i = lo; i < hi; i++) {
        double u = 1 / p[i].time, v = p[i].bytes / p[i].time;
        s11 += u * u;
        s12 += u * v;
        s22 += v * v;
        r1 += u;
        r2 += v;
    }
    double det = s11 * s22 - s12 * s12;
    if (fabs(det) > 1e-300 * (s11 * s22 + 1e-300)) {
        *a = (r1 * s22 - r2 * s12) / det;
        *b = (s11 * r2 - s12 * r1) / det;
    } else {
        *a = r1 / s11;
        *b = 0;
    }
    if (*b <= 0) { /* flat: the latency alone */
        *b = 1e-18;
        *a = r1 / s11;
    }
    if (*a < 0) { /* a line through the origin: bandwidth alone */
        *a = 0;
        *b = r2 / s22;
    }
}

static int cmp_link(const void *x, const void *y)
{
    double a = ((const link_point *)x)->bytes, b = ((const link_point *)y)->bytes;
    return (a > b) - (a < b);
}

int fit_link_rate(const link_point *pts, int n, link_rate *l, fit_summary *s, char *err, size_t errlen)
{
    if (n < 4) {
        snprintf(err, errlen, "%d points cannot fit two lines (4 or more needed)", n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!(pts[i].time > 0) || !(pts[i].bytes > 0)) {
            snprintf(err, errlen, "point %d: bytes and time must be positive", i + 1);
            return -1;
        }
    link_point *p = malloc((size_t)n * sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(p, pts, (size_t)n * sizeof *p);
    qsort(p, (size_t)n, sizeof *p, cmp_link);
    double best = INFINITY;
    for (int split = 2; split <= n - 2; split++) {
        double a1, b1, a2, b2;
        fit_line(p, 0, split, &a1, &b1);
        fit_line(p, split, n, &a2, &b2);
        link_rate c = {a1, 1 / b1, a2, 1 / b2};
        double sse = 0;
        for (int i = 0; i < n; i++) {
            double e = link_rate_time(&c, p[i].bytes) / p[i].time - 1;
            sse += e * e;
        }
        if (sse < best) {
            best = sse;
            *l = c;
        }
    }
    free(p);
    link_rate_errors(l, pts, n, s);
    return 0;
}

void link_rate_errors(const link_rate *l, const link_point *pts, int n, fit_summary *s)
{
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    if (!e) {
        memset(s, 0, sizeof *s);
        return;
    }
    for (int i = 0; i < n; i++)
        e[i] = link_rate_time(l, pts[i].bytes) / pts[i].time - 1;
    summarize_errors(e, n, s);
    free(e);
}
