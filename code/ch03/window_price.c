/* Chapter 3: the price of a batch window.  Poisson arrivals at 100 requests/s,
 * batches of at most 32: the batch size a window buys, the wait it costs, by
 * closed form and by simulation, and the decode throughput that batch size
 * gives LLaMA-3-8B on one H100 (step model, context 768).  Writes
 * 03-window.tsv. */
#include "ceilings.h"
#include "memory.h"
#include "notebook.h"
#include "batch_vs_sequential.h"
#include "window.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define LAMBDA 100.0
#define MAX_BATCH 32
#define CONTEXT 768

static double decode_tokens_per_s(const model_spec *m, const gpu_spec *g, int batch)
{
    step_cost c;
    char err[256];
    step_shape s = decode_shape(batch, CONTEXT, 1, precision_uniform(DT_BF16));
    resident_model rm = {m, s.prec, 1};
    fit_check f;
    if (memory_fit(g, memory_policy_default(), &rm, 1, 0, batch, CONTEXT, &f, err, sizeof err) || !f.fits) {
        fprintf(stderr, "window_price: batch %d of %d tokens does not fit one GPU\n", batch, CONTEXT);
        exit(1);
    }
    if (decoder_step_cost(m, g, &s, &c, err, sizeof err)) {
        fprintf(stderr, "window_price: %s\n", err);
        exit(1);
    }
    return batch / c.time;
}

static void stats_or_die(int rc, const char *err)
{
    if (rc) {
        fprintf(stderr, "window_price: %s\n", err);
        exit(1);
    }
}

int main(void)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec sheet = gpu_builtin("h100");
    published_ceilings pub;
    if (published_ceilings_for(sheet.key, &pub) != 0) {
        fprintf(stderr, "window_price: no published ceilings for %s\n", sheet.key);
        return 1;
    }
    gpu_spec g = gpu_at_published_ceilings(&sheet, &pub); /* read-only rate: a weight read is a read */
    rng_state r = rng_make(3003);
    char err[256];

    FILE *f = nb_data_open("03-window.tsv");
    fprintf(f, "# Poisson arrivals %.0f/s, max batch %d; decode throughput of LLaMA-3-8B bf16 on one H100 "
               "(%.2f TB/s, %.0f TFLOP/s) at context %d\n",
            LAMBDA, MAX_BATCH, pub.read_bw / TB, pub.gemm_bf16 / TERA, CONTEXT);
    fprintf(f, "window_ms\tbatch\tbatch_sim\twait_ms\twait_sim_ms\tp99_sim_ms\tfull_share\ttokens_per_s\n");
    for (int wms = 0; wms <= 400; wms += 10) {
        window_params p = {LAMBDA, wms / 1e3, MAX_BATCH};
        window_stats e, s;
        stats_or_die(window_expected(&p, &e, err, sizeof err), err);
        stats_or_die(window_simulate(&p, 20000, &r, &s, err, sizeof err), err);
        int n = (int)lround(e.mean_batch);
        fprintf(f, "%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.1f\n", wms, e.mean_batch, s.mean_batch,
                1e3 * e.mean_wait, 1e3 * s.mean_wait, 1e3 * s.p99_wait, e.full_share,
                decode_tokens_per_s(&m, &g, n));
        if (wms == 20 || wms == 50 || wms == 100 || wms == 300) {
            char v[64];
            snprintf(v, sizeof v, "ch03_w%d_batch", wms);
            nb_value(v, "%.1f", e.mean_batch);
            snprintf(v, sizeof v, "ch03_w%d_batch_say", wms); /* the key numbers, as said aloud */
            nb_value(v, "%.0f", e.mean_batch);
            snprintf(v, sizeof v, "ch03_w%d_batch_sim", wms);
            nb_value(v, "%.1f", s.mean_batch);
            snprintf(v, sizeof v, "ch03_w%d_wait_ms", wms);
            nb_value(v, "%.1f", 1e3 * e.mean_wait);
            snprintf(v, sizeof v, "ch03_w%d_wait_sim_ms", wms);
            nb_value(v, "%.1f", 1e3 * s.mean_wait);
            snprintf(v, sizeof v, "ch03_w%d_full", wms);
            nb_value(v, "%.0f%%", 100 * e.full_share);
            snprintf(v, sizeof v, "ch03_w%d_tok_s", wms);
            nb_value(v, "%.0f", decode_tokens_per_s(&m, &g, n));
        }
    }
    fclose(f);
    nb_value("ch03_tok_s_batch1", "%.0f", decode_tokens_per_s(&m, &g, 1));
    nb_value("ch03_tok_s_batch32", "%.0f", decode_tokens_per_s(&m, &g, MAX_BATCH));
    /* The window that fills a batch of 32 half the time: smallest W with
     * full_share >= 0.5, by bisection on the closed form. */
    double lo = 0, hi = 10;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) / 2;
        window_params p = {LAMBDA, mid, MAX_BATCH};
        window_stats e;
        stats_or_die(window_expected(&p, &e, err, sizeof err), err);
        if (e.full_share >= 0.5)
            hi = mid;
        else
            lo = mid;
    }
    nb_value("ch03_half_full_window_ms", "%.0f", 1e3 * hi);
    return 0;
}
