/* napkin validate's MoE and disaggregated section: every run of
 * serving_runs_moe.tsv asked as one napkin serve question (validate_moe.h),
 * per (model, system, engine, mode) group, and the refusals by reason. */
#ifndef NAPKIN_VALIDATE_MOE_REPORT_H
#define NAPKIN_VALIDATE_MOE_REPORT_H

#include "cli_report.h"
#include "specs.h"

/* The TPOT bound the issue states for a group of at least MOE_BOUND_RUNS runs. */
#define MOE_TPOT_TARGET 0.12
#define MOE_BOUND_RUNS 20

/* Judge the runs at runs_path into r: 0, or -1 with a message in err. */
int report_moe_validation(report *r, const char *runs_path, const gpu_table *gpus, const model_table *models,
                          char *err, size_t errlen);

#endif
