/* Chapter 5: a LLaMA-3-8B replica on one H100 (measured ceilings), serving
 * requests of 512 prompt and 256 output tokens in batches run to completion,
 * under Poisson load.  Sweeps the arrival rate up to each configuration's
 * capacity: one at a time (M/D/1), batches of up to 64, the same with a KV
 * cap of 32 and of 16 sequences, and with a 0.5 s window.  Writes
 * 05-latency-load.tsv (one block per configuration) and 05-capacity.tsv. */
#include "ceilings.h"
#include "memory.h"
#include "notebook.h"
#include "queue.h"
#include "batch_vs_sequential.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_BATCH 64
#define POINTS 39 /* loads 2.5%, 5%, ..., 97.5% of capacity */

typedef struct {
    const char *name;
    int max_batch, kv_cap;
    double window;
} config;

static const config configs[] = {
    {"one at a time", 1, 0, 0},
    {"batches of up to 64", MAX_BATCH, 0, 0},
    {"KV cap 32", MAX_BATCH, 32, 0},
    {"KV cap 16", MAX_BATCH, 16, 0},
    {"window 0.5 s", MAX_BATCH, 0, 0.5},
};
#define NCONFIG ((int)(sizeof configs / sizeof configs[0]))

static void die(const char *err)
{
    fprintf(stderr, "latency_load: %s\n", err);
    exit(1);
}

static queue_stats run(const config *c, const double *times, double lambda, long requests, rng_state *r)
{
    queue_config q = {lambda, c->max_batch, c->kv_cap, c->window, times, SERVICE_FIXED, requests, requests / 10};
    queue_stats s;
    char err[256];
    if (queue_simulate(&q, r, &s, err, sizeof err))
        die(err);
    return s;
}

static double capacity(const config *c, const double *times)
{
    queue_config q = {1, c->max_batch, c->kv_cap, c->window, times, SERVICE_FIXED, 1, 0};
    return queue_capacity(&q);
}

int main(void)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec sheet = gpu_builtin("h100");
    published_ceilings pub;
    if (published_ceilings_for(sheet.key, &pub) != 0)
        die("no published ceilings for the H100");
    gpu_spec g = gpu_at_published_ceilings(&sheet, &pub); /* read-only rate: a weight read is a read */
    precision prec = precision_uniform(DT_BF16);
    serve_workload w = {1, 512, 256, 1, prec};
    double times[MAX_BATCH];
    char err[256];
    if (serve_batch_times(&m, &g, &w, MAX_BATCH, times, err, sizeof err))
        die(err);
    rng_state r = rng_make(5005);

    nb_value("ch05_read_tbs", "%.2f", pub.read_bw / TB);
    nb_value("ch05_gemm_tflops", "%.0f", pub.gemm_bf16 / TERA);
    nb_value("ch05_s1", "%.2f", times[0]);
    nb_value("ch05_s16", "%.2f", times[15]);
    nb_value("ch05_s32", "%.2f", times[31]);
    nb_value("ch05_s64", "%.2f", times[MAX_BATCH - 1]);

    /* The contexts at which the KV budget holds only 32 or 16 sequences. */
    replica_memory rm;
    if (replica_memory_plan(&m, &sheet, prec, 1, memory_policy_default(), &rm, err, sizeof err))
        die(err);
    nb_value("ch05_kv_cap_768", "%d", max_batch_for_memory(&rm, 768));
    if (max_batch_for_memory(&rm, w.prompt + w.output) < MAX_BATCH) /* every timed batch must fit */
        die("a batch of 64 requests does not fit one GPU");
    nb_value("ch05_ctx_cap_32", "%.0f", floor(kv_token_capacity(&rm) / 32 / 1000) * 1000);
    nb_value("ch05_ctx_cap_16", "%.0f", floor(kv_token_capacity(&rm) / 16 / 1000) * 1000);

    FILE *cap = nb_data_open("05-capacity.tsv");
    FILE *f = nb_data_open("05-latency-load.tsv");
    fprintf(f, "# LLaMA-3-8B bf16, one H100 (%.2f TB/s, %.0f TFLOP/s), prompt 512, output 256, Poisson arrivals;"
               " batches run to completion; one block per configuration\n",
            pub.read_bw / TB, pub.gemm_bf16 / TERA);
    fprintf(cap, "# config\tcapacity (requests/s)\tname\n");
    for (int k = 0; k < NCONFIG; k++) {
        const config *c = &configs[k];
        double mu = capacity(c, times);
        fprintf(cap, "%d\t%.5f\t%s\n", k, mu, c->name);
        fprintf(f, "# %s: capacity %.4f requests/s\n", c->name, mu);
        fprintf(f, "lambda\tload\ttime\tp99\tin_system\tlittle\tbatch\tutilization\tmd1_time\n");
        for (int i = 1; i <= POINTS; i++) {
            double load = 0.025 * i, lambda = load * mu;
            queue_stats s = run(c, times, lambda, load > 0.9 ? 60000 : 20000, &r);
            queue_formula md1;
            double md1_time = c->max_batch == 1 && md1_formula(lambda, 1 / times[0], &md1) == 0 ? md1.time : NAN;
            fprintf(f, "%.5f\t%.3f\t%.4f\t%.4f\t%.4f\t%.4f\t%.3f\t%.4f\t%.4f\n", lambda, load, s.mean_time,
                    s.p99_time, s.in_system, lambda * s.mean_time, s.mean_batch, s.utilization, md1_time);
        }
        fprintf(f, "\n\n");
    }
    fclose(f);
    fclose(cap);

    double mu1 = capacity(&configs[0], times), mu64 = capacity(&configs[1], times);
    nb_value("ch05_cap1", "%.2f", mu1);
    nb_value("ch05_cap64", "%.1f", mu64);
    nb_value("ch05_cap32", "%.1f", capacity(&configs[2], times));
    nb_value("ch05_cap16", "%.1f", capacity(&configs[3], times));
    nb_value("ch05_cap_gain", "%.0f", mu64 / mu1);

    /* Little's law table for batches of up to 64, and M/D/1 for one at a time. */
    const int pct[] = {25, 50, 75, 90, 95};
    for (int i = 0; i < 5; i++) {
        double lambda = pct[i] / 100.0 * mu64;
        queue_stats s = run(&configs[1], times, lambda, 200000, &r);
        char v[64];
#define VAL(what, fmt, x)                                                                                    \
    do {                                                                                                       \
        snprintf(v, sizeof v, "ch05_t%d_%s", pct[i], what);                                                  \
        nb_value(v, fmt, x);                                                                                   \
    } while (0)
        VAL("lambda", "%.1f", lambda);
        VAL("time", "%.2f", s.mean_time);
        VAL("p99", "%.2f", s.p99_time);
        VAL("little", "%.1f", lambda * s.mean_time);
        VAL("l", "%.1f", s.in_system);
        VAL("l_say", "%.0f", s.in_system); /* the key numbers, as said aloud */
        VAL("lq", "%.1f", s.in_queue);
        VAL("batch", "%.1f", s.mean_batch);
        VAL("util", "%.1f%%", 100 * s.utilization);
        /* One at a time at the same share of its own capacity. */
        double l1 = pct[i] / 100.0 * mu1;
        queue_formula md1;
        if (md1_formula(l1, mu1, &md1))
            die("M/D/1 at a load below one failed");
        queue_stats s1 = run(&configs[0], times, l1, 1000000, &r);
        VAL("md1_time", "%.2f", md1.time);
        VAL("md1_sim", "%.2f", s1.mean_time);
#undef VAL
    }

    /* The window at light and heavy load (2.5% and 90% of capacity). */
    for (int i = 0; i < 2; i++) {
        double load = i ? 0.9 : 0.025;
        queue_stats a = run(&configs[1], times, load * mu64, 200000, &r);
        queue_stats b = run(&configs[4], times, load * mu64, 200000, &r);
        char v[64];
        snprintf(v, sizeof v, "ch05_w_%s_none", i ? "heavy" : "light");
        nb_value(v, "%.2f", a.mean_time);
        snprintf(v, sizeof v, "ch05_w_%s_window", i ? "heavy" : "light");
        nb_value(v, "%.2f", b.mean_time);
        snprintf(v, sizeof v, "ch05_w_%s_batch_none", i ? "heavy" : "light");
        nb_value(v, "%.1f", a.mean_batch);
        snprintf(v, sizeof v, "ch05_w_%s_batch_window", i ? "heavy" : "light");
        nb_value(v, "%.1f", b.mean_batch);
    }
    /* Same arrival rate, caps of 64 and 32 sequences, at a whole number of
     * requests/s between the capacities of the caps of 16 and of 32 (so the
     * cap of 16 cannot carry it at all). */
    const double lam = floor((capacity(&configs[2], times) + capacity(&configs[3], times)) / 2);
    nb_value("ch05_at_lambda", "%.0f", lam);
    nb_value("ch05_at_over_cap16", "%s", lam > capacity(&configs[3], times) ? "more" : "less");
    for (int k = 1; k <= 2; k++) {
        queue_stats s = run(&configs[k], times, lam, 200000, &r);
        char v[64];
        snprintf(v, sizeof v, "ch05_at_time_%d", configs[k].kv_cap ? configs[k].kv_cap : MAX_BATCH);
        nb_value(v, "%.2f", s.mean_time);
        snprintf(v, sizeof v, "ch05_at_util_%d", configs[k].kv_cap ? configs[k].kv_cap : MAX_BATCH);
        nb_value(v, "%.0f%%", 100 * s.utilization);
    }
    printf("capacity: one at a time %.3f/s, batches of 64 %.2f/s\n", mu1, mu64);
    return 0;
}
