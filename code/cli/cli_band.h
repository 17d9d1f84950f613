/* The measured error band beside each calibrated row (band.h): the table
 * says "8.9 ms, runs like this one: -6 % ... +9 %, n = 177" or why no run
 * is like the question; tsv and json carry <row>_band_lo, <row>_band_hi
 * (relative, none where there is no band) and <row>_band_n.
 *
 * The held-out runs are priced once, when the first band is asked for, on
 * the library's own GPU and model tables (the runs name the book's rows,
 * whatever --specs says). */
#ifndef NAPKIN_CLI_BAND_H
#define NAPKIN_CLI_BAND_H

#include "band.h"
#include "cli_device.h"
#include "cli_report.h"

typedef struct {
    int have_regime;   /* 0: no run is like the question; why says so */
    band_regime q;
    char why[192];
    int loaded;        /* runs priced (or tried: why says what failed) */
    band_runs runs;
    int noted;         /* the report's note on what a band is, once */
} cli_band;

/* The question: the calibrated answer's device d, model m, concurrency (or
 * decode batch), prompt and output tokens (output 0: a decode step alone). */
void cli_band_open(cli_band *b, const device_setup *d, const model_spec *m, int concurrency, int prompt,
                   int output);

/* The band of the row `key` just added: `what` as the serving runs measure
 * it; inverse: the row goes as 1 / `what` (a rate). */
void cli_band_row(report *r, cli_band *b, const char *key, band_quantity what, int inverse);

/* A calibrated row no serving run measures (a prefill alone, an image
 * encoder): no band, and why. */
void cli_band_none(report *r, const char *key, const char *why);

void cli_band_close(cli_band *b);

#endif
