/* The fitted calibrations the workbook ships (code/specs/calibrations.tsv,
 * embedded like the GPU table), and the rows that file is made of.
 *
 * The file is generated, not typed: `make calibrations` fits every
 * published set under code/specs/measured/ (published.h) and writes it; a
 * test refits and compares, so it cannot drift from the data.
 * Columns: calibration gpu class tp t0_s t_item_s flop_frac byte_frac blend
 * item_frac t_long_s latency1_s bandwidth1 latency2_s bandwidth2 points median_abs_err
 * worst_abs_err ("-" where a column does not apply: op classes have no tp
 * or link figures, all-reduce rows, class "allreduce", no op figures).
 * An all-to-all line (rates.h a2a_rate), class alltoall_{decode,prefill}_
 * {dispatch,combine}, puts its EP group size in tp, its latency in t0_s,
 * its per-token cost in t_item_s and its bandwidth in bandwidth1 (0: no
 * byte term); the rest "-". */
#ifndef NAPKIN_RATE_TABLE_H
#define NAPKIN_RATE_TABLE_H

#include "fit.h"
#include "specs.h"

#include <stddef.h>
#include <stdio.h>

/* The calibration called name ("published:h100_sxm/trtllm") from the
 * built-in table.  Returns 0, or -1 with a message listing the names. */
int rate_model_builtin(const char *name, rate_model *out, char *err, size_t errlen);
/* The default calibration of a GPU key: its published TensorRT-LLM set.
 * Returns 0, or -1 (nothing written to err) when the GPU has none. */
int rate_model_default(const char *gpu_key, rate_model *out);
/* For programs: the built-in GPU row `key` with the calibration `name`
 * attached (its rates kept in *storage, which must outlive the row), or
 * exit(1) with a message. */
gpu_spec gpu_builtin_calibrated(const char *key, const char *name, rate_model *storage);

/* "published:h100_sxm/trtllm, ..." */
char *rate_model_names(char *buf, size_t n);

/* Parse calibration rows from text (the format above); name selects one
 * calibration.  Returns 0, -1 with a message, or 1 when name is absent. */
int rate_model_parse(const char *text, const char *filename, const char *name, rate_model *out, char *err,
                     size_t errlen);

/* Write r's all-to-all lines, each with its residuals where sums (may be
 * NULL) has points. */
void rate_model_write_alltoall(FILE *out, const rate_model *r, const fit_summary sums[A2A_KERNELS]);

/* Write r's rows (header first when header is 1). */
void rate_model_write(FILE *out, const rate_model *r, const fit_summary sums[RC_COUNT],
                      const fit_summary link_sums[RATE_TP_SLOTS], int header);

#endif
