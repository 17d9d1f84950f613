/* Chapter 2: the committed CPU set (figures/measured/<cpu>/), read back and
 * set against the library's roofline with the measured ceilings.
 *
 * Values: ch02_cpu_* (the device, the ceilings, the ridge, the knee, the
 * prediction error overall and per batch size).  Data for the figures:
 * 02-cpu-pred.tsv (predicted time against batch), 02-cpu-roof.tsv (the
 * measured roofline), 02-cpu-ridge.tsv, and 02-yours.tsv: the set `make
 * measure` left in $NB_BUILD/measured/, if any, with its own prediction. */
#include "gemm_model.h"
#include "measured.h"
#include "notebook.h"
#include "units.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The set committed with the book: measured on the build machine by
 * `make measure` (tools/measure.sh), copied untouched. */
#define CPU_SET "figures/measured/cpu-intel-xeon-processor-2c"
#define MAX_ROWS 256

static void load_or_die(const char *path, measured_table *t)
{
    char err[512];
    if (measured_table_load(path, t, err, sizeof err) != 0) {
        fprintf(stderr, "cpu_measured: %s\n", err);
        exit(1);
    }
}

static int col_or_die(const measured_table *t, const char *name, const char *file)
{
    int c = measured_col(t, name);
    if (c < 0) {
        fprintf(stderr, "cpu_measured: %s: no column '%s'\n", file, name);
        exit(1);
    }
    return c;
}

static const char *meta_or(const measured_table *t, const char *key, const char *fallback)
{
    const char *v = measured_meta(t, key);
    return v ? v : fallback;
}

typedef struct {
    int n;
    double m[MAX_ROWS], t[MAX_ROWS];
    int wn, wk; /* weight shape */
    double elem;
} sweep;

/* Rows of one shape (the last in the file: the square) of a gemm.tsv. */
static void read_sweep(const measured_table *g, const char *file, sweep *s)
{
    int sc = col_or_die(g, "shape", file), mc = col_or_die(g, "m", file), nc = col_or_die(g, "n", file);
    int kc = col_or_die(g, "k", file), tc = col_or_die(g, "time_s", file);
    const char *last = measured_cell(g, g->nrows - 1, sc);
    s->n = 0;
    for (int r = 0; r < g->nrows && s->n < MAX_ROWS; r++)
        if (strcmp(measured_cell(g, r, sc), last) == 0) {
            s->m[s->n] = measured_num(g, r, mc);
            s->t[s->n] = measured_num(g, r, tc);
            s->wn = (int)measured_num(g, r, nc);
            s->wk = (int)measured_num(g, r, kc);
            s->n++;
        }
    const char *kind = meta_or(g, "kind", "cpu");
    s->elem = strcmp(kind, "gpu") == 0 ? 2 : 4; /* bf16 on the GPU, fp32 on the CPU */
    if (s->n < 2) {
        fprintf(stderr, "cpu_measured: %s: fewer than two rows\n", file);
        exit(1);
    }
}

static double sweep_peak(const sweep *s)
{
    double peak = 0;
    for (int i = 0; i < s->n; i++)
        peak = fmax(peak, gemm_work_of(s->m[i], s->wn, s->wk, s->elem, s->elem).flop / s->t[i]);
    return peak;
}

/* The reader's own set, if `make measure` wrote one: first directory under
 * $NB_BUILD/measured with a gemm.tsv.  Writes 02-yours.tsv either way (a
 * single NaN row when there is none, so the figure script needs no branch). */
static void write_yours(void)
{
    FILE *f = nb_data_open("02-yours.tsv");
    const char *b = getenv("NB_BUILD");
    char dir[512], path[1024];
    snprintf(dir, sizeof dir, "%s/measured", b ? b : "build");
    DIR *d = opendir(dir);
    struct dirent *e;
    int done = 0;
    while (d && !done && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/gemm.tsv", dir, e->d_name);
        measured_table g;
        char err[256];
        if (measured_table_load(path, &g, err, sizeof err) != 0)
            continue;
        double bw = atof(meta_or(&g, "bandwidth_measured", "0"));
        if (g.nrows >= 2 && bw > 0) {
            sweep s;
            read_sweep(&g, path, &s);
            double peak = sweep_peak(&s);
            fprintf(f, "# device: %s (%s)\nm\ttime_s\tpred_time_s\n", meta_or(&g, "device", "?"),
                    meta_or(&g, "date", "?"));
            for (int i = 0; i < s.n; i++)
                fprintf(f, "%g\t%.6e\t%.6e\n", s.m[i], s.t[i],
                        gemm_predicted_time(s.m[i], s.wn, s.wk, s.elem, s.elem, peak, bw, NULL));
            done = 1;
        }
        measured_table_free(&g);
    }
    if (d)
        closedir(d);
    if (!done)
        fprintf(f, "# device: none (run make measure)\nm\ttime_s\tpred_time_s\n1\tNaN\tNaN\n");
    fclose(f);
}

int main(void)
{
    measured_table st, g;
    load_or_die(CPU_SET "/stream.tsv", &st);
    load_or_die(CPU_SET "/gemm.tsv", &g);

    /* Provenance, quoted in the prose and captions. */
    nb_value("ch02_cpu_device", "%s", meta_or(&st, "device", "unknown"));
    nb_value("ch02_cpu_cores", "%s", meta_or(&st, "cores", "?"));
    nb_value("ch02_cpu_threads", "%s", meta_or(&st, "threads", "?"));
    char date[16];
    snprintf(date, sizeof date, "%.10s", meta_or(&g, "date", "unknown"));
    nb_value("ch02_cpu_date", "%s", date);
    char blas[64];
    snprintf(blas, sizeof blas, "%s", meta_or(&g, "blas", "unknown"));
    blas[strcspn(blas, ";")] = '\0'; /* "OpenBLAS 0.3.21 ; <config>": the version only */
    size_t len = strlen(blas);
    while (len > 0 && blas[len - 1] == ' ')
        blas[--len] = '\0';
    nb_value("ch02_cpu_blas", "%s", blas + strspn(blas, " "));
    nb_value("ch02_cpu_loadavg", "%.4s", meta_or(&g, "loadavg", "?"));
    nb_value("ch02_cpu_llc_mib", "%.0f", atof(meta_or(&st, "llc_bytes", "0")) / MiB);
    nb_value("ch02_cpu_stream_mib", "%.0f", measured_num(&st, 0, col_or_die(&st, "array_bytes", "stream.tsv")) / MiB);

    /* Stream ceilings. */
    int kc = col_or_die(&st, "kernel", "stream.tsv"), gc = col_or_die(&st, "gb_s", "stream.tsv");
    int bc = col_or_die(&st, "best_gb_s", "stream.tsv");
    const char *kinds[] = {"copy", "read", "write", "triad"};
    double read_bw = 0;
    for (int i = 0; i < 4; i++) {
        int r = measured_find_row(&st, kc, kinds[i]);
        if (r < 0) {
            fprintf(stderr, "cpu_measured: stream.tsv: no %s row\n", kinds[i]);
            return 1;
        }
        char name[64];
        snprintf(name, sizeof name, "ch02_cpu_%s_gbs", kinds[i]);
        nb_value(name, "%.1f", measured_num(&st, r, gc));
        snprintf(name, sizeof name, "ch02_cpu_%s_best_gbs", kinds[i]);
        nb_value(name, "%.1f", measured_num(&st, r, bc));
        if (strcmp(kinds[i], "read") == 0)
            read_bw = measured_num(&st, r, gc) * GB;
    }

    /* The sweep, its ceilings and the prediction.  The bandwidth ceiling is
     * the one the twin chose (stream read, or its BLAS GEMV where faster). */
    sweep s;
    read_sweep(&g, "gemm.tsv", &s);
    double peak = sweep_peak(&s);
    double stream_read_bw = read_bw;
    read_bw = atof(meta_or(&g, "bandwidth_measured", "0"));
    if (!(read_bw > 0)) {
        fprintf(stderr, "cpu_measured: gemm.tsv: no bandwidth_measured\n");
        return 1;
    }
    nb_value("ch02_cpu_ceiling_is_gemv", "%s", read_bw > stream_read_bw * 1.000001 ? "yes" : "no");
    nb_value("ch02_cpu_n", "%d", s.wn);
    nb_value("ch02_cpu_k", "%d", s.wk);
    nb_value("ch02_cpu_points", "%d", s.n);
    nb_value("ch02_cpu_max_m", "%.0f", s.m[s.n - 1]);
    nb_value("ch02_cpu_peak_gflops", "%.0f", peak / 1e9);
    for (int i = 0; i < s.n; i++) /* the point that sets the peak */
        if (gemm_work_of(s.m[i], s.wn, s.wk, s.elem, s.elem).flop / s.t[i] >= peak)
            nb_value("ch02_cpu_peak_m", "%.0f", s.m[i]);
    nb_value("ch02_cpu_ceiling_gbs", "%.1f", read_bw / GB);
    double ridge = ridge_intensity(peak, read_bw);
    nb_value("ch02_cpu_ridge", "%.0f", ridge);
    double knee_pred = gemm_knee_batch(s.wn, s.wk, s.elem, s.elem, peak, read_bw);
    double knee_meas = measured_knee_batch(s.t[0], s.m[s.n - 1], s.t[s.n - 1]);
    nb_value("ch02_cpu_knee_pred", "%.0f", knee_pred);
    nb_value("ch02_cpu_knee_meas", "%.0f", knee_meas);
    nb_value("ch02_cpu_weight_mib", "%.0f", s.wn * (double)s.wk * s.elem / MiB);

    double pred[MAX_ROWS];
    for (int i = 0; i < s.n; i++)
        pred[i] = gemm_predicted_time(s.m[i], s.wn, s.wk, s.elem, s.elem, peak, read_bw, NULL);
    error_summary es = error_summary_of(pred, s.t, s.n);
    nb_value("ch02_cpu_err_median", "%.0f", 100 * es.median_abs);
    nb_value("ch02_cpu_err_worst", "%.0f", 100 * es.worst_abs);
    nb_value("ch02_cpu_err_mean", "%.0f", 100 * es.mean);
    /* The target for the CPU twin: median |error| within 25%. */
    nb_value("ch02_cpu_target", "%s", es.median_abs <= 0.25 ? "met" : "not met");

    /* Error split by which term the roofline says binds. */
    double pm[MAX_ROWS], mm[MAX_ROWS], pc[MAX_ROWS], mc[MAX_ROWS];
    int nm = 0, ncomp = 0;
    for (int i = 0; i < s.n; i++) {
        bound_kind b;
        gemm_predicted_time(s.m[i], s.wn, s.wk, s.elem, s.elem, peak, read_bw, &b);
        if (b == BOUND_MEMORY)
            pm[nm] = pred[i], mm[nm++] = s.t[i];
        else
            pc[ncomp] = pred[i], mc[ncomp++] = s.t[i];
    }
    error_summary em = error_summary_of(pm, mm, nm), ec = error_summary_of(pc, mc, ncomp);
    nb_value("ch02_cpu_err_memory_median", "%.0f", 100 * em.median_abs);
    nb_value("ch02_cpu_err_compute_median", "%.0f", 100 * ec.median_abs);
    nb_value("ch02_cpu_points_memory", "%d", nm);
    nb_value("ch02_cpu_points_compute", "%d", ncomp);

    /* The achieved weight-streaming rate at M = 1 against the read ceiling. */
    double m1_bytes = gemm_work_of(s.m[0], s.wn, s.wk, s.elem, s.elem).bytes;
    nb_value("ch02_cpu_m1_gbs", "%.1f", m1_bytes / s.t[0] / GB);
    nb_value("ch02_cpu_m1_pct_read", "%.0f", 100 * m1_bytes / s.t[0] / read_bw);

    /* cblas_sgemv at M = 1, timed in the same rounds: the library's own GEMV. */
    {
        int shc = col_or_die(&g, "shape", "gemm.tsv"), tc = col_or_die(&g, "time_s", "gemm.tsv");
        int r = -1;
        for (int i = 0; i < g.nrows && r < 0; i++)
            if (strncmp(measured_cell(&g, i, shc), "gemv", 4) == 0)
                r = i;
        if (r < 0) {
            fprintf(stderr, "cpu_measured: gemm.tsv has no gemv row\n");
            return 1;
        }
        double tg = measured_num(&g, r, tc);
        nb_value("ch02_cpu_gemv_gbs", "%.1f", m1_bytes / tg / GB);
        nb_value("ch02_cpu_gemv_pct_read", "%.0f", 100 * m1_bytes / tg / read_bw);
        nb_value("ch02_cpu_gemv_speedup", "%.1f", s.t[0] / tg);
        nb_value("ch02_cpu_gemv_err", "%.0f", 100 * fabs(relative_error(pred[0], tg)));
    }

    /* The table of prediction error per batch size. */
    const int table_m[] = {1, 8, 32, 64, 128, 256, 512, 1024};
    for (size_t j = 0; j < sizeof table_m / sizeof table_m[0]; j++) {
        int i = 0;
        while (i < s.n && s.m[i] != table_m[j])
            i++;
        if (i == s.n) {
            fprintf(stderr, "cpu_measured: the committed sweep has no M = %d\n", table_m[j]);
            return 1;
        }
        bound_kind b;
        gemm_predicted_time(s.m[i], s.wn, s.wk, s.elem, s.elem, peak, read_bw, &b);
        char name[64];
        snprintf(name, sizeof name, "ch02_cpu_m%d_meas_ms", table_m[j]);
        nb_value(name, "%.2f", s.t[i] * 1e3);
        snprintf(name, sizeof name, "ch02_cpu_m%d_pred_ms", table_m[j]);
        nb_value(name, "%.2f", pred[i] * 1e3);
        snprintf(name, sizeof name, "ch02_cpu_m%d_err", table_m[j]);
        nb_value(name, "%+.0f", 100 * relative_error(pred[i], s.t[i]));
        snprintf(name, sizeof name, "ch02_cpu_m%d_bound", table_m[j]);
        nb_value(name, "%s", bound_name(b));
        snprintf(name, sizeof name, "ch02_cpu_m%d_gflops", table_m[j]);
        nb_value(name, "%.0f", gemm_work_of(s.m[i], s.wn, s.wk, s.elem, s.elem).flop / s.t[i] / 1e9);
    }

    /* Figure data: the predicted curve on a fine grid, the two roofline terms,
     * the roof against intensity, and the ridge. */
    FILE *f = nb_data_open("02-cpu-pred.tsv");
    fprintf(f, "m\tpred_time_s\tmemory_s\tcompute_s\n");
    for (double m = 1; m <= s.m[s.n - 1] * 1.0001; m *= 1.05) {
        gemm_work w = gemm_work_of(m, s.wn, s.wk, s.elem, s.elem);
        fprintf(f, "%.4f\t%.6e\t%.6e\t%.6e\n", m, gemm_predicted_time(m, s.wn, s.wk, s.elem, s.elem, peak, read_bw, NULL),
                w.bytes / read_bw, w.flop / peak);
    }
    fclose(f);
    f = nb_data_open("02-cpu-roof.tsv");
    fprintf(f, "intensity\tgflops\n");
    for (double x = 0.1; x <= 2000; x *= 1.1)
        fprintf(f, "%.5f\t%.5f\n", x, attainable_flops(x, peak, read_bw) / 1e9);
    fclose(f);
    f = nb_data_open("02-cpu-ridge.tsv");
    fprintf(f, "ridge\tpeak_gflops\tknee_pred\tknee_meas\n%.4f\t%.4f\t%.4f\t%.4f\n", ridge, peak / 1e9, knee_pred,
            knee_meas);
    fclose(f);
    write_yours();
    measured_table_free(&st);
    measured_table_free(&g);
    return 0;
}
