#include "cli_band.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void cli_band_open(cli_band *b, const device_setup *d, const model_spec *m, int concurrency, int prompt,
                   int output)
{
    memset(b, 0, sizeof *b);
    char engine[32];
    int named = d->rates.have && band_engine_of_calibration(d->rates.model.name, engine, sizeof engine);
    b->have_regime = band_regime_of(named ? engine : NULL, m, concurrency, prompt, output, &b->q, b->why,
                                    sizeof b->why);
}

/* Price the held-out runs once. */
static void load(cli_band *b)
{
    if (b->loaded)
        return;
    b->loaded = 1;
    gpu_table g;
    model_table m;
    char err[512];
    if (gpu_table_builtin(&g, err, sizeof err) != 0)
        goto fail;
    if (model_table_builtin(&m, err, sizeof err) != 0) {
        gpu_table_free(&g);
        goto fail;
    }
    int rc = band_runs_builtin(&g, &m, &b->runs, err, sizeof err);
    gpu_table_free(&g);
    model_table_free(&m);
    if (rc == 0)
        return;
fail:
    b->have_regime = 0;
    snprintf(b->why, sizeof b->why, "no band: the measured runs could not be read (%.140s)", err);
}

static void machine_values(report *r, const char *key, const error_band *e)
{
    char k[128];
    snprintf(k, sizeof k, "%s_band_lo", key);
    report_num_machine(r, k, U_REAL, e->have ? e->lo : NAN);
    snprintf(k, sizeof k, "%s_band_hi", key);
    report_num_machine(r, k, U_REAL, e->have ? e->hi : NAN);
    snprintf(k, sizeof k, "%s_band_n", key);
    report_num_machine(r, k, U_INT, e->n);
}

void cli_band_row(report *r, cli_band *b, const char *key, band_quantity what, int inverse)
{
    error_band e = {0, NAN, NAN, 0, ""};
    if (b->have_regime)
        load(b);
    if (b->have_regime)
        e = band_for(&b->runs, &b->q, what, inverse);
    else
        snprintf(e.why, sizeof e.why, "%s", b->why);
    char aside[256];
    if (e.have)
        snprintf(aside, sizeof aside, "runs like this one: %+.0f %% ... %+.0f %%, n = %d", 100 * e.lo, 100 * e.hi,
                 e.n);
    else
        snprintf(aside, sizeof aside, "%s", e.why);
    report_aside(r, aside);
    machine_values(r, key, &e);
    if (!b->noted && b->have_regime) {
        char name[160];
        band_regime_name(&b->q, name, sizeof name);
        report_note(r, "runs like this one: held-out measured serving runs (%s); the band is where their "
                       "measured value fell against the calibrated answer, %.0fth to %.0fth percentile",
                    name, 100 * BAND_LO_QUANTILE, 100 * BAND_HI_QUANTILE);
        b->noted = 1;
    }
}

void cli_band_none(report *r, const char *key, const char *why)
{
    error_band e = {0, NAN, NAN, 0, ""};
    snprintf(e.why, sizeof e.why, "%s", why);
    report_aside(r, why);
    machine_values(r, key, &e);
}

void cli_band_close(cli_band *b)
{
    band_runs_free(&b->runs);
}
