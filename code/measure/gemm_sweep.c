/* CPU twin of kernels/gemm_sweep.cu: fp32 GEMM through OpenBLAS,
 * Y[M x N] = X[M x K] W^T (the shape of a linear layer, W is N x K), for
 * M = 1 ... 1024 against one N x K weight (4096 x 4096 by default).  The
 * weight rotates through copies that together exceed the last-level cache, so
 * small-M calls stream it from memory as a GPU's do from HBM.
 *
 * Each round also times cblas_sgemv at M = 1 (a row "gemv_..." first in the
 * TSV), the CPU's counterpart of kernels/gemv.cu.
 *
 * The measured ceilings give the roofline prediction of every point: peak =
 * the best FLOP/s of the sweep (large M), bandwidth = the read kernel of the
 * stream twin (--stream FILE) or the BLAS GEMV if it reads faster, or the
 * --bw B/s given.  The twin prints the CPU's ridge,
 * the predicted knee against the measured one, and the median prediction
 * error against its target.
 *
 *   gemm_sweep [--quick] [--n N] [--k K] [--max-m M] [--reps R]
 *              (--stream FILE | --bw BYTES_PER_S) [--out FILE]
 */
#include "gemm_model.h"
#include "measure_ref.h"
#include "measured.h"
#include "provenance.h"
#include "units.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_POINTS 64
/* The target for the CPU: median |predicted - measured| / measured. */
#define TARGET_MEDIAN_ERROR 0.25

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Y = X W^T, row-major; W is n x k. */
static void sgemm_xwt(int m, int n, int k, const float *x, const float *w, float *y)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, k, w, k, 0.0f, y, n);
}

/* OpenBLAS against the naive reference on small awkward shapes. */
static int validate_small(rng_state *rng)
{
    const int shapes[][3] = {{1, 37, 129}, {5, 64, 64}, {17, 33, 300}, {64, 96, 48}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *x = malloc(sizeof(float) * m * k), *w = malloc(sizeof(float) * n * k);
        float *y = malloc(sizeof(float) * m * n), *ref = malloc(sizeof(float) * m * n);
        if (!x || !w || !y || !ref)
            return -1;
        fill_uniform_f32(rng, x, (size_t)m * k, -1, 1);
        fill_uniform_f32(rng, w, (size_t)n * k, -1, 1);
        sgemm_xwt(m, n, k, x, w, y);
        gemm_ref_f32(m, n, k, x, w, ref, 0, n);
        long first;
        /* fp32 sums of k <= 300 products of |x| < 1: error well under 1e-4 */
        size_t bad = validate_close(y, ref, (size_t)m * n, 1e-4, 1e-4, &first, NULL);
        free(x);
        free(w);
        free(y);
        free(ref);
        if (bad) {
            fprintf(stderr, "gemm_sweep: OpenBLAS differs from the reference at %dx%dx%d (%zu elements, first %ld)\n",
                    m, n, k, bad, first);
            return -1;
        }
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gemm_sweep [--quick] [--n N] [--k K] [--max-m M] [--reps R]\n"
               "                  (--stream FILE | --bw BYTES_PER_S) [--out FILE]\n"
               "  --stream FILE  the stream twin's TSV; its 'read' GB/s is the bandwidth ceiling\n"
               "  --quick        N = K = 512, M up to 64, 2 repeats (a correctness run)\n");
}

static int parse_positive(const char *flag, const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = v ? strtod(v, &end) : 0;
    if (!v || errno || *end || !(x > 0)) {
        fprintf(stderr, "gemm_sweep: %s needs a positive number, got '%s'\n", flag, v ? v : "(nothing)");
        return -1;
    }
    *out = x;
    return 0;
}

/* The read bandwidth (B/s) of a stream TSV, or -1 with a message. */
static double read_bandwidth_of(const char *path)
{
    measured_table t;
    char err[256];
    if (measured_table_load(path, &t, err, sizeof err)) {
        fprintf(stderr, "gemm_sweep: %s\n", err);
        return -1;
    }
    int kc = measured_col(&t, "kernel"), gc = measured_col(&t, "gb_s");
    int row = kc < 0 ? -1 : measured_find_row(&t, kc, "read");
    double bw = row < 0 || gc < 0 ? NAN : measured_num(&t, row, gc) * GB;
    measured_table_free(&t);
    if (!(bw > 0)) {
        fprintf(stderr, "gemm_sweep: %s: no 'read' row with a gb_s value\n", path);
        return -1;
    }
    return bw;
}

int main(int argc, char **argv)
{
    double n_d = 0, k_d = 0, max_m_d = 0, reps_d = 0, bw = 0;
    int quick = 0;
    const char *out_path = NULL, *stream_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double *target = NULL;
        if (strcmp(f, "--quick") == 0) {
            quick = 1;
            continue;
        } else if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(f, "--out") == 0 || strcmp(f, "--stream") == 0) {
            if (!v) {
                fprintf(stderr, "gemm_sweep: %s needs a file name\n", f);
                return 2;
            }
            *(strcmp(f, "--out") == 0 ? &out_path : &stream_path) = v;
            i++;
            continue;
        } else if (strcmp(f, "--n") == 0)
            target = &n_d;
        else if (strcmp(f, "--k") == 0)
            target = &k_d;
        else if (strcmp(f, "--max-m") == 0)
            target = &max_m_d;
        else if (strcmp(f, "--reps") == 0)
            target = &reps_d;
        else if (strcmp(f, "--bw") == 0)
            target = &bw;
        else {
            fprintf(stderr, "gemm_sweep: unknown flag '%s'\n", f);
            usage(stderr);
            return 2;
        }
        if (parse_positive(f, v, target))
            return 2;
        i++;
    }
    if (stream_path && (bw = read_bandwidth_of(stream_path)) < 0)
        return 1;
    if (!(bw > 0)) {
        fprintf(stderr, "gemm_sweep: give the bandwidth ceiling: --stream FILE (the stream twin's TSV) or --bw B/s\n");
        return 2;
    }
    int n = n_d > 0 ? (int)n_d : quick ? 512 : 4096;
    int k = k_d > 0 ? (int)k_d : quick ? 512 : 4096;
    int max_m = max_m_d > 0 ? (int)max_m_d : quick ? 64 : 1024;
    int reps = reps_d > 0 ? (int)reps_d : quick ? 2 : 7;
    if (n > 65536 || k > 65536 || max_m > 65536) {
        fprintf(stderr, "gemm_sweep: --n, --k and --max-m must be at most 65536\n");
        return 2;
    }

    host_info host;
    host_info_collect(&host);
    rng_state rng = rng_make(20261130);
    if (validate_small(&rng))
        return 1;

    /* Batch sizes: 1, 2, 3, 4, 6, 8, 12, ... (powers of two and the points
     * halfway between, in a log sense), up to max_m. */
    int ms[MAX_POINTS], npts = 0;
    for (int p = 1; p <= max_m && npts < MAX_POINTS - 1; p *= 2) {
        ms[npts++] = p;
        if (p >= 2 && p + p / 2 <= max_m && npts < MAX_POINTS)
            ms[npts++] = p + p / 2;
    }
    if (ms[npts - 1] != max_m && npts < MAX_POINTS)
        ms[npts++] = max_m;

    /* Enough weight copies to exceed twice the last-level cache. */
    double wbytes = (double)n * k * sizeof(float);
    int copies = quick ? 1 : (int)ceil(2 * host.llc_bytes / wbytes) + 1;
    if (host.mem_bytes > 0 && copies * wbytes > host.mem_bytes / 4)
        copies = (int)(host.mem_bytes / 4 / wbytes);
    if (copies < 1)
        copies = 1;
    float *x = malloc(sizeof(float) * (size_t)max_m * k), *y = malloc(sizeof(float) * (size_t)max_m * n);
    float **w = malloc(sizeof(float *) * (size_t)copies);
    if (!x || !y || !w) {
        fprintf(stderr, "gemm_sweep: out of memory\n");
        return 1;
    }
    fill_uniform_f32(&rng, x, (size_t)max_m * k, -1, 1);
    for (int c = 0; c < copies; c++) {
        if (!(w[c] = malloc((size_t)wbytes))) {
            fprintf(stderr, "gemm_sweep: out of memory for weight copy %d\n", c);
            return 1;
        }
        fill_uniform_f32(&rng, w[c], (size_t)n * k, -1, 1);
    }

    /* Rounds over the whole sweep (M = 1, 2, 3, ... then again), so that
     * other work on the machine slows every batch size alike; one warm-up
     * round first.  The weight rotates through its copies call by call. */
    /* Each round also times cblas_sgemv at M = 1: the library's own
     * matrix-vector product, the CPU's counterpart of kernels/gemv.cu. */
    double t_meas[MAX_POINTS], t_gemv;
    double *all = malloc(sizeof(double) * (size_t)reps * (npts + 1));
    if (!all) {
        fprintf(stderr, "gemm_sweep: out of memory\n");
        return 1;
    }
    int call = 0;
    /* Every timed call follows an untimed one of the same shape on another
     * weight copy: OpenBLAS's threads are awake and the core's clock has
     * settled for that kind of work (on a virtual machine a sleeping thread
     * can take milliseconds to wake, which would be timed otherwise). */
    for (int r = -1; r < reps; r++)
        for (int p = 0; p <= npts; p++)
            for (int warm = 1; warm >= 0; warm--) {
                const float *wr = w[call++ % copies];
                double t0 = now_s();
                if (p < npts)
                    sgemm_xwt(ms[p], n, k, x, wr, y);
                else
                    cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, wr, k, x, 1, 0.0f, y, 1);
                double t = now_s() - t0;
                if (r >= 0 && !warm)
                    all[(size_t)p * reps + r] = t;
            }
    for (int p = 0; p < npts; p++)
        t_meas[p] = median_of(all + (size_t)p * reps, reps);
    t_gemv = median_of(all + (size_t)npts * reps, reps);
    free(all);
    {
        /* sgemv against the reference: y = W x, 8 rows */
        const float *wl = w[0];
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, wl, k, x, 1, 0.0f, y, 1);
        float ref[8];
        int r0 = n > 8 ? (int)rng_below(&rng, (uint64_t)(n - 8)) : 0, rows = n - r0 < 8 ? n - r0 : 8;
        /* y[j] = sum_p W[j][p] x[p]: the reference with W and x swapped */
        for (int j = 0; j < rows; j++)
            gemm_ref_f32(1, 1, k, wl + (size_t)(r0 + j) * k, x, &ref[j], 0, 1);
        if (validate_close(y + r0, ref, (size_t)rows, 1e-3, 1e-3, NULL, NULL)) {
            fprintf(stderr, "gemm_sweep: sgemv differs from the reference\n");
            return 1;
        }
    }
    /* Validate: every batch size once more, 8 columns of every row against the reference. */
    for (int p = 0; p < npts; p++) {
        int m = ms[p];
        const float *wl = w[p % copies];
        sgemm_xwt(m, n, k, x, wl, y);
        float *ref = malloc(sizeof(float) * (size_t)m * n);
        if (!ref)
            return 1;
        int c0 = (int)(rng_below(&rng, (uint64_t)(n > 8 ? n - 8 : 1)));
        int c1 = c0 + 8 < n ? c0 + 8 : n;
        gemm_ref_f32(m, n, k, x, wl, ref, c0, c1);
        for (int i = 0; i < m; i++) {
            long first;
            /* |sum| of k products of |v| < 1 is ~sqrt(k)/3; fp32 rounding over k terms stays under 1e-3 */
            if (validate_close(y + (size_t)i * n + c0, ref + (size_t)i * n + c0, (size_t)(c1 - c0), 1e-3, 1e-3,
                               &first, NULL)) {
                fprintf(stderr, "gemm_sweep: M=%d row %d column %ld differs from the reference\n", m, i,
                        c0 + first);
                return 1;
            }
        }
        free(ref);
    }

    /* The measured ceilings: compute from the best point of the sweep;
     * bandwidth from the stream twin's read kernel, or from the BLAS GEMV
     * where it streams the weight faster (a ceiling is the best that code
     * reaches).  A bandwidth given with --bw is taken as it is. */
    double peak = 0;
    for (int p = 0; p < npts; p++)
        peak = fmax(peak, gemm_work_of(ms[p], n, k, 4, 4).flop / t_meas[p]);
    double bw_given = bw, bw_gemv = gemm_work_of(1, n, k, 4, 4).bytes / t_gemv;
    const char *bw_source = stream_path ? "stream read" : "--bw";
    if (stream_path && bw_gemv > bw) {
        bw = bw_gemv;
        bw_source = "cblas_sgemv at M = 1 (faster than the stream read)";
    }
    double ridge = ridge_intensity(peak, bw);
    double knee_pred = gemm_knee_batch(n, k, 4, 4, peak, bw);
    double knee_meas = measured_knee_batch(t_meas[0], ms[npts - 1], t_meas[npts - 1]);

    FILE *out = stdout;
    if (out_path && !(out = fopen(out_path, "w"))) {
        fprintf(stderr, "gemm_sweep: cannot write %s: %s\n", out_path, strerror(errno));
        return 1;
    }
    FILE *say = out == stdout ? stderr : stdout;
    char blas[320], buf[256];
    snprintf(blas, sizeof blas, "%s; %s; %d threads", OPENBLAS_VERSION, openblas_get_config(),
             openblas_get_num_threads());
    provenance_write_cpu(out, "gemm_sweep", &host, blas);
    provenance_line(out, "dtype", "fp32 in, fp32 accumulate, fp32 out");
    snprintf(buf, sizeof buf, "%d", copies);
    provenance_line(out, "weight_copies", buf);
    snprintf(buf, sizeof buf, "%d (median; rounds over the sweep, each timed call after an untimed one)", reps);
    provenance_line(out, "repeats", buf);
    snprintf(buf, sizeof buf, "%.6e", peak);
    provenance_line(out, "peak_flops_measured", buf);
    snprintf(buf, sizeof buf, "%.6e", bw);
    provenance_line(out, "bandwidth_measured", buf);
    provenance_line(out, "bandwidth_source", bw_source);
    snprintf(buf, sizeof buf, "%.6e", bw_given);
    provenance_line(out, stream_path ? "bandwidth_stream_read" : "bandwidth_given", buf);
    if (stream_path)
        provenance_line(out, "stream_file", stream_path);
    snprintf(buf, sizeof buf, "%.6e", bw_gemv);
    provenance_line(out, "bandwidth_sgemv", buf);
    fprintf(out, "shape\tm\tn\tk\ttime_s\ttflop_s\tgb_s\tintensity\tpred_time_s\tpred_bound\terror_pct\n");
    double pred[MAX_POINTS];
    {
        bound_kind b;
        gemm_work wk = gemm_work_of(1, n, k, 4, 4);
        double tp = gemm_predicted_time(1, n, k, 4, 4, peak, bw, &b);
        fprintf(out, "gemv_w%dx%d\t1\t%d\t%d\t%.6e\t%.5f\t%.3f\t%.3f\t%.6e\t%s\t%.1f\n", n, k, n, k, t_gemv,
                wk.flop / t_gemv / TERA, wk.bytes / t_gemv / GB, wk.intensity, tp, bound_name(b),
                100 * relative_error(tp, t_gemv));
    }
    for (int p = 0; p < npts; p++) {
        bound_kind b;
        gemm_work wk = gemm_work_of(ms[p], n, k, 4, 4);
        pred[p] = gemm_predicted_time(ms[p], n, k, 4, 4, peak, bw, &b);
        fprintf(out, "w%dx%d\t%d\t%d\t%d\t%.6e\t%.5f\t%.3f\t%.3f\t%.6e\t%s\t%.1f\n", n, k, ms[p], n, k, t_meas[p],
                wk.flop / t_meas[p] / TERA, wk.bytes / t_meas[p] / GB, wk.intensity, pred[p], bound_name(b),
                100 * relative_error(pred[p], t_meas[p]));
    }
    error_summary es = error_summary_of(pred, t_meas, npts);
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "gemm_sweep: error writing %s\n", out_path);
        return 1;
    }
    fprintf(say, "gemm_sweep fp32 %dx%d, M = 1..%d (%d points), validated against the reference\n", n, k, max_m,
            npts);
    fprintf(say, "  ceilings: peak %.1f GFLOP/s (best of the sweep), read bandwidth %.2f GB/s (%s)\n", peak / 1e9,
            bw / GB, bw_source);
    fprintf(say, "  ridge %.1f FLOP/byte; knee predicted at M = %.0f, measured at M = %.0f\n", ridge, knee_pred,
            knee_meas);
    double wbytes1 = gemm_work_of(1, n, k, 4, 4).bytes;
    fprintf(say, "  M = 1: sgemm streams %.2f GB/s, sgemv %.2f GB/s (%.0f%% and %.0f%% of the read ceiling)\n",
            wbytes1 / t_meas[0] / GB, wbytes1 / t_gemv / GB, 100 * wbytes1 / t_meas[0] / bw,
            100 * wbytes1 / t_gemv / bw);
    fprintf(say, "  prediction: median |error| %.0f%% (target <= %.0f%%): %s; worst %.0f%%\n", 100 * es.median_abs,
            100 * TARGET_MEDIAN_ERROR, es.median_abs <= TARGET_MEDIAN_ERROR ? "met" : "NOT met",
            100 * es.worst_abs);
    for (int c = 0; c < copies; c++)
        free(w[c]);
    free(w);
    free(x);
    free(y);
    return 0;
}
