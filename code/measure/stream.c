/* CPU twin of kernels/bandwidth.cu: STREAM-style copy (b = a), read (the sum
 * of a), write (c = s) and triad (b = a + s c) over arrays several times the
 * last-level cache, with one thread per core.  GB/s count bytes read +
 * written (write-allocate traffic not counted), the convention of STREAM and
 * BabelStream.  Every result is validated against a serial reference before
 * any number is printed.
 *
 *   stream [--quick] [--bytes N] [--reps R] [--threads T] [--out FILE] [--print-slug]
 *
 * TSV (provenance header, then one row per kernel) goes to --out (default
 * stdout); the human summary goes to stderr when TSV is on stdout. */
#include "measure_ref.h"
#include "provenance.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    stream_kind kind;
    double *a, *b, *c;
    size_t begin, end;
    double scalar;
    double partial; /* read: this thread's sum */
} slice;

static void *run_slice(void *arg)
{
    slice *s = arg;
    double *restrict a = s->a, *restrict b = s->b, *restrict c = s->c;
    switch (s->kind) {
    case STREAM_COPY:
        for (size_t i = s->begin; i < s->end; i++)
            b[i] = a[i];
        break;
    case STREAM_READ: {
        /* Eight partial sums so the adds are not one dependency chain, and a
         * software prefetch 2 KiB ahead: without it the hardware prefetcher
         * leaves a plain read loop well short of what a tuned BLAS GEMV reads
         * on the same machine, and a ceiling must be the best that code
         * reaches, not the easiest loop's. */
        double acc[8] = {0};
        size_t i = s->begin;
        for (; i + 8 <= s->end; i += 8) {
            __builtin_prefetch(a + i + 256);
            for (int u = 0; u < 8; u++)
                acc[u] += a[i + u];
        }
        for (; i < s->end; i++)
            acc[0] += a[i];
        s->partial = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        break;
    }
    case STREAM_WRITE:
        for (size_t i = s->begin; i < s->end; i++)
            c[i] = s->scalar;
        break;
    case STREAM_TRIAD:
        for (size_t i = s->begin; i < s->end; i++) /* a stays untouched, so every round sees the same a */
            b[i] = a[i] + s->scalar * c[i];
        break;
    default:
        break;
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One pass of a kernel over n elements on `threads` threads; returns seconds,
 * and the total of the read kernel in *sum. */
static double run_pass(stream_kind kind, double *a, double *b, double *c, size_t n, int threads, double scalar,
                       double *sum)
{
    pthread_t tid[256];
    slice sl[256];
    double t0 = now_s();
    for (int t = 0; t < threads; t++) {
        sl[t] = (slice){kind, a, b, c, n * t / threads, n * (t + 1) / threads, scalar, 0};
        if (pthread_create(&tid[t], NULL, run_slice, &sl[t]) != 0) {
            fprintf(stderr, "stream: cannot start thread %d\n", t);
            exit(1);
        }
    }
    double total = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        total += sl[t].partial;
    }
    double dt = now_s() - t0;
    if (sum)
        *sum = total;
    return dt;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: stream [--quick] [--bytes N] [--reps R] [--threads T] [--out FILE] [--print-slug]\n"
               "  --bytes N    bytes per array (default: 4x the last-level cache, at least 256 MiB,\n"
               "               at most 1/8 of memory); --quick: 16 MiB, 3 repeats (a correctness run)\n");
}

static int parse_positive(const char *flag, const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = v ? strtod(v, &end) : 0;
    if (!v || errno || *end || !(x > 0)) {
        fprintf(stderr, "stream: %s needs a positive number, got '%s'\n", flag, v ? v : "(nothing)");
        return -1;
    }
    *out = x;
    return 0;
}

int main(int argc, char **argv)
{
    host_info host;
    host_info_collect(&host);
    double bytes = 0, reps_d = 0, threads_d = 0;
    int quick = 0;
    const char *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(f, "--quick") == 0)
            quick = 1;
        else if (strcmp(f, "--print-slug") == 0) {
            char slug[256];
            cpu_set_slug(&host, slug, sizeof slug);
            printf("%s\n", slug);
            return 0;
        } else if (strcmp(f, "--bytes") == 0) {
            if (parse_positive(f, v, &bytes))
                return 2;
            i++;
        } else if (strcmp(f, "--reps") == 0) {
            if (parse_positive(f, v, &reps_d))
                return 2;
            i++;
        } else if (strcmp(f, "--threads") == 0) {
            if (parse_positive(f, v, &threads_d) || threads_d > 256) {
                fprintf(stderr, "stream: --threads must be 1..256\n");
                return 2;
            }
            i++;
        } else if (strcmp(f, "--out") == 0) {
            if (!v) {
                fprintf(stderr, "stream: --out needs a file name\n");
                return 2;
            }
            out_path = v;
            i++;
        } else if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "stream: unknown flag '%s'\n", f);
            usage(stderr);
            return 2;
        }
    }
    if (bytes == 0) {
        bytes = quick ? 16 * MiB : fmax(4 * host.llc_bytes, 256 * MiB);
        if (!quick && host.mem_bytes > 0 && bytes > host.mem_bytes / 8)
            bytes = host.mem_bytes / 8;
    }
    int reps = reps_d > 0 ? (int)reps_d : quick ? 3 : 9;
    int threads = threads_d > 0 ? (int)threads_d : host.cores > 256 ? 256 : host.cores;
    size_t n = (size_t)(bytes / sizeof(double));
    if (n < (size_t)threads * 4) {
        fprintf(stderr, "stream: --bytes too small for %d threads\n", threads);
        return 2;
    }
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c ) {
        fprintf(stderr, "stream: cannot allocate 3 arrays of %.0f bytes\n", (double)n * sizeof(double));
        return 1;
    }
    /* Random, never-zero inputs from a fixed seed; first touch on every page. */
    rng_state rng = rng_make(20261130);
    for (size_t i = 0; i < n; i++) {
        a[i] = 1.0 + rng_uniform(&rng);
        b[i] = 0;
        c[i] = 0;
    }
    double serial_sum = 0;
    for (size_t i = 0; i < n; i++)
        serial_sum += a[i];

    FILE *out = stdout;
    if (out_path && !(out = fopen(out_path, "w"))) {
        fprintf(stderr, "stream: cannot write %s: %s\n", out_path, strerror(errno));
        return 1;
    }
    FILE *say = out == stdout ? stderr : stdout;
    provenance_write_cpu(out, "stream", &host, NULL);
    char buf[160];
    snprintf(buf, sizeof buf, "%d", threads);
    provenance_line(out, "threads", buf);
    snprintf(buf, sizeof buf, "%d (median reported; rounds of all kernels interleaved after one warm-up round)", reps);
    provenance_line(out, "repeats", buf);
    provenance_line(out, "bytes_counted", "read + written; write-allocate not counted");
    fprintf(out, "kernel\tarray_bytes\telements\tbytes_moved\ttime_s\tgb_s\tbest_gb_s\tpct_datasheet\n");

    /* Repeats are interleaved (copy, read, write, triad, copy, ...) so that
     * other work on the machine slows every kernel alike, not one of them. */
    const double scalar = 0.5;
    stream_kind order[] = {STREAM_COPY, STREAM_READ, STREAM_WRITE, STREAM_TRIAD};
    enum { NK = sizeof order / sizeof order[0] };
    double *kt[NK];
    for (int kk = 0; kk < NK; kk++)
        if (!(kt[kk] = malloc((size_t)reps * sizeof(double)))) {
            fprintf(stderr, "stream: out of memory\n");
            return 1;
        }
    double sum = 0;
    for (int r = -1; r < reps; r++) /* r = -1: the warm-up round */
        for (int kk = 0; kk < NK; kk++) {
            double t = run_pass(order[kk], a, b, c, n, threads, scalar, &sum);
            if (r >= 0)
                kt[kk][r] = t;
            if (order[kk] == STREAM_READ && fabs(sum - serial_sum) > 1e-9 * fabs(serial_sum)) {
                fprintf(stderr, "stream: read: sum %.17g differs from the serial reference %.17g\n", sum,
                        serial_sum);
                return 1;
            }
        }
    /* Validate every element against the serial reference.  After the last
     * round c = scalar (write) and b = a + scalar * c (triad); one more copy
     * pass must then make b equal a exactly. */
    size_t bad_copy = 0, bad_write = 0, bad_triad = 0;
    for (size_t i = 0; i < n; i++) {
        bad_write += c[i] != scalar;
        bad_triad += b[i] != a[i] + scalar * scalar;
    }
    run_pass(STREAM_COPY, a, b, c, n, threads, scalar, NULL);
    for (size_t i = 0; i < n; i++)
        bad_copy += b[i] != a[i];
    if (bad_copy || bad_write || bad_triad) {
        fprintf(stderr, "stream: results differ from the serial reference (copy %zu, write %zu, triad %zu elements)\n",
                bad_copy, bad_write, bad_triad);
        return 1;
    }
    for (int kk = 0; kk < NK; kk++) {
        stream_kind k = order[kk];
        double med = median_of(kt[kk], reps), best = kt[kk][0];
        for (int r = 1; r < reps; r++)
            best = fmin(best, kt[kk][r]);
        double moved = stream_bytes(k, (double)n, sizeof(double));
        fprintf(out, "%s\t%.0f\t%zu\t%.0f\t%.6e\t%.2f\t%.2f\t-\n", stream_kind_name(k), (double)n * sizeof(double), n,
                moved, med, moved / med / GB, moved / best / GB);
        fprintf(say, "stream %-5s %8.2f GB/s (median of %d, best %.2f)  validated\n", stream_kind_name(k),
                moved / med / GB, reps, moved / best / GB);
        free(kt[kk]);
    }
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "stream: error writing %s\n", out_path);
        return 1;
    }
    free(a);
    free(b);
    free(c);
    return 0;
}
