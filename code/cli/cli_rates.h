/* The calibrated answer beside the roofline: which achieved rates
 * (rates.h) a pricing command uses for its second answer.
 *   --calibrate published:<system>/<backend>  a published calibration;
 *   (nothing)   the GPU's default published calibration, where it has one;
 *   --roofline  the bound alone: no calibrated answer.
 * (A measured set's own rates are fitted by cli_device.c.)  The struct
 * holds the rates alone, no GPU row pointing at them, so it copies safely;
 * cli_device.h's device_rated attaches them to the row they price. */
#ifndef NAPKIN_CLI_RATES_H
#define NAPKIN_CLI_RATES_H

#include "cli_report.h"
#include "rate_table.h"
#include "specs.h"

#define CLI_PUBLISHED_PREFIX "published:"

typedef struct {
    rate_model model;
    int have;        /* 1: a calibrated answer is given */
    int asked;       /* 1: named with --calibrate (not the default) */
} cli_rates;

/* 1 when s names a published calibration (starts with "published:"). */
int cli_is_published(const char *s);

/* Resolve for the GPU row keyed gpu_key: name (a published calibration, or
 * NULL for the default), roofline (1: none).  Returns 0, or the exit status
 * after the message (an unknown name). */
int cli_rates_resolve(const char *cmd, const char *gpu_key, const char *name, int roofline, cli_rates *out);

/* The report lines naming the calibration (or saying there is none), for
 * rates applied to the row keyed gpu_key. */
void cli_rates_report(report *r, const cli_rates *c, const char *gpu_key);

#endif
