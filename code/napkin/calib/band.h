/* The measured error band of a calibrated answer: where the measured value
 * of held-out serving runs like the question fell, relative to what the
 * model answered for them.
 *
 * The residuals are validate.h's serving_residuals (the model at each run's
 * engine calibration against code/specs/measured/serving_runs.tsv, embedded
 * in the library), computed at first use, so a change to the model moves the
 * bands by itself.  Only the held-out half counts (split.h).
 *
 * A run's relative miss is measured / answered - 1 (the inverse view of
 * validate's predicted / measured - 1): "-6 % ... +9 %" says runs like this
 * one measured between 6 % under and 9 % over the answer.  The band is the
 * 10th to the 90th percentile of those misses (linear interpolation between
 * order statistics, numpy's default), so four runs in five fall inside it.
 *
 * Regimes (what "like this one" means), chosen so most hold enough
 * held-out runs to give quantiles:
 *   engine        the calibration's backend (trtllm, vllm, sglang); a
 *                 measured set of one's own, or a GPU without published
 *                 runs, has no runs like it;
 *   model class   dense models by parameters: small (< 20 B), mid
 *                 (20-50 B), large (> 50 B); MoE or latent attention: none
 *                 measured;
 *   concurrency   1-16, 17-64, 65 and more;
 *   op mix        prompt-heavy (prompt >= 8 x output) or output-heavy
 *                 (the rest: decode weighs more);
 * A regime with fewer than BAND_MIN_RUNS held-out priced runs gives no band
 * and says so. */
#ifndef NAPKIN_BAND_H
#define NAPKIN_BAND_H

#include "specs.h"
#include "validate.h"

#include <stddef.h>

#define BAND_LO_QUANTILE 0.10
#define BAND_HI_QUANTILE 0.90
#define BAND_MIN_RUNS 8
/* prompt >= BAND_PROMPT_HEAVY x output: a prompt-heavy mix */
#define BAND_PROMPT_HEAVY 8

enum { BAND_MODEL_SMALL, BAND_MODEL_MID, BAND_MODEL_LARGE, BAND_MODEL_CLASSES };
enum { BAND_CONC_LOW, BAND_CONC_MID, BAND_CONC_HIGH, BAND_CONC_RANGES };
enum { BAND_MIX_PROMPT, BAND_MIX_OUTPUT, BAND_MIXES };

typedef struct {
    char engine[16];
    int model_class, concurrency_range, op_mix;
} band_regime;

/* The quantity a band is for: what the serving runs measure of it. */
typedef enum {
    BAND_TPOT,        /* time per output token (and the decode step it is) */
    BAND_TTFT_CLOSED, /* time to first token in the busy closed loop */
    BAND_E2E,         /* a request's latency, TTFT + (output - 1) TPOT */
    BAND_TTFT_BENCH,  /* the closed loop's TTFT with the engine's per-request overhead (serve --engine) */
    BAND_E2E_BENCH,   /* the latency with that overhead */
    BAND_TPOT_PLAIN,  /* the three as serve answers without --engine: no engine schedule, no overhead */
    BAND_TTFT_PLAIN,
    BAND_E2E_PLAIN,
} band_quantity;

typedef struct {
    int have;      /* 1: lo, hi, n hold the band; 0: why says why there is none */
    double lo, hi; /* relative: measured / answered - 1 at the two quantiles */
    int n;         /* held-out runs behind it */
    char why[192];
} error_band;

/* The q-quantile (0..1) of n sorted values, linear between order
 * statistics: position q (n - 1).  NAN for n = 0. */
double band_quantile(const double *sorted, int n, double q);

/* The band of n relative misses (measured / answered - 1; NAN ones are
 * skipped); have = 0 below BAND_MIN_RUNS finite ones. */
error_band band_of_misses(const double *miss, int n);

/* The regime of a question: engine (NULL: none), model, concurrency,
 * prompt and output tokens (output 0: a decode step alone, judged with the
 * output-heavy runs).  Returns 1, or 0 with why filled (no run is like it). */
int band_regime_of(const char *engine, const model_spec *m, int concurrency, int prompt, int output,
                   band_regime *out, char *why, size_t whylen);

/* "trtllm, small dense, concurrency 17-64, prompt-heavy" */
void band_regime_name(const band_regime *q, char *buf, size_t n);

/* The engine a calibration names ("published:h100_sxm/trtllm" -> "trtllm"),
 * into buf; 0 when it names none (a measured set). */
int band_engine_of_calibration(const char *calibration, char *buf, size_t n);

/* The held-out priced runs, each with its regime. */
typedef struct {
    serving_residual *runs;
    band_regime *regime;
    int n;
} band_runs;

/* From runs text (serving_runs.tsv's columns; name for messages), or the
 * library's embedded copy (band_runs_builtin).  0, or -1 with a message. */
int band_runs_parse(const char *text, const char *name, const gpu_table *gpus, const model_table *models,
                    band_runs *out, char *err, size_t errlen);
int band_runs_builtin(const gpu_table *gpus, const model_table *models, band_runs *out, char *err, size_t errlen);
void band_runs_free(band_runs *b);

/* The band of `what` for regime q over b.  inverse: the quantity goes as
 * 1 / `what` (a throughput over a latency). */
error_band band_for(const band_runs *b, const band_regime *q, band_quantity what, int inverse);

#endif
