/* napkin validate's TTFT table: held-out runs per (model, system, engine). */
#ifndef NAPKIN_VALIDATE_TTFT_REPORT_H
#define NAPKIN_VALIDATE_TTFT_REPORT_H

#include "cli_report.h"
#include "specs.h"

/* Fit and judge the serving runs at runs_path into r: 0, or -1 with a message in err. */
int report_ttft_validation(report *r, const char *runs_path, const gpu_table *gpus, const model_table *models,
                           char *err, size_t errlen);

#endif
