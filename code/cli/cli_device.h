/* The device a timing command runs on, as the reader asks for it: a GPU row
 * at its datasheet rates, derated by --efficiency (or --bw-efficiency and
 * --flops-efficiency), or calibrated by a measured set (--calibrate DIR).
 * Shared by `napkin prefill` and `napkin serve`. */
#ifndef NAPKIN_CLI_DEVICE_H
#define NAPKIN_CLI_DEVICE_H

#include "calibrate.h"
#include "cli_lookup.h"
#include "cli_rates.h"

typedef struct {
    const char *gpu;       /* --gpu key (NULL: only with a CPU --calibrate set) */
    const char *calibrate; /* --calibrate DIR (a measured set) or published:SYSTEM/BACKEND */
    int roofline;          /* --roofline: no calibrated answer */
    double efficiency, bw_efficiency, flops_efficiency; /* NAN = not given */
} device_flags;

#define DEVICE_NOPTS 6
device_flags device_flags_default(void);
void device_flag_opts(device_flags *f, cli_opt *opts);

typedef struct {
    gpu_spec sheet;     /* the table row (a CPU set: the measured device) */
    gpu_spec timed;     /* what the step model uses */
    int calibrated;     /* 1 with --calibrate */
    int has_sheet;      /* 0 for a CPU set: there is no datasheet to compare */
    calibration cal;
    double bw_fraction, flops_fraction; /* the derating applied (1, 1 when none) */
    cli_rates rates;    /* the calibrated answer's GPU row (rates.gpu), where rates.have */
} device_setup;

/* Returns 0, or the exit status after printing the message. */
int device_setup_resolve(const char *cmd, const cli_specs *specs, const device_flags *f, dtype compute,
                         device_setup *out);
/* The model (--model) and the device, and a check that the device has a rate
 * for the compute dtype: what prefill and serve resolve before timing.
 * Returns 0, or the exit status after the message (specs stay loaded). */
int device_model_resolve(const char *cmd, const cli_specs *specs, const char *model_key, const device_flags *f,
                         dtype compute, const model_spec **m, device_setup *d);

/* The device lines of a report. */
void device_report(report *r, const device_setup *d);

#endif
