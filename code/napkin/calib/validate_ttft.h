/* Time to first token against the measured serving runs, held out.
 *
 * Each run of code/specs/measured/serving_runs.tsv is priced by napkin
 * serve's closed loop (request.h, closed_loop.h) at its engine's kernel
 * calibration and default token budget.  The one parameter fitted on
 * serving runs is each engine's per-request overhead h: fitted on the runs
 * whose id hashes even (run_is_held_out), as the weighted median that
 * minimises the mean |relative error| (the TTFT is affine in h); every
 * error below is on the other half. */
#ifndef NAPKIN_VALIDATE_TTFT_H
#define NAPKIN_VALIDATE_TTFT_H

#include "specs.h"

#include <stddef.h>

#define TTFT_GROUPS_MAX 64

/* One (model, system, engine) group, on its held-out runs. */
typedef struct {
    char model[64], system[16], backend[16];
    int runs;      /* held-out runs of the group */
    int answered;  /* of those, the ones serve prices (a model row, one stage, fits memory) */
    int dense;     /* 1: a dense model */
    double tpot_abs, tpot_bias;          /* medians of |predicted / measured - 1| and of the signed error */
    double ttft_abs, ttft_bias;          /* calibrated, with the fitted overhead */
    double ttft_roof_abs, ttft_roof_bias; /* the roofline's, with the same overhead */
    char unanswered[96];                 /* why runs went unanswered ("" when none did) */
} ttft_group;

typedef struct {
    char engine[16];
    double overhead; /* seconds */
    int fitted_on;   /* runs of the fitting half */
} ttft_overhead;

typedef struct {
    ttft_group g[TTFT_GROUPS_MAX];
    int ng;
    ttft_overhead o[3];
    int no;
    int answered;                       /* held-out runs answered, all groups */
    double ttft_abs, ttft_bias, tpot_abs, ttft_roof_abs; /* medians over them */
    double ttft_abs_no_overhead;        /* the same with h = 0, to show what h does */
} ttft_validation;

/* Fit and judge.  Returns 0, or -1 with a message. */
int validate_ttft(const char *runs_path, const gpu_table *gpus, const model_table *models, ttft_validation *out,
                  char *err, size_t errlen);

#endif
