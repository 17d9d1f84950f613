#include "band.h"

#include "measured.h"
#include "split.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char napkin_serving_runs_tsv[];

double band_quantile(const double *sorted, int n, double q)
{
    if (n <= 0)
        return NAN;
    double pos = q * (n - 1);
    int i = (int)floor(pos);
    if (i >= n - 1)
        return sorted[n - 1];
    return sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

error_band band_of_misses(const double *miss, int n)
{
    error_band b = {0, NAN, NAN, 0, ""};
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) {
        snprintf(b.why, sizeof b.why, "out of memory");
        return b;
    }
    for (int i = 0; i < n; i++)
        if (isfinite(miss[i]))
            v[b.n++] = miss[i];
    if (b.n < BAND_MIN_RUNS) {
        snprintf(b.why, sizeof b.why, "%s (%d held-out run%s like it, fewer than %d)",
                 b.n ? "too few measured runs like this one" : "no measured run like this one", b.n,
                 b.n == 1 ? "" : "s", BAND_MIN_RUNS);
        free(v);
        return b;
    }
    qsort(v, (size_t)b.n, sizeof *v, cmp_double);
    b.have = 1;
    b.lo = band_quantile(v, b.n, BAND_LO_QUANTILE);
    b.hi = band_quantile(v, b.n, BAND_HI_QUANTILE);
    free(v);
    return b;
}

int band_regime_of(const char *engine, const model_spec *m, int concurrency, int prompt, int output,
                   band_regime *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    if (!engine) {
        snprintf(why, whylen, "no measured run like this one (the calibration names no serving engine)");
        return 0;
    }
    if (m->experts > 1 || m->kv_lora_rank > 0) {
        snprintf(why, whylen, "no measured run like this one (the serving runs are of dense models with "
                              "grouped-query attention)");
        return 0;
    }
    snprintf(out->engine, sizeof out->engine, "%s", engine);
    double params = model_params(m).total;
    out->model_class = params < 20e9 ? BAND_MODEL_SMALL : params <= 50e9 ? BAND_MODEL_MID : BAND_MODEL_LARGE;
    out->concurrency_range = concurrency <= 16 ? BAND_CONC_LOW : concurrency <= 64 ? BAND_CONC_MID : BAND_CONC_HIGH;
    out->op_mix = output > 0 && prompt >= BAND_PROMPT_HEAVY * output ? BAND_MIX_PROMPT : BAND_MIX_OUTPUT;
    return 1;
}

void band_regime_name(const band_regime *q, char *buf, size_t n)
{
    static const char *const cls[] = {"small dense (< 20 B)", "mid dense (20-50 B)", "large dense (> 50 B)"};
    static const char *const conc[] = {"concurrency 1-16", "concurrency 17-64", "concurrency 65+"};
    static const char *const mix[] = {"prompt-heavy", "output-heavy"};
    snprintf(buf, n, "%s, %s, %s, %s", q->engine, cls[q->model_class], conc[q->concurrency_range],
             mix[q->op_mix]);
}

int band_engine_of_calibration(const char *calibration, char *buf, size_t n)
{
    static const char prefix[] = "published:";
    if (!calibration || strncmp(calibration, prefix, sizeof prefix - 1) != 0)
        return 0;
    const char *slash = strrchr(calibration, '/');
    if (!slash || !slash[1])
        return 0;
    snprintf(buf, n, "%s", slash + 1);
    return 1;
}

int band_runs_parse(const char *text, const char *name, const gpu_table *gpus, const model_table *models,
                    band_runs *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    measured_table t;
    if (measured_table_parse(text, name, &t, err, errlen) != 0)
        return -1;
    serving_residual *all;
    int n = serving_residuals(&t, name, gpus, models, &all, err, errlen);
    measured_table_free(&t);
    if (n < 0)
        return -1;
    out->runs = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->runs);
    out->regime = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->regime);
    if (!out->runs || !out->regime) {
        free(all);
        band_runs_free(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char why[192];
    for (int i = 0; i < n; i++) {
        const serving_residual *x = &all[i];
        const model_spec *m = model_find(models, x->model_key);
        if (!x->priced || !run_is_held_out(x->id) || !m ||
            !band_regime_of(x->backend, m, x->concurrency, x->prompt, x->output, &out->regime[out->n], why,
                            sizeof why))
            continue;
        out->runs[out->n++] = *x;
    }
    free(all);
    return 0;
}

int band_runs_builtin(const gpu_table *gpus, const model_table *models, band_runs *out, char *err, size_t errlen)
{
    return band_runs_parse(napkin_serving_runs_tsv, "code/specs/measured/serving_runs.tsv", gpus, models, out,
                           err, errlen);
}

void band_runs_free(band_runs *b)
{
    free(b->runs);
    free(b->regime);
    memset(b, 0, sizeof *b);
}

static int same_regime(const band_regime *a, const band_regime *b)
{
    return strcmp(a->engine, b->engine) == 0 && a->model_class == b->model_class &&
           a->concurrency_range == b->concurrency_range && a->op_mix == b->op_mix;
}

error_band band_for(const band_runs *b, const band_regime *q, band_quantity what, int inverse)
{
    double *miss = malloc((size_t)(b->n > 0 ? b->n : 1) * sizeof *miss);
    int k = 0;
    for (int i = 0; miss && i < b->n; i++) {
        if (!same_regime(&b->regime[i], q))
            continue;
        const serving_residual *x = &b->runs[i];
        double r = what == BAND_TPOT           ? x->tpot_err
                   : what == BAND_TTFT_CLOSED  ? x->ttft_closed_err
                   : what == BAND_TTFT_BENCH   ? x->ttft_bench_err
                   : what == BAND_E2E_BENCH    ? x->e2e_bench_err
                   : what == BAND_TPOT_PLAIN   ? x->tpot_plain_err
                   : what == BAND_TTFT_PLAIN   ? x->ttft_plain_err
                   : what == BAND_E2E_PLAIN    ? x->e2e_plain_err
                                               : x->e2e_err;
        /* r = answered / measured - 1: the quantity's own miss is measured / answered - 1 = 1 / (1 + r) - 1,
         * and for its inverse (a rate) answered / measured - 1 = r itself */
        miss[k++] = inverse ? r : 1 / (1 + r) - 1;
    }
    error_band e = band_of_misses(miss, k);
    free(miss);
    return e;
}
