/* Time to first token against the measured serving runs: see validate_ttft.h. */
#include "validate_ttft.h"

#include "closed_loop.h"
#include "fit.h"
#include "measured.h"
#include "rate_table.h"
#include "request.h"
#include "split.h"
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int group, engine, held_out, answered;
    double ttft, tpot;           /* measured */
    double a, b;                 /* predicted TTFT near the fit, a + b h (the closed loop's, linearised) */
    double tpot_cal;
    request_setup s;             /* the run as serve prices it, calibrated */
    gpu_spec roof, cal;          /* its GPU row at the roofline and at the engine's rates */
} run_row;

static const char *const ENGINES[] = {"trtllm", "vllm", "sglang"};

/* h minimising sum |a + b h - m| / m: the weighted median of (m - a) / b
 * with weights b / m; 0 when it would be negative (an overhead cannot be). */
static double fit_overhead(const run_row *r, int n, int engine, int *used)
{
    double (*hw)[2] = malloc((size_t)(n > 0 ? n : 1) * sizeof *hw);
    int k = 0;
    double total = 0;
    for (int i = 0; hw && i < n; i++)
        if (r[i].engine == engine && r[i].answered && !r[i].held_out && r[i].b > 0) {
            hw[k][0] = (r[i].ttft - r[i].a) / r[i].b;
            hw[k][1] = r[i].b / r[i].ttft;
            total += hw[k++][1];
        }
    *used = k;
    for (int i = 1; i < k; i++) /* insertion sort by h: a few hundred runs */
        for (int j = i; j > 0 && hw[j][0] < hw[j - 1][0]; j--) {
            double t0 = hw[j][0], t1 = hw[j][1];
            hw[j][0] = hw[j - 1][0], hw[j][1] = hw[j - 1][1];
            hw[j - 1][0] = t0, hw[j - 1][1] = t1;
        }
    double h = 0, acc = 0;
    for (int i = 0; i < k; i++) {
        acc += hw[i][1];
        if (acc >= total / 2) {
            h = hw[i][0];
            break;
        }
    }
    free(hw);
    return h > 0 ? h : 0;
}

static void medians(double *e, int n, double *abs_med, double *bias)
{
    fit_summary s;
    summarize_errors(e, n, &s);
    *abs_med = n > 0 ? s.median_abs_err : NAN;
    if (bias)
        *bias = n > 0 ? s.median_err : NAN;
}

/* The run's benchmark TTFT with overhead h, calibrated or at the roofline; NAN when not priced. */
static double ttft_at(run_row *r, double h, int roofline)
{
    request_options o = {.overhead = h, .prefill_first = engine_defaults_find(ENGINES[r->engine])->prefill_first,
                         .mixed_steps = !engine_defaults_find(ENGINES[r->engine])->prefill_first};
    request_estimate e;
    char err[256];
    r->s.gpu = roofline ? &r->roof : &r->cal;
    return request_estimate_with(&r->s, &o, &e, err, sizeof err) == 0 ? e.ttft_closed : NAN;
}

/* Linearise the TTFT in h around h0 (the steady state's rate depends on h,
 * so the TTFT is affine in h only near a point). */
static void linearise(run_row *r, double h0)
{
    const double dh = 10e-3;
    double t0 = ttft_at(r, h0, 0), t1 = ttft_at(r, h0 + dh, 0);
    r->b = (t1 - t0) / dh;
    r->a = t0 - r->b * h0;
}

/* Set up one run at the roofline and calibrated; 0, or 1 with why it is not answered. */
static int price_run(const model_spec *m, const gpu_spec *row, const rate_model *rates, const char *prec_name,
                     int tp, int isl, int osl, int c, run_row *out, const char **why)
{
    precision prec = precision_uniform(DT_BF16); /* "fp8": fp8 weights, GEMMs and KV (as validate.c) */
    if (strcmp(prec_name, "fp8") == 0)
        prec.weights = prec.compute = prec.kv = DT_FP8;
    out->roof = *row;
    out->cal = *row;
    out->roof.rates = NULL;
    out->cal.rates = rates;
    request_setup s = {m, &out->roof, prec, tp, isl, osl, c, 0, 0, memory_policy_default(), 0, 1};
    request_options o = {.prefill_first = engine_defaults_find(ENGINES[out->engine])->prefill_first,
                         .mixed_steps = !engine_defaults_find(ENGINES[out->engine])->prefill_first};
    request_estimate er, ec;
    char err[256];
    if (request_estimate_with(&s, &o, &er, err, sizeof err) != 0) {
        *why = "not priced";
        return 1;
    }
    if (!er.fit.fits) {
        *why = "does not fit memory";
        return 1;
    }
    s.gpu = &out->cal;
    if (request_estimate_with(&s, &o, &ec, err, sizeof err) != 0) {
        *why = "not priced";
        return 1;
    }
    out->s = s;
    out->tpot_cal = ec.tpot;
    return 0;
}

static void note_why(ttft_group *g, const char *why)
{
    if (!strstr(g->unanswered, why))
        snprintf(g->unanswered + strlen(g->unanswered), sizeof g->unanswered - strlen(g->unanswered), "%s%s",
                 g->unanswered[0] ? "; " : "", why);
}

int validate_ttft(const char *runs_path, const gpu_table *gpus, const model_table *models, ttft_validation *out,
                  char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    measured_table t;
    if (measured_table_load(runs_path, &t, err, errlen) != 0)
        return -1;
    static const char *const names[] = {"id", "model", "system", "backend", "precision", "isl", "osl",
                                        "concurrency", "tp", "pp", "ttft_s", "tpot_s"};
    int c[12];
    for (int i = 0; i < 12; i++)
        if ((c[i] = measured_col(&t, names[i])) < 0) {
            snprintf(err, errlen, "%s: no column '%s'", runs_path, names[i]);
            measured_table_free(&t);
            return -1;
        }
    run_row *r = calloc((size_t)(t.nrows > 0 ? t.nrows : 1), sizeof *r);
    double *e = malloc((size_t)(t.nrows > 0 ? t.nrows : 1) * 4 * sizeof *e);
    if (!r || !e) {
        free(r), free(e), measured_table_free(&t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* the rates of each (system, engine), loaded once */
    rate_model rates[2][3];
    int have[2][3] = {{0}};
    for (int i = 0; i < t.nrows; i++) {
        const char *model = measured_cell(&t, i, c[1]), *sys = measured_cell(&t, i, c[2]);
        const char *be = measured_cell(&t, i, c[3]);
        int engine = -1, si = strcmp(sys, "h200_sxm") == 0;
        for (int k = 0; k < 3; k++)
            if (strcmp(be, ENGINES[k]) == 0)
                engine = k;
        int g = -1;
        for (int k = 0; k < out->ng; k++)
            if (strcmp(out->g[k].model, model) == 0 && strcmp(out->g[k].system, sys) == 0 &&
                strcmp(out->g[k].backend, be) == 0)
                g = k;
        if (g < 0 && out->ng < TTFT_GROUPS_MAX) {
            g = out->ng++;
            snprintf(out->g[g].model, sizeof out->g[g].model, "%s", model);
            snprintf(out->g[g].system, sizeof out->g[g].system, "%s", sys);
            snprintf(out->g[g].backend, sizeof out->g[g].backend, "%s", be);
        }
        r[i].group = g;
        r[i].engine = engine;
        r[i].held_out = run_is_held_out(measured_cell(&t, i, c[0]));
        r[i].ttft = measured_num(&t, i, c[10]);
        r[i].tpot = measured_num(&t, i, c[11]);
        const char *why = NULL;
        const char *key = serving_model_key(model);
        const model_spec *m = key ? model_find(models, key) : NULL;
        const gpu_spec *row = gpu_find(gpus, si ? "h200" : "h100");
        if (g >= 0 && m)
            out->g[g].dense = m->experts <= 1;
        if (!m)
            why = "no model row";
        else if (measured_num(&t, i, c[9]) != 1)
            why = "pipeline runs";
        else if (engine < 0 || !row)
            why = "no calibration";
        if (!why && !have[si][engine]) {
            char name[64], e2[256];
            snprintf(name, sizeof name, "published:%s/%s", sys, be);
            if (rate_model_builtin(name, &rates[si][engine], e2, sizeof e2) == 0)
                have[si][engine] = 1;
            else
                why = "no calibration";
        }
        if (!why)
            price_run(m, row, &rates[si][engine], measured_cell(&t, i, c[4]), (int)measured_num(&t, i, c[8]),
                      (int)measured_num(&t, i, c[5]), (int)measured_num(&t, i, c[6]), (int)measured_num(&t, i, c[7]),
                      &r[i], &why);
        r[i].answered = !why;
        if (g >= 0 && r[i].held_out) {
            out->g[g].runs++;
            if (why)
                note_why(&out->g[g], why);
        }
    }
    /* the one fitted parameter: each engine's overhead, on the fitting half,
     * linearised at 0 and then again at the first fit */
    double h[3];
    for (int k = 0; k < 3; k++) {
        int used;
        double hk = 0;
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < t.nrows; i++)
                if (r[i].engine == k && r[i].answered && !r[i].held_out)
                    linearise(&r[i], hk);
            hk = fit_overhead(r, t.nrows, k, &used);
        }
        h[k] = hk;
        snprintf(out->o[k].engine, sizeof out->o[k].engine, "%s", ENGINES[k]);
        out->o[k].overhead = h[k];
        out->o[k].fitted_on = used;
    }
    out->no = 3;
    /* every figure on the held-out half */
    const int n = t.nrows;
    double *ft = e, *fp = e + n, *fr = e + 2 * n, *f0 = e + 3 * n;
    for (int g = -1; g < out->ng; g++) { /* g = -1: all groups */
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (!r[i].answered || !r[i].held_out || (g >= 0 && r[i].group != g))
                continue;
            double hh = h[r[i].engine];
            ft[k] = ttft_at(&r[i], hh, 0) / r[i].ttft - 1;
            fp[k] = r[i].tpot_cal / r[i].tpot - 1;
            fr[k] = ttft_at(&r[i], hh, 1) / r[i].ttft - 1;
            f0[k] = ttft_at(&r[i], 0, 0) / r[i].ttft - 1;
            k++;
        }
        if (g < 0) {
            out->answered = k;
            medians(ft, k, &out->ttft_abs, &out->ttft_bias);
            medians(fp, k, &out->tpot_abs, NULL);
            medians(fr, k, &out->ttft_roof_abs, NULL);
            medians(f0, k, &out->ttft_abs_no_overhead, NULL);
        } else {
            ttft_group *v = &out->g[g];
            v->answered = k;
            medians(ft, k, &v->ttft_abs, &v->ttft_bias);
            medians(fp, k, &v->tpot_abs, &v->tpot_bias);
            medians(fr, k, &v->ttft_roof_abs, &v->ttft_roof_bias);
        }
    }
    free(r), free(e);
    measured_table_free(&t);
    return 0;
}
