/* How well the calibrated model predicts measurements it was not fitted to.
 *
 * Op level: the rates fitted to one published set (a system and a backend)
 * predict the kernels of another, class by class; and, within one set, the
 * rates fitted to the odd rows predict the even ones.
 * End to end: request.h's serving model, at the calibration of the engine
 * that served the runs (its kernel tables: never the serving runs), predicts the
 * TPOT and closed-loop TTFT of the measured serving runs in
 * code/specs/measured/serving_runs.tsv. */
#ifndef NAPKIN_VALIDATE_H
#define NAPKIN_VALIDATE_H

#include "fit.h"
#include "measured.h"
#include "rate_table.h"
#include "request.h"
#include "specs.h"

#include <stddef.h>

#define VALIDATE_NAME_MAX 48

/* One held-out comparison of one op class. */
typedef struct {
    char fitted_on[VALIDATE_NAME_MAX];    /* "h100_sxm/trtllm" (odd rows: "h100_sxm/trtllm odd") */
    char evaluated_on[VALIDATE_NAME_MAX]; /* "h100_sxm/vllm" */
    char op_class[24];                    /* rate_class_name, or "allreduce_tp8" */
    fit_summary s;
    int bounded;                          /* 1: an engine's rates on its own tables of the other system */
} op_validation;

/* The op-level bound, for the rows it is stated for (bounded): median
 * |error| <= 10 % and the 99th percentile of |error| <= 35 %. */
#define VALIDATE_OP_MEDIAN 0.10
#define VALIDATE_OP_P99 0.35
int op_validation_meets(const op_validation *v);

/* Every comparison over the sets under root (code/specs/measured): each
 * engine's rates fitted on one system against the same engine's tables of
 * the other system (H100 <-> H200; bounded), and, within each system's
 * TensorRT-LLM set, rates fitted on the odd rows against the even rows.  No
 * engine's rates are judged on another engine's tables: the engines' own
 * measurements of one kernel disagree by more than a bound could allow
 * (validate_engine_agreement).  gpus names the GPU rows (h100, h200).
 * Returns how many rows it wrote (at most max), or -1 with a message. */
int validate_ops(const char *root, const gpu_table *gpus, op_validation *rows, int max, char *err, size_t errlen);

/* The all-to-all class held out: every system's every engine's
 * alltoall.tsv (published_alltoall.h), each (implementation, phase, dtype,
 * EP degree) group's line fitted on its even rows and judged on its odd
 * ones, the errors pooled per system and engine.  Rows as validate_ops's
 * (fitted_on "h200_sxm/sglang even rows", class "alltoall"), bounded by
 * VALIDATE_A2A_MEDIAN.  Returns the number of rows, or -1 with a message. */
#define VALIDATE_A2A_MEDIAN 0.15
int validate_alltoall(const char *root, op_validation *rows, int max, char *err, size_t errlen);

/* How far two engines' own measurements of the same kernels disagree, class
 * by class and system by system: |measured by B / measured by A - 1| over
 * the shapes both tables hold.  No model fitted to A can predict B closer
 * than this, whatever its form.  Rows as validate_ops's (fitted_on names
 * engine A).  Returns the number of rows, or -1 with a message. */
int validate_engine_agreement(const char *root, const gpu_table *gpus, op_validation *rows, int max, char *err,
                              size_t errlen);

/* A reader's own measured set (make measure) fitted on half its GEMM shapes
 * and judged on the other half, both ways round: *a (fit the odd rows,
 * predict the even) and *b (the reverse).  Returns 0, or -1 with a message
 * (no sweep, or a set whose device cannot be made: a GPU set needs its GPU
 * row, given as base; a CPU set takes base NULL). */
int validate_measured_set(const char *dir, const gpu_spec *base, fit_summary *a, fit_summary *b, char *err,
                          size_t errlen);

/* One group of measured serving runs (same model, system, backend,
 * precision and TP degree) against the model. */
typedef struct {
    char model[64];          /* as measured ("meta-llama/Llama-3.1-8B-Instruct") */
    char model_key[32];      /* the model table row used */
    char system[16], backend[16], precision[16];
    int tp;
    char calibration[80];    /* the rates the calibrated answers used */
    int runs;                /* measured runs in the group */
    int priced;              /* of those, the ones the model could price (fits memory) */
    double tpot_err_roofline;   /* median of predicted / measured - 1 */
    double tpot_err_calibrated; /* the same, calibrated */
    double tpot_abs_err_calibrated; /* median |error| */
    double ttft_err_calibrated;     /* closed-loop TTFT, median signed */
    double ttft_abs_err_calibrated;
} serving_validation;

/* The model table row a measured model name stands for, or NULL. */
const char *serving_model_key(const char *name);

/* One measured serving run against the model, at the calibration of the
 * engine that served it (its kernel tables, never the serving runs).
 * Errors are predicted / measured - 1; NAN where the run is not priced.
 * e2e is a request's latency: measured, TTFT + (output - 1) TPOT. */
typedef struct {
    char id[160];                /* the run's id (split.h halves the runs by it) */
    char model[64], model_key[32];
    char system[16], backend[16], precision[16];
    char calibration[80];        /* the rates it was priced with; "" where there are none */
    int tp, prompt, output, concurrency;
    int priced;                  /* 1: priced (fits memory with the roofline's row) */
    double tpot_err_roofline;
    double tpot_err, ttft_closed_err, e2e_err; /* calibrated */
    double tpot_plain_err, ttft_plain_err, e2e_plain_err; /* calibrated as `serve` answers without --engine:
                                                             the plain closed loop, no engine schedule */
    double ttft_bench_err, e2e_bench_err;       /* calibrated as `serve --engine <backend>` answers: with
                                                   the engine's fitted per-request overhead */
} serving_residual;

/* The calibration of an engine on a system (published:<system>/<backend>,
 * else the GPU's default rates), parsed once per (system, backend) for a
 * pass over the runs: cache holds max entries, *n of them used.  NULL when
 * there is none. */
typedef struct {
    char system[16], backend[16];
    int have;
    rate_model rates;
} engine_rates;
const rate_model *serving_engine_rates(engine_rates *cache, int *n, int max, const char *system, const char *backend,
                                       const char *gpu_key);

/* One measured run's errors (predicted / measured - 1): TPOT on the
 * roofline, and TPOT, closed-loop TTFT and e2e calibrated. */
typedef struct {
    double tpot_roofline, tpot, ttft_closed, e2e;
    double ttft_bench, e2e_bench; /* with bench_overhead a request (serve --engine's answer) */
    double tpot_plain, ttft_plain, e2e_plain; /* without the engine's schedule (serve without --engine) */
} serving_errors;

/* Price the question s (s->gpu: the GPU table's row) as napkin serve does,
 * on the roofline and with rates, against the measured ttft and tpot
 * (seconds).  Returns 1 priced, 0 when not one sequence fits memory (the
 * roofline's row), -1 when the setup is refused. */
int serving_price_run(const request_setup *s, const request_options *o, const rate_model *rates,
                      double bench_overhead, double ttft, double tpot, serving_errors *out);

/* Every run of t (serving_runs.tsv's columns; name for messages) whose
 * model the table has a row for and that runs without a pipeline, with its
 * residuals, into *out (malloc'd, the caller frees; NULL for none).
 * Returns the number of runs, or -1 with a message. */
int serving_residuals(const measured_table *t, const char *name, const gpu_table *gpus, const model_table *models,
                      serving_residual **out, char *err, size_t errlen);

/* Group and compare the serving runs of runs_path.  Runs of a model the
 * table has no row for are skipped (not counted).  Returns the number of
 * groups (at most max), or -1 with a message. */
int validate_serving(const char *runs_path, const gpu_table *gpus, const model_table *models,
                     serving_validation *rows, int max, char *err, size_t errlen);

/* validate_serving, and every answered run of the groups together: how many
 * runs there are (of a model the table has), how many napkin serve answers,
 * and the calibrated TPOT's |error| over all of them (tpot.median_abs_err:
 * the target is <= 10 %).  Returns the number of groups, or -1. */
typedef struct {
    int runs, answered;
    fit_summary tpot;
} serving_overall;
int validate_serving_overall(const char *runs_path, const gpu_table *gpus, const model_table *models,
                             serving_validation *rows, int max, serving_overall *out, char *err, size_t errlen);

#endif
