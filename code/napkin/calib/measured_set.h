/* A reader's own measured set (make measure, figures/measured/<device>/)
 * fitted as a calibration: the GEMM sweep the set holds turned into the
 * achieved rates of its device, so `--calibrate DIR` gives a calibrated
 * answer beside the set's ceilings' roofline. */
#ifndef NAPKIN_MEASURED_SET_H
#define NAPKIN_MEASURED_SET_H

#include "fit.h"
#include "specs.h"

#include <stddef.h>

/* A reader's own measured set (make measure: DIR/gemm.tsv, columns m n k
 * time_s, the dtype in its provenance) fitted for the GEMM class, timed
 * against the ceilings of `device` (the calibrated device the set
 * describes); elementwise follows from it as for published sets, the other
 * classes stay at the roofline.  Rows whose shape starts "gemv" (the
 * matrix-vector path, another kernel) are left out.  half as in
 * published_fit; sum (may be NULL) gets the residuals over the points
 * fitted, held (may be NULL) those over the other half.  Returns 0, or -1. */
int measured_set_fit(const char *dir, const gpu_spec *device, int half, rate_model *out, fit_summary *sum,
                     fit_summary *held, char *err, size_t errlen);

#endif
