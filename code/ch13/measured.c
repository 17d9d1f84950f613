/* Chapter 13 against measured silicon: NVIDIA's published aggregated
 * serving runs of DeepSeek-V3/R1 and Qwen3-235B-A22B
 * (code/specs/measured/serving_runs_moe.tsv, aiconfigurator-core 0.12.0),
 * each asked of napkin serve as `napkin validate` asks it
 * (calib/validate_moe.h: moe_run_question, the layout its columns state,
 * the calibration of the engine that served it), and answered on the
 * roofline and calibrated.  Writes 13-measured.tsv (one line a run) and
 * the values ch13_meas_*: runs, groups, and each group's median |error|;
 * and, through validate_moe as napkin validate prints them, the drawn
 * models' disaggregated runs: how many were asked as the pools they state,
 * how many refused, and DeepSeek-V3's TensorRT-LLM split on H200. */
#include "fit.h"
#include "measured.h"
#include "notebook.h"
#include "validate.h"
#include "validate_moe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS "code/specs/measured/serving_runs_moe.tsv"
#define BAND 0.12 /* issue 32's bar: a group's TPOT median |error| within 12 % */

static void die(const char *what, const char *err)
{
    fprintf(stderr, "measured: %s: %s\n", what, err);
    exit(1);
}

/* The groups the figure draws: (model, system, engine) of aggregated runs,
 * a tag for the value names, and the figure's series (0 DeepSeek, 1 Qwen). */
static const struct {
    const char *model, *system, *backend, *tag;
    int series;
} GROUPS[] = {
    {"deepseek-ai/DeepSeek-V3", "h200_sxm", "trtllm", "v3_h200_trt", 0},
    {"deepseek-ai/DeepSeek-V3", "h200_sxm", "sglang", "v3_h200_sgl", 0},
    {"deepseek-ai/DeepSeek-R1", "h200_sxm", "trtllm", "r1_h200_trt", 0},
    {"deepseek-ai/DeepSeek-R1", "h200_sxm", "sglang", "r1_h200_sgl", 0},
    {"Qwen/Qwen3-235B-A22B-FP8", "h100_sxm", "trtllm", "qw_h100_trt", 1},
    {"Qwen/Qwen3-235B-A22B-FP8", "h200_sxm", "sglang", "qw_h200_sgl", 1},
    {"Qwen/Qwen3-235B-A22B-FP8", "h200_sxm", "vllm", "qw_h200_vllm", 1},
};
#define NGROUPS ((int)(sizeof GROUPS / sizeof GROUPS[0]))

/* The group of run r served in mode (agg or disagg), or -1. */
static int group_of(const moe_run *r, const char *mode)
{
    for (int g = 0; g < NGROUPS; g++)
        if (!strcmp(r->model, GROUPS[g].model) && !strcmp(r->system, GROUPS[g].system) &&
            !strcmp(r->backend, GROUPS[g].backend) && !strcmp(r->mode, mode))
            return g;
    return -1;
}

/* Whether run r is of a model the figure draws, on any system and engine. */
static int drawn_model(const moe_run *r)
{
    for (int g = 0; g < NGROUPS; g++)
        if (!strcmp(r->model, GROUPS[g].model))
            return 1;
    return 0;
}

static double median_abs(double *e, int n)
{
    fit_summary s;
    summarize_errors(e, n, &s);
    return s.median_abs_err;
}

/* The median error, signed (the bias: + where napkin's answer is slower). */
static double median_signed(double *e, int n)
{
    fit_summary s;
    summarize_errors(e, n, &s);
    return s.median_err;
}

static void value_pct(const char *prefix, const char *tag, double share)
{
    char name[64];
    snprintf(name, sizeof name, "ch13_meas_%s%s_pct", prefix, tag);
    nb_value(name, "%.0f", 100 * share);
}

/* The drawn models' disaggregated runs as napkin validate asks them (each
 * split's pools through serve --disaggregate's path): answered, refused
 * (DeepSeek-R1's sweeps state no worker counts), and the one group of
 * twenty or more answered runs, DeepSeek-V3 under TensorRT-LLM on H200. */
static void disaggregated(const gpu_table *gpus, const model_table *models)
{
    char err[512];
    moe_validation v;
    if (validate_moe(RUNS, gpus, models, &v, err, sizeof err) != 0)
        die("validate_moe", err);
    int answered = 0, refused_r1 = 0;
    for (int i = 0; i < v.ngroups; i++) {
        const moe_group *gr = &v.groups[i];
        if (strcmp(gr->mode, "disagg"))
            continue;
        int drawn = 0;
        for (int g = 0; g < NGROUPS; g++)
            drawn |= !strcmp(gr->model, GROUPS[g].model);
        if (!drawn)
            continue;
        answered += gr->answered;
        if (!strcmp(gr->model, "deepseek-ai/DeepSeek-R1"))
            refused_r1 += gr->runs - gr->answered;
        if (!strcmp(gr->model, "deepseek-ai/DeepSeek-V3") && !strcmp(gr->system, "h200_sxm") &&
            !strcmp(gr->backend, "trtllm")) {
            nb_value("ch13_meas_dis_v3_trt_runs", "%d", gr->answered);
            nb_value("ch13_meas_dis_v3_trt_pct", "%.0f", 100 * gr->tpot_abs_err);
            nb_value("ch13_meas_dis_v3_trt_bias_pct", "%+.0f", 100 * gr->tpot_err);
        }
    }
    nb_value("ch13_meas_disagg_answered", "%d", answered);
    nb_value("ch13_meas_disagg_refused_r1", "%d", refused_r1);
    moe_validation_free(&v);
}

int main(void)
{
    char err[512];
    measured_table t;
    gpu_table gpus;
    model_table models;
    if (measured_table_load(RUNS, &t, err, sizeof err) || gpu_table_builtin(&gpus, err, sizeof err) ||
        model_table_builtin(&models, err, sizeof err))
        die("tables", err);
    moe_run *runs;
    int n = moe_runs_read(&t, RUNS, &runs, err, sizeof err);
    measured_table_free(&t);
    if (n < 0)
        die("runs", err);
    /* each answered run's calibrated and roofline errors, by group, then by series */
    double *cal = malloc((size_t)n * sizeof *cal), *roof = malloc((size_t)n * sizeof *roof);
    int *grp = malloc((size_t)n * sizeof *grp), disagg = 0;
    if (!cal || !roof || !grp)
        die("runs", "out of memory");
    engine_rates cache[8];
    int ncache = 0, answered = 0;
    FILE *f = nb_data_open("13-measured.tsv");
    fprintf(f, "# series\tmeasured_ms\tcalibrated_ms\troofline_ms\tgroup (series 0: DeepSeek-V3/R1, 1: "
               "Qwen3-235B-A22B; aggregated runs, " RUNS ")\n");
    for (int i = 0; i < n; i++) {
        const moe_run *r = &runs[i];
        int g = group_of(r, "agg");
        disagg += !strcmp(r->mode, "disagg") && drawn_model(r); /* split pools: below, through validate_moe */
        if (g < 0)
            continue;
        moe_question q;
        if (!moe_run_question(r, &gpus, &models, &q))
            continue; /* refused: not a point */
        const rate_model *rates = serving_engine_rates(cache, &ncache, 8, r->system, r->backend, q.gpu_key);
        serving_errors e;
        if (!rates || serving_price_run(&q.setup, &q.options, rates, q.options.overhead, r->ttft, r->tpot, &e) != 1)
            continue;
        cal[answered] = e.tpot, roof[answered] = e.tpot_roofline, grp[answered] = g;
        answered++;
        fprintf(f, "%d\t%.4f\t%.4f\t%.4f\t%s\n", GROUPS[g].series, r->tpot * 1e3, r->tpot * (1 + e.tpot) * 1e3,
                r->tpot * (1 + e.tpot_roofline) * 1e3, GROUPS[g].tag);
    }
    fclose(f);
    nb_value("ch13_meas_disagg_runs", "%d", disagg);

    /* the medians: each group's, each model family's, and every run's */
    double *x = malloc((size_t)(answered > 0 ? answered : 1) * sizeof *x);
    if (!x)
        die("runs", "out of memory");
    int inside = 0, groups = 0, groups_inside = 0;
    for (int i = 0; i < answered; i++)
        inside += fabs(cal[i]) <= BAND;
    for (int g = 0; g < NGROUPS; g++) {
        int k = 0;
        for (int i = 0; i < answered; i++)
            if (grp[i] == g)
                x[k++] = cal[i];
        char name[64];
        snprintf(name, sizeof name, "ch13_meas_runs_%s", GROUPS[g].tag);
        nb_value(name, "%d", k);
        if (k == 0)
            continue;
        groups++;
        groups_inside += median_abs(x, k) <= BAND;
        value_pct("", GROUPS[g].tag, median_abs(x, k));
        snprintf(name, sizeof name, "ch13_meas_%s_bias_pct", GROUPS[g].tag);
        nb_value(name, "%+.0f", 100 * median_signed(x, k));
    }
    static const char *const family[2] = {"ds", "qw"};
    for (int s = 0; s < 2; s++) {
        int k = 0, kr = 0;
        for (int i = 0; i < answered; i++)
            if (GROUPS[grp[i]].series == s)
                x[k++] = cal[i];
        char name[64];
        snprintf(name, sizeof name, "ch13_meas_runs_%s", family[s]);
        nb_value(name, "%d", k);
        value_pct("cal_", family[s], median_abs(x, k));
        for (int i = 0; i < answered; i++)
            if (GROUPS[grp[i]].series == s)
                x[kr++] = roof[i];
        value_pct("roof_", family[s], median_abs(x, kr));
    }
    nb_value("ch13_meas_runs", "%d", answered);
    nb_value("ch13_meas_groups", "%d", groups);
    nb_value("ch13_meas_inside", "%d", inside);
    nb_value("ch13_meas_groups_inside", "%d", groups_inside);
    nb_value("ch13_meas_band_pct", "%.0f", 100 * BAND);
    disaggregated(&gpus, &models);
    free(x), free(cal), free(roof), free(grp), free(runs);
    gpu_table_free(&gpus);
    model_table_free(&models);
    return 0;
}
