/* napkin validate's TTFT table: see validate_ttft_report.h. */
#include "validate_ttft_report.h"

#include "validate_ttft.h"

#include <stdlib.h>

int report_ttft_validation(report *r, const char *runs_path, const gpu_table *gpus, const model_table *models,
                           char *err, size_t errlen)
{
    ttft_validation *v = malloc(sizeof *v);
    if (!v || validate_ttft(runs_path, gpus, models, v, err, errlen) != 0) {
        free(v);
        return -1;
    }
    report_table *o = report_table_add(r, "ttft_overhead",
                                       "Per-request overhead, the one parameter fitted on serving runs (the half "
                                       "whose id hashes even)");
    report_col(o, "engine", "engine", U_TEXT, 0);
    report_col(o, "overhead", "overhead", U_SECONDS, 0);
    report_col(o, "fitted_on", "runs fitted on", U_INT, 0);
    for (int k = 0; k < v->no; k++) {
        report_cell_text(o, v->o[k].engine);
        report_cell_num(o, v->o[k].overhead);
        report_cell_int(o, v->o[k].fitted_on);
    }
    report_table *t = report_table_add(r, "ttft", "TTFT as a closed-loop benchmark measures it, held-out runs "
                                                  "(the other half)");
    report_col(t, "model", "model", U_TEXT, 0);
    report_col(t, "system", "system", U_TEXT, 0);
    report_col(t, "backend", "engine", U_TEXT, 0);
    report_col(t, "runs", "runs", U_INT, 0);
    report_col(t, "answered", "answered", U_INT, 0);
    report_col(t, "tpot_abs", "|TPOT err|", U_REAL, 0);
    report_col(t, "tpot_bias", "TPOT bias", U_REAL, 0);
    report_col(t, "ttft_abs", "|TTFT err|", U_REAL, 0);
    report_col(t, "ttft_bias", "TTFT bias", U_REAL, 0);
    report_col(t, "ttft_roof_abs", "|TTFT err|, roofline", U_REAL, 0);
    report_col(t, "ttft_roof_bias", "TTFT bias, roofline", U_REAL, 0);
    report_col(t, "meets", "TTFT target", U_TEXT, 0);
    report_col(t, "unanswered", "not answered because", U_TEXT, 0);
    for (int i = 0; i < v->ng; i++) {
        const ttft_group *g = &v->g[i];
        report_cell_text(t, g->model);
        report_cell_text(t, g->system);
        report_cell_text(t, g->backend);
        report_cell_int(t, g->runs);
        report_cell_int(t, g->answered);
        report_cell_num(t, g->tpot_abs);
        report_cell_num(t, g->tpot_bias);
        report_cell_num(t, g->ttft_abs);
        report_cell_num(t, g->ttft_bias);
        report_cell_num(t, g->ttft_roof_abs);
        report_cell_num(t, g->ttft_roof_bias);
        /* a dense group of at least 20 runs: within 35 % */
        report_cell_text(t, !g->dense || g->answered < 20 ? "-" : g->ttft_abs <= 0.35 ? "yes" : "no");
        report_cell_text(t, g->unanswered[0] ? g->unanswered : "-");
    }
    report_int(r, "ttft_answered", "held-out runs serve answers", v->answered);
    report_num(r, "ttft_abs_err", "TTFT median |error| over them (target 0.25)", U_REAL, v->ttft_abs);
    report_num(r, "ttft_bias", "TTFT median error", U_REAL, v->ttft_bias);
    report_num(r, "ttft_abs_err_roofline", "the roofline's, with the same overheads", U_REAL, v->ttft_roof_abs);
    report_num(r, "ttft_abs_err_no_overhead", "calibrated, without the overhead", U_REAL, v->ttft_abs_no_overhead);
    report_num(r, "tpot_abs_err_held_out", "TPOT median |error| over them (target 0.10)", U_REAL, v->tpot_abs);
    free(v);
    return 0;
}
