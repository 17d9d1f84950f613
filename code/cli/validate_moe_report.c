#include "validate_moe_report.h"

#include "validate_moe.h"

#include <math.h>
#include <stdio.h>

/* Whether a group meets the TPOT bound: "-" below MOE_BOUND_RUNS runs or with none answered. */
static const char *meets(const moe_group *g)
{
    if (g->runs < MOE_BOUND_RUNS || g->answered == 0)
        return "-";
    return g->answered == g->runs && g->tpot_abs_err <= MOE_TPOT_TARGET ? "yes" : "no";
}

static void report_groups(report *r, const moe_validation *v)
{
    report_table *t = report_table_add(r, "moe_serving", "MoE and disaggregated runs as napkin serve questions, "
                                                         "by model, system, engine and mode");
    report_col(t, "model", "model", U_TEXT, 0);
    report_col(t, "system", "system", U_TEXT, 0);
    report_col(t, "backend", "engine", U_TEXT, 0);
    report_col(t, "mode", "mode", U_TEXT, 0);
    report_col(t, "runs", "runs", U_INT, 0);
    report_col(t, "answered", "answered", U_INT, 0);
    report_col(t, "calibration", "calibrated with", U_TEXT, 0);
    report_col(t, "tpot_abs_err", "|TPOT err|", U_REAL, 0);
    report_col(t, "tpot_bias", "TPOT bias", U_REAL, 0);
    report_col(t, "ttft_abs_err", "|TTFT err|", U_REAL, 0);
    report_col(t, "ttft_bias", "TTFT bias", U_REAL, 0);
    report_col(t, "tpot_err_roofline", "TPOT err, roofline", U_REAL, 0);
    report_col(t, "meets", "all answered, TPOT within 12 %", U_TEXT, 0);
    for (int i = 0; i < v->ngroups; i++) {
        const moe_group *g = &v->groups[i];
        report_cell_text(t, g->model);
        report_cell_text(t, g->system);
        report_cell_text(t, g->backend);
        report_cell_text(t, g->mode);
        report_cell_int(t, g->runs);
        report_cell_int(t, g->answered);
        report_cell_text(t, g->calibration[0] ? g->calibration : "-");
        report_cell_num(t, g->tpot_abs_err);
        report_cell_num(t, g->tpot_err);
        report_cell_num(t, g->ttft_abs_err);
        report_cell_num(t, g->ttft_err);
        report_cell_num(t, g->tpot_err_roofline);
        report_cell_text(t, meets(g));
    }
}

static void report_refusals(report *r, const moe_validation *v)
{
    report_table *t = report_table_add(r, "moe_refusals", "MoE and disaggregated runs not answered, by reason");
    report_col(t, "model", "model", U_TEXT, 0);
    report_col(t, "system", "system", U_TEXT, 0);
    report_col(t, "backend", "engine", U_TEXT, 0);
    report_col(t, "mode", "mode", U_TEXT, 0);
    report_col(t, "reason", "reason", U_TEXT, 0);
    report_col(t, "runs", "runs", U_INT, 0);
    for (int i = 0; i < v->nrefusals; i++) {
        const moe_refusal *x = &v->refusals[i];
        const moe_group *g = &v->groups[x->group];
        report_cell_text(t, g->model);
        report_cell_text(t, g->system);
        report_cell_text(t, g->backend);
        report_cell_text(t, g->mode);
        report_cell_text(t, x->reason);
        report_cell_int(t, x->runs);
    }
}

int report_moe_validation(report *r, const char *runs_path, const gpu_table *gpus, const model_table *models,
                          char *err, size_t errlen)
{
    moe_validation v;
    if (validate_moe(runs_path, gpus, models, &v, err, errlen) != 0)
        return -1;
    report_groups(r, &v);
    report_refusals(r, &v);
    report_int(r, "moe_runs", "MoE and disaggregated serving runs", v.runs);
    report_int(r, "moe_answered", "of those, answered by napkin serve", v.answered);
    moe_validation_free(&v);
    return 0;
}
