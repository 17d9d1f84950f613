/* Chapter 1: LLaMA-3-70B on 4 x H100 (bf16), decode step against batch at
 * 1k, 4k and 32k context.  Writes 01-batch-sweep.tsv (one block per
 * context: step time, whole-step intensity, replica and per-user tokens/s,
 * whether the batch fits) and 01-ceilings.tsv (largest batch per context).
 * The first compute-bound batch is found by bisection (compute_bound_batch),
 * and every time or throughput it records is for a batch that fits
 * (memory_fit). */
#include "memory.h"
#include "notebook.h"
#include "roofline.h"
#include "specs.h"
#include "transformer.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>

enum { TP = 4, MAX_BATCH = 1024, SEARCH_LIMIT = 1 << 16 };

static fit_check fit(const model_spec *m, const gpu_spec *g, int batch, int context)
{
    resident_model rm = {m, precision_uniform(DT_BF16), TP};
    fit_check f;
    char err[256];
    if (memory_fit(g, memory_policy_default(), &rm, 1, 0, batch, context, &f, err, sizeof err) != 0) {
        fprintf(stderr, "batch_sweep: %s\n", err);
        exit(1);
    }
    return f;
}

static step_cost cost(const model_spec *m, const gpu_spec *g, int batch, int context)
{
    step_shape s = decode_shape(batch, context, TP, precision_uniform(DT_BF16));
    step_cost c;
    char err[512];
    if (decoder_step_cost(m, g, &s, &c, err, sizeof err) != 0) {
        fprintf(stderr, "batch_sweep: %s\n", err);
        exit(1);
    }
    return c;
}

int main(void)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    precision p = precision_uniform(DT_BF16);
    char err[512];

    const int ctxs[] = {1024, 4096, 32768};
    const char *ctx_names[] = {"1k", "4k", "32k"};
    FILE *f = nb_data_open("01-batch-sweep.tsv");
    FILE *ceil_f = nb_data_open("01-ceilings.tsv");
    fprintf(ceil_f, "context\tmax_batch\tstep_ms\tintensity\ttotal_tps\tuser_tps\n");
    for (size_t j = 0; j < sizeof ctxs / sizeof ctxs[0]; j++) {
        int ctx = ctxs[j], fit_max = fit(&m, &g, 1, ctx).max_batch;
        fprintf(f, "# LLaMA-3-70B, 4 x H100 SXM, bf16, context %d (largest batch that fits: %d)\n", ctx, fit_max);
        fprintf(f, "batch\tstep_ms\tintensity\ttotal_tps\tuser_tps\tfits\n");
        for (int b = 1; b <= MAX_BATCH; b++) {
            step_cost c = cost(&m, &g, b, ctx);
            fprintf(f, "%d\t%.5g\t%.5g\t%.5g\t%.5g\t%d\n", b, c.time * 1e3, c.intensity, b / c.time, 1 / c.time,
                    fit(&m, &g, b, ctx).fits);
        }
        fprintf(f, "\n\n"); /* next gnuplot index */
        if (fit_max > 0) {
            step_cost c = cost(&m, &g, fit_max, ctx);
            fprintf(ceil_f, "%d\t%d\t%.5g\t%.5g\t%.5g\t%.5g\n", ctx, fit_max, c.time * 1e3, c.intensity,
                    fit_max / c.time,
                    1 / c.time);
        }

        char name[96];
        /* What one more sequence adds to a step: its FLOPs over its bytes.
         * The whole step's intensity tends to this as the batch grows. */
        step_cost c1 = cost(&m, &g, 1, ctx), c2 = cost(&m, &g, 2, ctx);
        snprintf(name, sizeof name, "ch01_marginal_intensity_%s", ctx_names[j]);
        nb_value(name, "%.0f", arithmetic_intensity(c2.flop - c1.flop, c2.bytes - c1.bytes));
        /* The smallest batch whose step is compute-bound, if any, by
         * bisection; and whether it fits. */
        //> crossing
        step_shape s = decode_shape(1, ctx, TP, p);
        int cross;
        if (compute_bound_batch(&m, &g, &s, SEARCH_LIMIT, &cross, err, sizeof err) != 0) {
            fprintf(stderr, "batch_sweep: %s\n", err);
            return 1;
        }
        //< crossing
        snprintf(name, sizeof name, "ch01_compute_bound_batch_%s", ctx_names[j]);
        if (cross)
            nb_value(name, "%d", cross);
        else
            nb_value(name, "%s", "none");
        snprintf(name, sizeof name, "ch01_compute_bound_fits_%s", ctx_names[j]);
        nb_value(name, "%s", cross && fit(&m, &g, cross, ctx).fits ? "yes" : "no");
        const int shown[] = {1, 16, 64, 256};
        for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++) {
            if (!fit(&m, &g, shown[k], ctx).fits)
                continue; /* a time for a batch that cannot be held is no result */
            step_cost c = cost(&m, &g, shown[k], ctx);
            snprintf(name, sizeof name, "ch01_sweep_%s_b%d_ms", ctx_names[j], shown[k]);
            nb_value(name, "%.1f", c.time * 1e3);
            snprintf(name, sizeof name, "ch01_sweep_%s_b%d_user_tps", ctx_names[j], shown[k]);
            nb_value(name, "%.0f", 1 / c.time);
            snprintf(name, sizeof name, "ch01_sweep_%s_b%d_total_tps", ctx_names[j], shown[k]);
            nb_value(name, "%.0f", shown[k] / c.time);
        }
        if (fit_max > 0) {
            step_cost c = cost(&m, &g, fit_max, ctx);
            snprintf(name, sizeof name, "ch01_sweep_%s_fit_ms", ctx_names[j]);
            nb_value(name, "%.1f", c.time * 1e3);
            snprintf(name, sizeof name, "ch01_sweep_%s_fit_user_tps", ctx_names[j]);
            nb_value(name, "%.0f", 1 / c.time);
            snprintf(name, sizeof name, "ch01_sweep_%s_fit_total_tps", ctx_names[j]);
            nb_value(name, "%.0f", fit_max / c.time);
            snprintf(name, sizeof name, "ch01_sweep_%s_fit_intensity", ctx_names[j]);
            nb_value(name, "%.0f", c.intensity);
        }
    }
    fclose(f);
    fclose(ceil_f);
    return 0;
}
