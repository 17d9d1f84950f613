/* The reader's own ceilings in place of the datasheet's: a measured set
 * written by `make measure` (figures/measured/<device>/ or build/measured/...)
 * gives the bandwidth and the GEMM peak that the step model then uses.
 *
 * From DIR/gemm.tsv's provenance: peak_flops_measured (the best GEMM rate of
 * the sweep) and bandwidth_measured (the stream read rate it compared with);
 * failing those, DIR/stream.tsv's "read" row.  A GPU set keeps its table row
 * (links, memory, the ratios between dtypes) and scales every FLOP rate by
 * measured / datasheet for the measured dtype; a CPU set becomes a device of
 * its own, whose one measured rate stands for every dtype. */
#ifndef NAPKIN_CALIBRATE_H
#define NAPKIN_CALIBRATE_H

#include "specs.h"

#include <stddef.h>

typedef struct {
    char device[SPEC_NAME_MAX]; /* the set's device name */
    char kind[16];              /* "gpu" or "cpu" */
    char date[40];
    double bandwidth;           /* bytes/s, measured */
    double peak_flops;          /* FLOP/s, measured */
    double mem_bytes;           /* the machine's memory from the provenance (0 if not given) */
    char bandwidth_from[64];    /* which figure: "gemm.tsv bandwidth_measured", "stream.tsv read" */
} calibration;

/* Read the set in dir.  Returns 0, or -1 with "dir/file: reason". */
int calibration_load(const char *dir, calibration *out, char *err, size_t errlen);

/* The device to time with: base (a GPU row, or NULL for a CPU set) with the
 * measured ceilings.  Returns 0, or -1 with a message (a GPU set without a
 * base row, a CPU set given a GPU row). */
int calibrated_gpu(const calibration *c, const gpu_spec *base, dtype measured_dtype, gpu_spec *out, char *err,
                   size_t errlen);

#endif
