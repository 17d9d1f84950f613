/* napkin: no-asan */
/* The CPU twins (code/measure/) at their --quick sizes: they validate their
 * own results and exit 0, write the shared TSV format with provenance, count
 * bytes and FLOP the agreed way, and reject bad flags with exit 2.  Run as
 * separate programs, so this suite stays out of the sanitizer run. */
#include "gemm_model.h"
#include "measured.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch_dir.h"
#include "shell_run.h"

TestSuite(twins, .init = scratch_suite_make, .fini = scratch_suite_remove, .timeout = 120);

/* A measurement program's CPU twin, built under bin/measure/. */
static const char *twin(const char *name, char *buf, size_t n)
{
    return built_program("bin/measure", name, buf, n);
}

static void load(const char *file, measured_table *t)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/%s", scratch_dir, file);
    cr_assert_eq(measured_table_load(path, t, err, sizeof err), 0, "%s", err);
}

Test(twins, stream_quick_validates_and_counts_bytes)
{
    char bin[512], cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "%s --quick --out %s/stream.tsv", twin("stream", bin, sizeof bin), scratch_dir);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "validated") != NULL, "%s", out);
    measured_table t;
    load("stream.tsv", &t);
    cr_assert_str_eq(measured_meta(&t, "measurement"), "stream");
    cr_assert_str_eq(measured_meta(&t, "kind"), "cpu");
    cr_assert_not_null(measured_meta(&t, "device"));
    cr_assert_not_null(measured_meta(&t, "date"));
    cr_assert_not_null(measured_meta(&t, "git"));
    cr_assert_eq(t.nrows, 4);
    int kc = measured_col(&t, "kernel"), ab = measured_col(&t, "array_bytes"), bm = measured_col(&t, "bytes_moved");
    int tc = measured_col(&t, "time_s"), gc = measured_col(&t, "gb_s");
    cr_assert(kc >= 0 && ab >= 0 && bm >= 0 && tc >= 0 && gc >= 0);
    /* --quick arrays are 16 MiB = 16,777,216 bytes; copy moves 2 arrays, read 1, write 1, triad 3 */
    const char *kinds[4] = {"copy", "read", "write", "triad"};
    double arrays[4] = {2, 1, 1, 3};
    for (int i = 0; i < 4; i++) {
        int r = measured_find_row(&t, kc, kinds[i]);
        cr_assert_geq(r, 0, "no %s row", kinds[i]);
        cr_assert_float_eq(measured_num(&t, r, ab), 16777216.0, 0);
        cr_assert_float_eq(measured_num(&t, r, bm), arrays[i] * 16777216.0, 0);
        /* GB/s is bytes / time / 1e9, printed to 2 decimals */
        double want = measured_num(&t, r, bm) / measured_num(&t, r, tc) / 1e9;
        cr_assert_float_eq(measured_num(&t, r, gc), want, 0.006 + 1e-3 * want);
    }
    measured_table_free(&t);
}

Test(twins, gemm_quick_validates_and_predicts)
{
    char bin[512], cmd[1024], out[8192];
    /* Given ceiling 10 GB/s; quick shape N = K = 512, fp32 */
    snprintf(cmd, sizeof cmd, "%s --quick --bw 10e9 --out %s/gemm.tsv", twin("gemm_sweep", bin, sizeof bin),
             scratch_dir);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "validated against the reference") != NULL, "%s", out);
    cr_assert(strstr(out, "(target <= 25%)") != NULL, "%s", out);
    measured_table t;
    load("gemm.tsv", &t);
    cr_assert_str_eq(measured_meta(&t, "measurement"), "gemm_sweep");
    cr_assert(strstr(measured_meta(&t, "blas"), "OpenBLAS") != NULL);
    cr_assert_float_eq(atof(measured_meta(&t, "bandwidth_measured")), 10e9, 1);
    double peak = atof(measured_meta(&t, "peak_flops_measured"));
    int mc = measured_col(&t, "m"), tc = measured_col(&t, "time_s"), fc = measured_col(&t, "tflop_s");
    int pc = measured_col(&t, "pred_time_s"), bc = measured_col(&t, "pred_bound");
    cr_assert(mc >= 0 && tc >= 0 && fc >= 0 && pc >= 0 && bc >= 0);
    /* the sgemv row first, then M = 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64: 13 rows */
    cr_assert_eq(t.nrows, 13);
    int sc = measured_col(&t, "shape");
    cr_assert_str_eq(measured_cell(&t, 0, sc), "gemv_w512x512");
    cr_assert_str_eq(measured_cell(&t, 1, sc), "w512x512");
    cr_assert_float_eq(measured_num(&t, 1, mc), 1, 0);
    cr_assert_float_eq(measured_num(&t, 12, mc), 64, 0);
    /* M = 1: bytes = 4*(512 + 512*512) + 4*512 = 1,052,672, over 10 GB/s = 105.2672 us,
     * memory-bound unless the measured peak is below 2*512*512 / 105.27 us = 4.98 GFLOP/s */
    if (peak > 5e9) {
        cr_assert_float_eq(measured_num(&t, 1, pc), 1.052672e-4, 1e-9);
        cr_assert_str_eq(measured_cell(&t, 1, bc), "memory");
    }
    for (int r = 0; r < t.nrows; r++) {
        double m = measured_num(&t, r, mc), secs = measured_num(&t, r, tc);
        /* 2*m*512*512 FLOP over the time, in TFLOP/s to 5 decimals */
        cr_assert_float_eq(measured_num(&t, r, fc), 2 * m * 512 * 512 / secs / 1e12, 6e-6);
        /* the peak is the best point of the sweep: no sweep point beats it */
        if (r > 0) /* the sweep's best point is the peak; sgemv is not part of it */
            cr_assert_leq(2 * m * 512 * 512 / secs, peak * (1 + 1e-6));
    }
    measured_table_free(&t);
}

Test(twins, gemm_reads_the_stream_file)
{
    char sbin[512], gbin[512], cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "%s --quick --out %s/stream.tsv && %s --quick --stream %s/stream.tsv --out %s/g.tsv",
             twin("stream", sbin, sizeof sbin), scratch_dir, twin("gemm_sweep", gbin, sizeof gbin), scratch_dir,
             scratch_dir);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 0, "%s", out);
    measured_table s, g;
    load("stream.tsv", &s);
    load("g.tsv", &g);
    int r = measured_find_row(&s, measured_col(&s, "kernel"), "read");
    /* the ceiling is the faster of the read row's GB/s and the sgemv row's, in bytes/s */
    double read = measured_num(&s, r, measured_col(&s, "gb_s")) * 1e9;
    double gemv = measured_num(&g, 0, measured_col(&g, "gb_s")) * 1e9;
    cr_assert_str_eq(measured_cell(&g, 0, measured_col(&g, "shape")), "gemv_w512x512");
    cr_assert_float_eq(atof(measured_meta(&g, "bandwidth_stream_read")), read, read * 1e-6);
    double want = read > gemv ? read : gemv;
    /* gb_s is printed to 3 decimals: 5e-4 GB/s */
    cr_assert_float_eq(atof(measured_meta(&g, "bandwidth_measured")), want, 5e5 + want * 1e-6);
    measured_table_free(&s);
    measured_table_free(&g);
}

Test(twins, bad_input_exits_2_with_a_message)
{
    char bin[512], cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "%s --bogus", twin("stream", bin, sizeof bin));
    cr_assert_eq(shell_run(cmd, out, sizeof out), 2);
    cr_assert(strstr(out, "unknown flag '--bogus'") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "%s --bytes -5", bin);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 2);
    cr_assert(strstr(out, "--bytes needs a positive number") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "%s --quick", twin("gemm_sweep", bin, sizeof bin));
    cr_assert_eq(shell_run(cmd, out, sizeof out), 2, "%s", out); /* no bandwidth ceiling given */
    cr_assert(strstr(out, "--stream FILE") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "%s --quick --stream /nonexistent.tsv", bin);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 1);
    cr_assert(strstr(out, "/nonexistent.tsv") != NULL, "%s", out);
}
