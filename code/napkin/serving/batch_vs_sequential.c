#include "batch_vs_sequential.h"

#include <stdio.h>

static int check_workload(const serve_workload *w, int batch, char *err, size_t errlen)
{
    if (w->prompt < 1 || w->output < 1) {
        snprintf(err, errlen, "prompt and output must be at least 1 token (got %d, %d)", w->prompt, w->output);
        return -1;
    }
    if (batch < 1) {
        snprintf(err, errlen, "batch must be at least 1 (got %d)", batch);
        return -1;
    }
    return 0;
}

//> serve_batch
int serve_batch(const model_spec *m, const gpu_spec *g, const serve_workload *w, int batch,
                serve_result *out, char *err, size_t errlen)
{
    serve_result r = {0};
    *out = r;
    if (check_workload(w, batch, err, errlen))
        return -1;
    step_cost c;
    /* Prefill: the whole prompt in one step; it yields the first token. */
    step_shape prefill = prefill_shape(batch, 0, w->prompt, w->tp, w->prec);
    if (decoder_step_cost(m, g, &prefill, &c, err, errlen))
        return -1;
    r.prefill = c.time;
    r.steps = 1;
    /* Decode: one token per step; the cache holds the prompt and the tokens
     * generated before this one. */
    for (int k = 1; k < w->output; k++) {
        step_shape d = decode_shape(batch, w->prompt + k - 1, w->tp, w->prec);
        if (decoder_step_cost(m, g, &d, &c, err, errlen))
            return -1;
        r.decode += c.time;
        r.steps++;
    }
    r.total = r.prefill + r.decode;
    r.mean_latency = r.total;
    r.first_token = r.prefill;
    r.tokens_per_s = (double)batch * w->output / r.total;
    *out = r;
    return 0;
}
//< serve_batch

//> serve_sequential
int serve_sequential(const model_spec *m, const gpu_spec *g, const serve_workload *w,
                     serve_result *out, char *err, size_t errlen)
{
    serve_result one;
    if (check_workload(w, w->requests, err, errlen) ||
        serve_batch(m, g, w, 1, &one, err, errlen)) {
        serve_result zero = {0};
        *out = zero;
        return -1;
    }
    double n = w->requests;
    serve_result r = one;
    r.prefill = n * one.prefill;
    r.decode = n * one.decode;
    r.total = n * one.total;
    /* Request k (1-based) finishes at k * one.total: the mean is (n+1)/2 of it. */
    r.mean_latency = (n + 1) / 2 * one.total;
    r.first_token = (n - 1) / 2 * one.total + one.prefill;
    r.tokens_per_s = n * w->output / r.total;
    r.steps = w->requests * one.steps;
    *out = r;
    return 0;
}
//< serve_sequential

int serve_one_batch(const model_spec *m, const gpu_spec *g, const serve_workload *w, serve_result *out,
                    char *err, size_t errlen)
{
    return serve_batch(m, g, w, w->requests, out, err, errlen);
}

int serve_batch_times(const model_spec *m, const gpu_spec *g, const serve_workload *w, int max_batch,
                      double *times, char *err, size_t errlen)
{
    if (max_batch < 1) {
        snprintf(err, errlen, "max batch must be at least 1 (got %d)", max_batch);
        return -1;
    }
    for (int n = 1; n <= max_batch; n++) {
        serve_result r;
        if (serve_batch(m, g, w, n, &r, err, errlen))
            return -1;
        times[n - 1] = r.total;
    }
    return 0;
}
