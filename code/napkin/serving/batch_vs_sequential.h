/* Serving N requests with the step model: one after another, or as one batch.
 *
 * A request has a prompt of `prompt` tokens and generates `output` tokens.
 * Its prefill is one step over the whole prompt (new_tokens = prompt,
 * context 0), whose last position yields the first output token; each of the
 * remaining output - 1 tokens is one decode step (new_tokens = 1) over a
 * context that grows by one token a step.  A batch runs the same steps with
 * batch = N, every sequence in lockstep (equal lengths, so no padding).
 * Step times are decoder_step_cost's roofline times on the GPU given: derate
 * its rates first to model measured ceilings rather than datasheet peaks. */
#ifndef NAPKIN_BATCH_VS_SEQUENTIAL_H
#define NAPKIN_BATCH_VS_SEQUENTIAL_H

#include "specs.h"
#include "transformer.h"

#include <stddef.h>

typedef struct {
    int requests; /* N >= 1 */
    int prompt;   /* tokens per prompt >= 1 */
    int output;   /* tokens generated per request >= 1 */
    int tp;       /* tensor-parallel degree */
    precision prec;
} serve_workload;

typedef struct {
    double prefill;      /* seconds in prefill steps */
    double decode;       /* seconds in decode steps */
    double total;        /* seconds until the last request is done */
    double mean_latency; /* seconds from start to a request's last token, averaged */
    double first_token;  /* seconds from start to a request's first token, averaged */
    double tokens_per_s; /* output tokens of all requests / total */
    long steps;          /* forward steps run */
} serve_result;

/* Prefill plus decode of `batch` sequences in lockstep: the time one batch
 * of the workload's shape takes (the requests field is ignored). */
int serve_batch(const model_spec *m, const gpu_spec *g, const serve_workload *w, int batch, serve_result *out,
                char *err, size_t errlen);
/* N requests one after another, each a batch of one. */
int serve_sequential(const model_spec *m, const gpu_spec *g, const serve_workload *w, serve_result *out,
                     char *err, size_t errlen);
/* N requests as one batch of N. */
int serve_one_batch(const model_spec *m, const gpu_spec *g, const serve_workload *w, serve_result *out,
                    char *err, size_t errlen);

/* times[n-1] = seconds to serve a batch of n, n = 1..max_batch: the service
 * times of a replica that runs batches to completion (queue.h). */
int serve_batch_times(const model_spec *m, const gpu_spec *g, const serve_workload *w, int max_batch,
                      double *times, char *err, size_t errlen);

#endif
