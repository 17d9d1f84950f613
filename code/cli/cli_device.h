/* The device a command prices work on, declared and resolved in one place.
 *
 * The flags.  Every command that prices work (and the few that only look a
 * GPU up) takes its device flags from one table, each with one meaning and
 * one help line; a command names the ones it takes (DEVICE_* bits):
 *   --gpu G               a row of the GPU table
 *   --calibrate DIR|NAME  DIR: a measured set (make measure), whose ceilings
 *                         replace the datasheet's and whose GEMM sweep,
 *                         fitted, gives the calibrated answer; a CPU set is a
 *                         device of its own (no --gpu).  NAME:
 *                         published:SYSTEM/BACKEND, the calibrated answer's
 *                         rates (default: the GPU's published set)
 *   --roofline            the bound alone, no calibrated answer
 *   --efficiency F, --bw-efficiency F, --flops-efficiency F
 *                         the datasheet derated (not with --calibrate DIR)
 *   --usable F, --hbm BYTES   the memory a server may use, and the GPU's
 *
 * The device.  device_setup holds the datasheet row, the row the first
 * answer is timed with, the measured set and the achieved rates, and no
 * pointer into itself, so a copy is as good as the original; the row the
 * calibrated answer prices with (device_rated) points into it instead, and
 * lives no longer than it. */
#ifndef NAPKIN_CLI_DEVICE_H
#define NAPKIN_CLI_DEVICE_H

#include "calibrate.h"
#include "cli_lookup.h"
#include "cli_rates.h"

/* The device flags a command takes. */
enum {
    DEVICE_GPU = 1u << 0,        /* --gpu */
    DEVICE_EFFICIENCY = 1u << 1, /* --efficiency, --bw-efficiency, --flops-efficiency */
    DEVICE_CALIBRATE = 1u << 2,  /* --calibrate DIR|NAME */
    DEVICE_ROOFLINE = 1u << 3,   /* --roofline */
    DEVICE_USABLE = 1u << 4,     /* --usable */
    DEVICE_HBM = 1u << 5,        /* --hbm */
};
/* A command with a roofline and a calibrated answer. */
#define DEVICE_PRICING (DEVICE_GPU | DEVICE_CALIBRATE | DEVICE_ROOFLINE)
/* The memory a server may use. */
#define DEVICE_MEMORY (DEVICE_USABLE | DEVICE_HBM)
/* The most cli_opt entries device_flag_opts writes. */
#define DEVICE_NOPTS_MAX 8

typedef struct {
    const char *gpu;       /* --gpu key; NULL: not given */
    const char *calibrate; /* --calibrate DIR (a measured set) or published:SYSTEM/BACKEND */
    int roofline;          /* --roofline: no calibrated answer */
    double efficiency, bw_efficiency, flops_efficiency; /* NAN = not given */
    double usable;         /* --usable; NAN = the memory policy's default */
    double hbm;            /* --hbm bytes; 0 = what the driver reports (the GPU row) */
    unsigned takes;        /* the DEVICE_* flags the command takes */
    const char *default_gpu; /* the GPU without --gpu (unless a CPU set is named); NULL: none */
    char gpu_help[96], usable_help[96]; /* help lines naming the defaults */
} device_flags;

/* Nothing given; the command takes `takes`, and default_gpu (or NULL) when
 * it is asked no --gpu. */
device_flags device_flags_default(unsigned takes, const char *default_gpu);

/* The flags of `which` that f->takes, in the table's order, into opts
 * (room for DEVICE_NOPTS_MAX); returns how many were written.  A command
 * may call it more than once to place its flags among its own.  --gpu is a
 * required flag only where nothing can stand in for it (no default GPU, no
 * --calibrate). */
int device_flag_opts(device_flags *f, unsigned which, cli_opt *opts);

/* The row of --gpu, or of the default GPU, alone: for a command that looks a
 * GPU up without pricing on it (roofline, train).  0, or EXIT_USAGE after
 * the message. */
int device_gpu_row(const char *cmd, const cli_specs *specs, const device_flags *f, const gpu_spec **out);

/* The memory policy of --usable and --hbm, with activation_tokens and
 * sampled_tokens (-1: the policy's). */
memory_policy device_policy(const device_flags *f, int activation_tokens, int sampled_tokens);

typedef struct {
    gpu_spec sheet;     /* the table row (a CPU set: the measured device) */
    gpu_spec timed;     /* what the first answer is timed with: the row, derated or on measured ceilings */
    int calibrated;     /* 1 with --calibrate DIR: timed has the set's ceilings */
    int has_sheet;      /* 0 for a CPU set: there is no datasheet to compare */
    calibration cal;    /* the measured set, where calibrated */
    double bw_fraction, flops_fraction; /* the derating applied (1, 1 when none) */
    cli_rates rates;    /* the calibrated answer's achieved rates, where rates.have */
} device_setup;

/* Resolve the flags for a model computing in `compute` (a GPU set scales
 * the row's rate for it), after checking them (--hbm a GPU's memory; not
 * both --calibrate and an efficiency).  Returns 0, or the exit status after
 * the message. */
int device_setup_resolve(const char *cmd, const cli_specs *specs, const device_flags *f, dtype compute,
                         device_setup *out);

/* The row the calibrated answer prices with: the measured ceilings where a
 * set gave them, else the datasheet's, with the achieved rates attached.
 * gpu.rates points into d: the row lives no longer than d.  have = 0: there
 * is no calibrated answer (the row is then the roofline's). */
typedef struct {
    int have;
    gpu_spec gpu;
} rated_device;
rated_device device_rated(const device_setup *d);

/* The device lines of a report: name, where its ceilings come from (a
 * measured set, or the derating), the bandwidth timed with, the calibration. */
void device_report(report *r, const device_setup *d);
/* For a report that names its GPU itself: the measured set's lines, where
 * the device is calibrated by one (nothing otherwise). */
void device_report_measured(report *r, const device_setup *d);
/* The two kinds of number, named alike in every command's table (the first
 * word of a section title; README "Two kinds of number"):
 *   "Bound: WHAT (datasheet rates)" or "(ceilings measured on DEVICE)"
 *       the roofline on named ceilings, nothing derated;
 *   "Estimate: WHAT (datasheet rates at the given efficiencies)"
 *       the roofline derated by the device's efficiencies or by a command's
 *       own `efficiency` (1 when it has none): a guess, not a bound;
 *   "Estimate: WHAT at measured kernel rates (calibrated)"
 *       device_report_calibrated's section.
 * Opens the section of the first answer (a later section of the same kind
 * may say just "Bound: WHAT"). */
void device_report_first(report *r, const device_setup *d, double efficiency, const char *what);
/* A later section of the first answer's kind: "Bound: WHAT" or "Estimate: WHAT". */
void device_report_again(report *r, const device_setup *d, double efficiency, const char *what);
/* "Bound" or "Estimate": the kind of the first answer. */
const char *device_first_kind(const device_setup *d, double efficiency);
/* Opens the calibrated answer's section: "Estimate: WHAT at measured kernel
 * rates (calibrated)", or "(calibrated, ASIDE)" where aside is not NULL, and
 * the calibration; "No estimate: the bound alone" where there is none.
 * Returns 1 when there is a calibrated answer to add under it, 0 when the
 * roofline stands alone. */
int device_report_calibrated(report *r, const device_setup *d, const char *what, const char *aside);
/* The same section title alone, for a report whose first section already
 * names the calibration (device_report). */
int device_report_calibrated_section(report *r, const device_setup *d, const char *what, const char *aside);

#endif
