/* napkin validate: the calibrated model against published measurements it
 * was not fitted to, op class by op class and serving run by serving run. */
#include "validate_moe_report.h"
#include "validate_ttft_report.h"
#include "cli_lookup.h"
#include "commands.h"
#include "band.h"
#include "validate.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const cli_doc DOC = {
    "validate",
    "the calibrated model against published measurements it was not fitted to",
    "[--measured DIR] [--sets DIR] [--format table|tsv|json]",
    "DIR (default code/specs/measured) holds the published sets.  Op level: each\n"
    "engine's rates fitted to one system's tables predict the same engine's tables\n"
    "of the other system (H100 <-> H200); and rates fitted to the odd rows of a\n"
    "TensorRT-LLM set predict its even rows.  No engine's rates are judged on\n"
    "another engine's tables: the engines' own measurements of one kernel\n"
    "disagree by more than that (the engines table).  Errors are predicted /\n"
    "measured - 1.\n"
    "End to end: napkin serve's model, calibrated on the kernel tables of the\n"
    "engine that served (never fitted to a serving run), against the measured\n"
    "TPOT and closed-loop TTFT of\n"
    "DIR/serving_runs.tsv, grouped by model, system, engine, precision and TP;\n"
    "and every MoE and disaggregated run of DIR/serving_runs_moe.tsv asked as one\n"
    "serve question, by model, system, engine and mode, with each run it cannot\n"
    "ask counted by reason (target: TPOT median |error| <= 12 % in a group of at\n"
    "least 20 runs, every run answered).\n"
    "The targets: op level, across systems, median |error| <= 10 % and the 99th\n"
    "percentile of |error| (the worst of the trimmed 99 %) <= 35 % for every\n"
    "class; TPOT median |error| <= 10 % over every answered run.  Each line says\n"
    "whether it meets them.\n"
    "The reader's own sets under --sets (default figures/measured: make measure's\n"
    "CPU twins committed there) are fitted on half their GEMM shapes and judged on\n"
    "the other half, both ways round (target: median |error| <= 25 %).",
};

/* Op level: rates fitted on one set, errors on another.  Returns how many comparisons meet both bounds. */
static int report_ops(report *r, const op_validation *ops, int n)
{
    report_table *t = report_table_add(r, "ops", "Op level: rates fitted on one set, errors on another");
    report_col(t, "fitted_on", "fitted on", U_TEXT, 0);
    report_col(t, "evaluated_on", "evaluated on", U_TEXT, 0);
    report_col(t, "class", "class", U_TEXT, 0);
    report_col(t, "points", "points", U_INT, 0);
    report_col(t, "median_abs_err", "median |err|", U_REAL, 0);
    report_col(t, "p90_abs_err", "p90 |err|", U_REAL, 0);
    report_col(t, "p99_abs_err", "p99 |err|", U_REAL, 0);
    report_col(t, "worst_abs_err", "worst |err|", U_REAL, 0);
    report_col(t, "median_err", "median err", U_REAL, 0);
    report_col(t, "meets", "meets 10 % / 35 %", U_TEXT, 0);
    int ops_met = 0;
    for (int i = 0; i < n; i++) {
        const fit_summary *s = &ops[i].s;
        int met = ops[i].bounded && op_validation_meets(&ops[i]);
        ops_met += met;
        report_cell_text(t, ops[i].fitted_on);
        report_cell_text(t, ops[i].evaluated_on);
        report_cell_text(t, ops[i].op_class);
        report_cell_int(t, s->points);
        report_cell_num(t, s->median_abs_err);
        report_cell_num(t, s->p90_abs_err);
        report_cell_num(t, s->p99_abs_err);
        report_cell_num(t, s->worst_abs_err);
        report_cell_num(t, s->median_err);
        report_cell_text(t, !ops[i].bounded                           ? "-"
                            : met                                      ? "yes"
                            : s->median_abs_err <= VALIDATE_OP_MEDIAN ? "median only"
                                                                       : "no");
    }
    return ops_met;
}

/* The all-to-all class: each system's and engine's lines judged on their held-out rows. */
static void report_alltoall(report *r, const op_validation *rows, int n)
{
    report_table *t = report_table_add(r, "alltoall", "All-to-all: each kernel's line (latency, per token, merged "
                                                      "bytes / bandwidth) fitted on even rows, judged on odd ones");
    report_col(t, "set", "system/engine", U_TEXT, 0);
    report_col(t, "points", "held-out points", U_INT, 0);
    report_col(t, "median_abs_err", "median |err|", U_REAL, 0);
    report_col(t, "p90_abs_err", "p90 |err|", U_REAL, 0);
    report_col(t, "worst_abs_err", "worst |err|", U_REAL, 0);
    report_col(t, "median_err", "median err", U_REAL, 0);
    report_col(t, "meets", "meets 15 %", U_TEXT, 0);
    for (int i = 0; i < n; i++) {
        char set[VALIDATE_NAME_MAX];
        snprintf(set, sizeof set, "%.*s", (int)strcspn(rows[i].fitted_on, " "), rows[i].fitted_on);
        report_cell_text(t, set);
        report_cell_int(t, rows[i].s.points);
        report_cell_num(t, rows[i].s.median_abs_err);
        report_cell_num(t, rows[i].s.p90_abs_err);
        report_cell_num(t, rows[i].s.worst_abs_err);
        report_cell_num(t, rows[i].s.median_err);
        report_cell_text(t, rows[i].s.median_abs_err <= VALIDATE_A2A_MEDIAN ? "yes" : "no");
    }
}

static void report_engines(report *r, const op_validation *agree, int na)
{
    report_table *ag = report_table_add(r, "engines",
                                        "The engines against each other: the same kernels, measured by two engines");
    report_col(ag, "engine_a", "engine A", U_TEXT, 0);
    report_col(ag, "engine_b", "engine B", U_TEXT, 0);
    report_col(ag, "class", "class", U_TEXT, 0);
    report_col(ag, "points", "shapes in both", U_INT, 0);
    report_col(ag, "median_abs_diff", "median |B/A - 1|", U_REAL, 0);
    report_col(ag, "p90_abs_diff", "p90", U_REAL, 0);
    report_col(ag, "worst_abs_diff", "worst", U_REAL, 0);
    report_col(ag, "median_diff", "median B/A - 1", U_REAL, 0);
    for (int i = 0; i < na; i++) {
        report_cell_text(ag, agree[i].fitted_on);
        report_cell_text(ag, agree[i].evaluated_on);
        report_cell_text(ag, agree[i].op_class);
        report_cell_int(ag, agree[i].s.points);
        report_cell_num(ag, agree[i].s.median_abs_err);
        report_cell_num(ag, agree[i].s.p90_abs_err);
        report_cell_num(ag, agree[i].s.worst_abs_err);
        report_cell_num(ag, agree[i].s.median_err);
    }
}

static void report_serving(report *r, const serving_validation *runs, int ns)
{
    report_table *sv = report_table_add(r, "serving", "End to end: measured serving runs against napkin serve");
    report_col(sv, "model", "model", U_TEXT, 0);
    report_col(sv, "system", "system", U_TEXT, 0);
    report_col(sv, "backend", "engine", U_TEXT, 0);
    report_col(sv, "precision", "precision", U_TEXT, 0);
    report_col(sv, "tp", "tp", U_INT, 0);
    report_col(sv, "runs", "runs", U_INT, 0);
    report_col(sv, "priced", "priced", U_INT, 0);
    report_col(sv, "tpot_err_roofline", "TPOT err, roofline", U_REAL, 0);
    report_col(sv, "calibration", "calibrated with", U_TEXT, 0);
    report_col(sv, "tpot_err_calibrated", "TPOT err, calibrated", U_REAL, 0);
    report_col(sv, "tpot_abs_err_calibrated", "|TPOT err|, calibrated", U_REAL, 0);
    report_col(sv, "ttft_err_calibrated", "closed-loop TTFT err", U_REAL, 0);
    report_col(sv, "meets", "TPOT within 10 %", U_TEXT, 0);
    for (int i = 0; i < ns; i++) {
        const serving_validation *v = &runs[i];
        report_cell_text(sv, v->model);
        report_cell_text(sv, v->system);
        report_cell_text(sv, v->backend);
        report_cell_text(sv, v->precision);
        report_cell_int(sv, v->tp);
        report_cell_int(sv, v->runs);
        report_cell_int(sv, v->priced);
        report_cell_num(sv, v->tpot_err_roofline);
        report_cell_text(sv, v->calibration[0] ? v->calibration : "-");
        report_cell_num(sv, v->tpot_err_calibrated);
        report_cell_num(sv, v->tpot_abs_err_calibrated);
        report_cell_num(sv, v->ttft_err_calibrated);
        report_cell_text(sv, v->priced == 0 ? "-" : v->tpot_abs_err_calibrated <= 0.10 ? "yes" : "no");
    }
}

/* The reader's own sets under `sets`, each fitted on half its GEMM shapes and judged on the rest. */
static void report_sets(report *r, const char *sets)
{
    report_table *own = report_table_add(r, "sets", "Measured sets: fitted on half the GEMM shapes, judged on the rest");
    report_col(own, "set", "set", U_TEXT, 0);
    report_col(own, "held_out", "fitted on / judged on", U_TEXT, 0);
    report_col(own, "points", "points judged", U_INT, 0);
    report_col(own, "median_abs_err", "median |err|", U_REAL, 0);
    report_col(own, "worst_abs_err", "worst |err|", U_REAL, 0);
    report_col(own, "meets", "within 25 %", U_TEXT, 0);
    DIR *dp = opendir(sets);
    struct dirent *de;
    while (dp && (de = readdir(dp)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char set[1100], err[512];
        snprintf(set, sizeof set, "%s/%s", sets, de->d_name);
        fit_summary a, b;
        if (validate_measured_set(set, NULL, &a, &b, err, sizeof err) != 0) {
            report_note(r, "%s: not judged: %s", set, err);
            continue;
        }
        const fit_summary *h[2] = {&a, &b};
        for (int k = 0; k < 2; k++) {
            report_cell_text(own, set);
            report_cell_text(own, k == 0 ? "odd rows / even rows" : "even rows / odd rows");
            report_cell_int(own, h[k]->points);
            report_cell_num(own, h[k]->median_abs_err);
            report_cell_num(own, h[k]->worst_abs_err);
            report_cell_text(own, h[k]->median_abs_err <= 0.25 ? "yes" : "no");
        }
    }
    if (dp)
        closedir(dp);
}

/* What the published sets under `dir` say against the model.  (Static: a
 * command runs once per process, and the arrays are large for the stack.) */
static op_validation op_rows[256], engine_rows[64], a2a_rows[32];
static serving_validation serving_rows[128];
typedef struct {
    int n, ns, na, nx;
    serving_overall overall;
} validations;

static int compute(const char *dir, const cli_specs *specs, validations *v)
{
    char err[512], path[1100];
    v->n = validate_ops(dir, &specs->gpus, op_rows, 256, err, sizeof err);
    if (v->n < 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--measured: %s", err);
    snprintf(path, sizeof path, "%s/serving_runs.tsv", dir);
    v->ns = validate_serving_overall(path, &specs->gpus, &specs->models, serving_rows, 128, &v->overall, err,
                                     sizeof err);
    if (v->ns < 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--measured: %s", err);
    v->na = validate_engine_agreement(dir, &specs->gpus, engine_rows, 64, err, sizeof err);
    if (v->na < 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--measured: %s", err);
    v->nx = validate_alltoall(dir, a2a_rows, 32, err, sizeof err);
    if (v->nx < 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--measured: %s", err);
    return 0;
}

/* The error band of each regime (band.h) over the held-out serving runs:
 * what a calibrated answer like it prints beside its number. */
static void report_bands(report *r, const cli_specs *specs)
{
    static const char *const engines[] = {"trtllm", "vllm", "sglang"};
    char err[512];
    band_runs b;
    if (band_runs_builtin(&specs->gpus, &specs->models, &b, err, sizeof err) != 0) {
        report_note(r, "bands: %s", err);
        return;
    }
    report_table *t = report_table_add(r, "bands", "Error bands: held-out serving runs by regime (measured / "
                                                   "calibrated - 1, 10th to 90th percentile)");
    report_col(t, "regime", "regime", U_TEXT, 0);
    report_col(t, "runs", "held-out runs", U_INT, 0);
    report_col(t, "tpot_band_lo", "TPOT band from", U_REAL, 0);
    report_col(t, "tpot_band_hi", "to", U_REAL, 0);
    report_col(t, "ttft_closed_band_lo", "closed-loop TTFT band from", U_REAL, 0);
    report_col(t, "ttft_closed_band_hi", "to", U_REAL, 0);
    report_col(t, "ttft_bench_band_lo", "with the engine's overhead, from", U_REAL, 0);
    report_col(t, "ttft_bench_band_hi", "to", U_REAL, 0);
    int with = 0, runs_with = 0;
    for (int e = 0; e < 3; e++)
        for (int m = 0; m < BAND_MODEL_CLASSES; m++)
            for (int c = 0; c < BAND_CONC_RANGES; c++)
                for (int x = 0; x < BAND_MIXES; x++) {
                    band_regime q = {"", m, c, x};
                    snprintf(q.engine, sizeof q.engine, "%s", engines[e]);
                    error_band tp = band_for(&b, &q, BAND_TPOT, 0), tt = band_for(&b, &q, BAND_TTFT_CLOSED, 0),
                                tb = band_for(&b, &q, BAND_TTFT_BENCH, 0);
                    if (tp.n == 0)
                        continue;
                    char name[160];
                    band_regime_name(&q, name, sizeof name);
                    report_cell_text(t, name);
                    report_cell_int(t, tp.n);
                    report_cell_num(t, tp.have ? tp.lo : NAN);
                    report_cell_num(t, tp.have ? tp.hi : NAN);
                    report_cell_num(t, tt.have ? tt.lo : NAN);
                    report_cell_num(t, tt.have ? tt.hi : NAN);
                    report_cell_num(t, tb.have ? tb.lo : NAN);
                    report_cell_num(t, tb.have ? tb.hi : NAN);
                    with += tp.have;
                    runs_with += tp.have ? tp.n : 0;
                }
    report_note(r, "bands: %d regimes hold at least %d held-out runs, %d of the %d held-out runs priced", with,
                BAND_MIN_RUNS, runs_with, b.n);
    band_runs_free(&b);
}

int cmd_validate(int argc, char **argv)
{
    const char *dir = "code/specs/measured", *sets = "figures/measured";
    cli_opt opts[] = {
        {"--measured", OPT_STRING, &dir, "DIR", "the published sets (default code/specs/measured)", 0, 0},
        {"--sets", OPT_STRING, &sets, "DIR", "measured sets of your own, one folder each (default figures/measured)",
         0, 0},
    };
    cli_common common;
    int rc = cli_parse(&DOC, argc, argv, opts, CLI_NOPTS(opts), &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    cli_specs specs;
    validations v = {0};
    report *r = NULL;
    if ((rc = cli_specs_load(DOC.name, &common, &specs)) != 0)
        return rc;
    if ((rc = compute(dir, &specs, &v)) != 0)
        goto done;
    r = report_new(DOC.name);
    report_text(r, "measured", "published sets", dir);
    int ops_met = report_ops(r, op_rows, v.n);
    report_engines(r, engine_rows, v.na);
    report_alltoall(r, a2a_rows, v.nx);
    report_serving(r, serving_rows, v.ns);
    char terr[512], tpath[1100];
    snprintf(tpath, sizeof tpath, "%s/serving_runs.tsv", dir);
    if (report_ttft_validation(r, tpath, &specs.gpus, &specs.models, terr, sizeof terr) != 0) {
        rc = cli_fail(DOC.name, EXIT_USAGE, "--measured: %s", terr);
        goto done;
    }
    snprintf(tpath, sizeof tpath, "%s/serving_runs_moe.tsv", dir);
    if (access(tpath, R_OK) != 0) /* a set without MoE or disaggregated runs (a reader's, a fixture) */
        report_note(r, "no %s: the MoE and disaggregated runs are not judged", tpath);
    else if (report_moe_validation(r, tpath, &specs.gpus, &specs.models, terr, sizeof terr) != 0) {
        rc = cli_fail(DOC.name, EXIT_USAGE, "--measured: %s", terr);
        goto done;
    }
    report_bands(r, &specs);
    report_sets(r, sets);
    int bounded = 0;
    for (int i = 0; i < v.n; i++)
        bounded += op_rows[i].bounded;
    report_int(r, "op_rows_meeting", "op comparisons across systems meeting both bounds", ops_met);
    report_int(r, "op_rows", "op comparisons across systems", bounded);
    report_int(r, "serving_runs", "measured serving runs", v.overall.runs);
    report_int(r, "serving_answered", "of those, answered by napkin serve", v.overall.answered);
    report_num(r, "tpot_median_abs_err", "calibrated TPOT, median |error| over every answered run", U_REAL,
               v.overall.tpot.median_abs_err);
    report_num(r, "tpot_median_err", "calibrated TPOT, median error over every answered run", U_REAL,
               v.overall.tpot.median_err);
    report_note(r, "errors are predicted / measured - 1: below 0 the model is fast");
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
