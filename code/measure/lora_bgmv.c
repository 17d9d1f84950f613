/* CPU twin of kernels/lora_bgmv.cu: the batched gathered adapter operator of
 * a decode step (shrink x A^T to the rank, expand v B^T back, one adapter
 * index per token), bf16 weights and activations in, fp32 sums, in plain C
 * over the counter RNG.  Timed against D distinct adapters at a fixed batch,
 * over `layers` separate adapter pools (so the working set is the step's, not
 * one layer's), with the last-level cache flushed before every timed run.
 * One thread: the read and compute ceilings it is judged against are
 * measured here, on one thread, in the same run.
 *
 *   lora_bgmv [--quick] [--batch B] [--rank R] [--d-in N] [--d-out N] [--layers L]
 *             [--reps R] [--out FILE] [--print-slug]
 *
 * TSV (provenance header, then one row per D) goes to --out (default stdout);
 * the summary goes to stderr when TSV is on stdout.  Every D is validated
 * against lora_bgmv_ref before any time is printed. */
#include "counter_rng.h"
#include "lora.h"
#include "lora_ref.h"
#include "measure_ref.h"
#include "provenance.h"
#include "roofline.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ADAPTERS 64

static const uint64_t SEED_X = 61, SEED_A = 62, SEED_B = 63, SEED_Y = 64;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline float bf(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void fill_bf16(uint16_t *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = bf16_from_f32(counter_uniform(seed, i, -1, 1));
}

/* The dot product of n bf16 pairs in eight fp32 lanes (so the compiler can
 * keep them in one vector register); n % 8 == 0. */
static inline float dot8(const uint16_t *restrict a, const uint16_t *restrict b, int n)
{
    float acc[8] = {0};
    for (int i = 0; i < n; i += 8)
        for (int u = 0; u < 8; u++)
            acc[u] += bf(a[i + u]) * bf(b[i + u]);
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static inline float dot8_f(const float *restrict v, const uint16_t *restrict b, int n)
{
    float acc[8] = {0};
    for (int i = 0; i < n; i += 8)
        for (int u = 0; u < 8; u++)
            acc[u] += v[i + u] * bf(b[i + u]);
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

//> twin_bgmv
/* One layer: y[t] += scale * (x[t] A[idx t]^T) B[idx t]^T.  A is adapters x
 * rank x d_in, B adapters x d_out x rank; y is fp32 here (the sum a bf16
 * output would be rounded from). */
static void bgmv_layer(int tokens, int d_in, int d_out, int rank, const uint16_t *x, const uint16_t *a,
                       const uint16_t *b, const int *idx, float scale, float *v, float *y)
{
    for (int t = 0; t < tokens; t++) {
        const uint16_t *xt = x + (size_t)t * d_in;
        const uint16_t *at = a + (size_t)idx[t] * rank * d_in;
        const uint16_t *bt = b + (size_t)idx[t] * d_out * rank;
        for (int j = 0; j < rank; j++) /* shrink */
            v[j] = dot8(xt, at + (size_t)j * d_in, d_in);
        float *yt = y + (size_t)t * d_out;
        for (int o = 0; o < d_out; o++) /* expand */
            yt[o] += scale * dot8_f(v, bt + (size_t)o * rank, rank);
    }
}
//< twin_bgmv

/* Read every byte of `bytes` once (a bf16 sum, the operator's own load). */
static float read_pass(const uint16_t *p, size_t n)
{
    float acc[8] = {0};
    for (size_t i = 0; i + 8 <= n; i += 8) {
        __builtin_prefetch(p + i + 512);
        for (int u = 0; u < 8; u++)
            acc[u] += bf(p[i + u]);
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* Evict the caches: write then read a buffer of several times the LLC. */
static float flush(uint16_t *buf, size_t n, int round)
{
    memset(buf, round & 0x7f, n * sizeof *buf);
    return read_pass(buf, n);
}

static int parse_int_flag(const char *flag, const char *v, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || *end || x < lo || x > hi) {
        fprintf(stderr, "lora_bgmv: %s needs a whole number from %d to %d, got '%s'\n", flag, lo, hi,
                v ? v : "(nothing)");
        return -1;
    }
    *out = (int)x;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: lora_bgmv [--quick] [--batch B] [--rank R] [--d-in N] [--d-out N] [--layers L] [--reps R]\n"
               "                 [--out FILE] [--print-slug]\n"
               "  defaults: LLaMA-3-8B q (4096 -> 4096), rank 16, batch 64, 16 layers, 7 repeats,\n"
               "  D = 1, 2, 4, ... up to min(batch, 64); --quick: 2 layers, batch 16, 3 repeats\n");
}

int main(int argc, char **argv)
{
    host_info host;
    host_info_collect(&host);
    int quick = 0, batch = 0, rank = 16, d_in = 4096, d_out = 4096, layers = 0, reps = 0;
    const char *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (strcmp(f, "--quick") == 0)
            quick = 1;
        else if (strcmp(f, "--print-slug") == 0) {
            char slug[256];
            cpu_set_slug(&host, slug, sizeof slug);
            printf("%s\n", slug);
            return 0;
        } else if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(f, "--batch") == 0)
            rc = parse_int_flag(f, v, 1, 1024, &batch), i++;
        else if (strcmp(f, "--rank") == 0)
            rc = parse_int_flag(f, v, 8, 256, &rank), i++;
        else if (strcmp(f, "--d-in") == 0)
            rc = parse_int_flag(f, v, 8, 65536, &d_in), i++;
        else if (strcmp(f, "--d-out") == 0)
            rc = parse_int_flag(f, v, 1, 65536, &d_out), i++;
        else if (strcmp(f, "--layers") == 0)
            rc = parse_int_flag(f, v, 1, 128, &layers), i++;
        else if (strcmp(f, "--reps") == 0)
            rc = parse_int_flag(f, v, 1, 1000, &reps), i++;
        else if (strcmp(f, "--out") == 0) {
            if (!v) {
                fprintf(stderr, "lora_bgmv: --out needs a file name\n");
                return 2;
            }
            out_path = v, i++;
        } else {
            fprintf(stderr, "lora_bgmv: unknown flag '%s'\n", f);
            usage(stderr);
            return 2;
        }
        if (rc)
            return 2;
    }
    if (d_in % 8 || rank % 8) {
        fprintf(stderr, "lora_bgmv: --d-in and --rank must be multiples of 8 (eight-lane sums)\n");
        return 2;
    }
    if (!batch)
        batch = quick ? 16 : 64;
    if (!layers)
        layers = quick ? 2 : 16;
    if (!reps)
        reps = quick ? 3 : 7;
    int dmax = batch < MAX_ADAPTERS ? batch : MAX_ADAPTERS, nd = 0, ds[16];
    for (int d = 1; d <= dmax; d *= 2)
        ds[nd++] = d;

    size_t a_per_layer = (size_t)MAX_ADAPTERS * rank * d_in, b_per_layer = (size_t)MAX_ADAPTERS * d_out * rank;
    size_t flush_n = (size_t)(fmax(2 * host.llc_bytes, 64 * MiB) / sizeof(uint16_t));
    uint16_t *x = malloc((size_t)batch * d_in * sizeof *x), *a = malloc(layers * a_per_layer * sizeof *a),
             *b = malloc(layers * b_per_layer * sizeof *b), *fl = malloc(flush_n * sizeof *fl);
    float *y = malloc((size_t)batch * d_out * sizeof *y), *v = malloc((size_t)rank * sizeof *v);
    int *idx = malloc((size_t)batch * sizeof *idx);
    double *times = malloc((size_t)nd * reps * sizeof *times), *reads = malloc((size_t)reps * sizeof *reads);
    if (!x || !a || !b || !fl || !y || !v || !idx || !times || !reads) {
        fprintf(stderr, "lora_bgmv: cannot allocate %.0f MB of adapters\n",
                layers * (a_per_layer + b_per_layer) * 2.0 / MB);
        return 1;
    }
    /* Random, never-zero inputs by position (the kernel fills the same way). */
    fill_bf16(x, (size_t)batch * d_in, SEED_X);
    fill_bf16(a, layers * a_per_layer, SEED_A);
    fill_bf16(b, layers * b_per_layer, SEED_B);
    const float scale = 1.0f / rank;

    /* Validate every D on layer 0 against the library's reference. */
    int check = batch < 4 ? batch : 4;
    float *xf = malloc((size_t)check * d_in * sizeof *xf), *af = malloc(a_per_layer * sizeof *af),
          *bff = malloc(b_per_layer * sizeof *bff), *ref = malloc((size_t)check * d_out * sizeof *ref);
    if (!xf || !af || !bff || !ref) {
        fprintf(stderr, "lora_bgmv: out of memory for the reference\n");
        return 1;
    }
    for (size_t i = 0; i < (size_t)check * d_in; i++)
        xf[i] = bf(x[i]);
    for (size_t i = 0; i < a_per_layer; i++)
        af[i] = bf(a[i]);
    for (size_t i = 0; i < b_per_layer; i++)
        bff[i] = bf(b[i]);
    for (int k = 0; k < nd; k++) {
        for (int t = 0; t < batch; t++)
            idx[t] = t % ds[k];
        for (size_t i = 0; i < (size_t)batch * d_out; i++)
            y[i] = counter_uniform(SEED_Y, i, -1, 1);
        for (size_t i = 0; i < (size_t)check * d_out; i++)
            ref[i] = y[i];
        bgmv_layer(batch, d_in, d_out, rank, x, a, b, idx, scale, v, y);
        lora_bgmv_ref(check, d_in, d_out, rank, MAX_ADAPTERS, xf, af, bff, idx, scale, ref);
        long first;
        size_t bad = validate_close(y, ref, (size_t)check * d_out, 1e-4, 1e-4, &first, NULL);
        if (bad) {
            fprintf(stderr, "lora_bgmv: D %d: %zu of %d outputs differ from the reference (first: got %g, want %g)\n",
                    ds[k], bad, check * d_out, y[first], ref[first]);
            return 1;
        }
    }
    free(xf), free(af), free(bff), free(ref);

    /* Rounds interleave every D and the read ceiling, after one warm-up
     * round, so other work on the machine slows them alike. */
    double read_bytes = (double)layers * (a_per_layer + b_per_layer) * sizeof(uint16_t);
    volatile float sink = 0;
    for (int r = -1; r < reps; r++) {
        for (int k = 0; k < nd; k++) {
            for (int t = 0; t < batch; t++)
                idx[t] = t % ds[k];
            sink += flush(fl, flush_n, r + k);
            double t0 = now_s();
            for (int l = 0; l < layers; l++)
                bgmv_layer(batch, d_in, d_out, rank, x, a + l * a_per_layer, b + l * b_per_layer, idx, scale, v, y);
            double dt = now_s() - t0;
            if (r >= 0)
                times[k * reps + r] = dt;
        }
        sink += flush(fl, flush_n, r);
        double t0 = now_s();
        sink += read_pass(a, layers * a_per_layer) + read_pass(b, layers * b_per_layer);
        if (r >= 0)
            reads[r] = now_s() - t0;
    }
    /* The compute ceiling of this code: one adapter, one layer, in cache
     * (ten passes after a warm one; the best pass). */
    for (int t = 0; t < batch; t++)
        idx[t] = 0;
    double best_hot = INFINITY;
    for (int r = 0; r < 11; r++) {
        double t0 = now_s();
        bgmv_layer(batch, d_in, d_out, rank, x, a, b, idx, scale, v, y);
        double dt = now_s() - t0;
        if (r > 0 && dt < best_hot)
            best_hot = dt;
    }
    lora_op sh1, ex1;
    lora_bgmv_ops(batch, d_in, d_out, rank, 1, 2, 2, &sh1, &ex1);
    double compute_ceiling = (sh1.flop + ex1.flop) / best_hot;
    double read_ceiling = read_bytes / median_of(reads, reps);

    FILE *out = stdout;
    if (out_path && !(out = fopen(out_path, "w"))) {
        fprintf(stderr, "lora_bgmv: cannot write %s: %s\n", out_path, strerror(errno));
        return 1;
    }
    FILE *say = out == stdout ? stderr : stdout;
    provenance_write_cpu(out, "lora_bgmv", &host, NULL);
    char buf[200];
    provenance_line(out, "threads", "1");
    snprintf(buf, sizeof buf, "%d (median reported with min and max; rounds of every D interleaved after one warm-up "
             "round; caches flushed before each run)", reps);
    provenance_line(out, "repeats", buf);
    snprintf(buf, sizeof buf, "d_in %d, d_out %d, rank %d, batch %d, %d layers of %d adapters each; token t uses "
             "adapter t mod D", d_in, d_out, rank, batch, layers, MAX_ADAPTERS);
    provenance_line(out, "shape", buf);
    snprintf(buf, sizeof buf, "%.4e", read_ceiling);
    provenance_line(out, "read_ceiling_b_s", buf);
    provenance_line(out, "read_ceiling_source", "one-thread bf16 sum over every adapter of every layer, same run");
    snprintf(buf, sizeof buf, "%.4e", compute_ceiling);
    provenance_line(out, "compute_ceiling_flop_s", buf);
    provenance_line(out, "compute_ceiling_source", "this operator with one adapter of one layer in cache, best of 10");
    fprintf(out, "d_in\td_out\trank\tbatch\tlayers\tdistinct\ttime_s\tmin_s\tmax_s\tadapter_bytes\tbytes\tflop\t"
                 "gb_s\tpredicted_s\n");
    for (int k = 0; k < nd; k++) {
        double *tk = times + (size_t)k * reps, lo = tk[0], hi = tk[0];
        for (int r = 1; r < reps; r++)
            lo = fmin(lo, tk[r]), hi = fmax(hi, tk[r]);
        double med = median_of(tk, reps);
        lora_op sh, ex;
        lora_bgmv_ops(batch, d_in, d_out, rank, ds[k], 2, 2, &sh, &ex);
        double wbytes = layers * (sh.weight_bytes + ex.weight_bytes);
        double bytes = wbytes + layers * (sh.act_bytes + ex.act_bytes);
        double flop = layers * (sh.flop + ex.flop);
        /* the roofline of each op from this machine's two ceilings */
        double pred = layers * (roofline_time(sh.flop, sh.weight_bytes + sh.act_bytes, compute_ceiling, read_ceiling,
                                              NULL) +
                                roofline_time(ex.flop, ex.weight_bytes + ex.act_bytes, compute_ceiling, read_ceiling,
                                              NULL));
        fprintf(out, "%d\t%d\t%d\t%d\t%d\t%d\t%.6e\t%.6e\t%.6e\t%.0f\t%.0f\t%.0f\t%.3f\t%.6e\n", d_in, d_out, rank,
                batch, layers, ds[k], med, lo, hi, wbytes, bytes, flop, bytes / med / GB, pred);
        fprintf(say, "lora_bgmv D %-3d %9.3f ms (min %.3f, max %.3f)  predicted %8.3f ms  validated\n", ds[k],
                1e3 * med, 1e3 * lo, 1e3 * hi, 1e3 * pred);
    }
    fprintf(say, "lora_bgmv ceilings (one thread): read %.2f GB/s, compute %.2f GFLOP/s\n", read_ceiling / GB,
            compute_ceiling / 1e9);
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "lora_bgmv: error writing %s\n", out_path);
        return 1;
    }
    (void)sink;
    free(x), free(a), free(b), free(fl), free(y), free(v), free(idx), free(times), free(reads);
    return 0;
}
