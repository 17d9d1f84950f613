/* The roofline applied to one GEMM; see gemm_model.h. */
#include "gemm_model.h"

#include "pricing_internal.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>

//> gemm_work
gemm_work gemm_work_of(double m, double n, double k, double in_elem, double out_elem)
{
    gemm_work w;
    w.flop = 2.0 * m * n * k;                             /* one multiply-add per (i, j, p) */
    w.bytes = in_elem * (m * k + n * k) + out_elem * m * n; /* read X and W, write Y */
    w.intensity = arithmetic_intensity(w.flop, w.bytes);
    return w;
}

double gemm_predicted_time(double m, double n, double k, double in_elem, double out_elem, double peak_flops,
                           double bandwidth, bound_kind *bound)
{
    /* a row with the given ceilings and no achieved rates: the roofline */
    gpu_spec ceilings = {0};
    ceilings.mem_bw = bandwidth;
    return gemm_priced_time(&ceilings, RC_GEMM_BF16, m, n, k, in_elem, out_elem, peak_flops, bound);
}
//< gemm_work

double gemm_priced_time(const gpu_spec *g, rate_class c, double m, double n, double k, double in_elem,
                        double out_elem, double peak_flops, bound_kind *bound)
{
    gemm_work w = gemm_work_of(m, n, k, in_elem, out_elem);
    return price_compute(g, c, w.flop, w.bytes, peak_flops, 1, bound);
}

double gemm_predicted_time_lat(double m, double n, double k, double in_elem, double out_elem, double peak_flops,
                               double bandwidth, double latency, bound_kind *bound)
{
    return latency + gemm_predicted_time(m, n, k, in_elem, out_elem, peak_flops, bandwidth, bound);
}

//> gemm_knee
double gemm_knee_batch(double n, double k, double in_elem, double out_elem, double peak_flops, double bandwidth)
{
    /* m (2nk/peak - (in k + out n)/bw) = in n k / bw */
    double slope = 2.0 * n * k / peak_flops - (in_elem * k + out_elem * n) / bandwidth;
    if (slope <= 0)
        return INFINITY;
    return in_elem * n * k / bandwidth / slope;
}
//< gemm_knee

double measured_knee_batch(double t_floor, double m_big, double t_big)
{
    if (!(t_big > 0) || !(m_big > 0))
        return NAN;
    return t_floor * m_big / t_big;
}

double relative_error(double predicted, double measured)
{
    return (predicted - measured) / measured;
}

error_summary error_summary_of(const double *predicted, const double *measured, int n)
{
    error_summary s = {n, NAN, NAN, NAN};
    if (n <= 0)
        return s;
    double *abs_err = malloc((size_t)n * sizeof *abs_err);
    if (!abs_err)
        return s;
    double sum = 0, worst = 0;
    for (int i = 0; i < n; i++) {
        double e = relative_error(predicted[i], measured[i]);
        abs_err[i] = fabs(e);
        sum += e;
        if (abs_err[i] > worst)
            worst = abs_err[i];
    }
    s.median_abs = median_of(abs_err, n);
    s.worst_abs = worst;
    s.mean = sum / n;
    free(abs_err);
    return s;
}
