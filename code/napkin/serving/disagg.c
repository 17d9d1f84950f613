#include "disagg.h"

#include "memory.h"
#include "pricing.h"

#include <math.h>
#include <stdio.h>

double disagg_prefill_rate(double p, int prefill_gpus, int tp)
{
    return (double)(prefill_gpus / tp) / p;
}

double disagg_decode_rate(double d, int concurrency, int output, int decode_gpus, int tp)
{
    /* a request holds a decode slot for its output - 1 steps */
    return output > 1 ? (double)(decode_gpus / tp) * concurrency / ((output - 1) * d) : INFINITY;
}

//> disagg_estimate
int disagg_estimate(const disagg_setup *s, disagg_result *out, char *err, size_t errlen)
{
    const request_setup *b = &s->base;
    if (b->tp < 1 || s->prefill_gpus < b->tp || s->decode_gpus < b->tp || s->prefill_gpus % b->tp != 0 ||
        s->decode_gpus % b->tp != 0) {
        snprintf(err, errlen, "the prefill and decode pools must each be a positive multiple of tp %d (got %d and %d)",
                 b->tp, s->prefill_gpus, s->decode_gpus);
        return -1;
    }
    if (!(s->kv_link_bw > 0) || !(s->kv_link_latency >= 0) || (b->pp > 1)) {
        snprintf(err, errlen, "the KV link needs a bandwidth above 0 and a latency not negative; no pipeline stages");
        return -1;
    }
    request_setup r = *b;
    r.chunk = 0; /* a decode instance never prefills; a prefill instance runs whole prompts */
    request_estimate e;
    if (request_estimate_compute(&r, &e, err, errlen) != 0)
        return -1;
    disagg_result d = {0};
    d.prefill_time = e.prefill_time;
    d.decode_step = e.decode_step;
    /* every GPU of the prefill instance sends its share of the prompt's KV */
    double kv_per_gpu = kv_bytes_per_token_per_gpu(b->model, b->prec.kv, b->tp) * b->prompt;
    d.kv_bytes = kv_per_gpu * b->tp;
    op_cost kv_send = {.name = "kv_transfer",
                       .kind = OP_P2P,
                       .comm_bytes = kv_per_gpu,
                       .link_bw = s->kv_link_bw,
                       .link_latency = s->kv_link_latency};
    d.kv_time = price_op(&kv_send, b->gpu, 0, 1, NULL);
    d.ttft = d.prefill_time + d.kv_time;
    d.tpot = d.decode_step;
    d.prefill_rate = disagg_prefill_rate(d.prefill_time, s->prefill_gpus, b->tp);
    const double decode_span = (b->output - 1) * d.decode_step; /* seconds a request holds a decode slot */
    d.decode_rate = disagg_decode_rate(d.decode_step, b->concurrency, b->output, s->decode_gpus, b->tp);
    d.requests_per_s = d.prefill_rate < d.decode_rate ? d.prefill_rate : d.decode_rate;
    d.tokens_per_s = d.requests_per_s * b->output;
    d.balanced_ratio = b->output > 1 ? d.prefill_time * b->concurrency / decode_span : INFINITY;
    d.fits = e.fit.fits;
    d.max_concurrency = e.fit.max_batch;
    const double replicas = (double)(s->prefill_gpus + s->decode_gpus) / b->tp;
    d.agg_concurrency = b->concurrency;
    d.agg_ttft = e.ttft;
    d.agg_tpot = e.tpot;
    d.agg_requests_per_s = replicas * e.requests_per_s;
    d.agg_tokens_per_s = replicas * e.tokens_per_s;
    *out = d;
    return 0;
}
//< disagg_estimate

static int meets(const disagg_result *d, double ttft_max, double tpot_max)
{
    return d->fits && (ttft_max <= 0 || d->ttft <= ttft_max) && (tpot_max <= 0 || d->tpot <= tpot_max);
}

int disagg_search(const disagg_setup *s, int gpus, double ttft_max, double tpot_max, disagg_setup *best,
                  disagg_result *best_result, int *found, char *err, size_t errlen)
{
    *found = 0;
    const int tp = s->base.tp;
    if (tp < 1 || gpus < 2 * tp) {
        snprintf(err, errlen, "a disaggregated server needs at least 2 x tp = %d GPUs (got %d)", 2 * tp, gpus);
        return -1;
    }
    disagg_setup t = *s;
    t.base.concurrency = 1;
    t.prefill_gpus = tp;
    t.decode_gpus = tp;
    disagg_result r;
    if (disagg_estimate(&t, &r, err, errlen) != 0)
        return -1;
    const int cmax = r.max_concurrency;
    if (cmax < 1)
        return 0;
    /* d grows with C, so the largest C whose TPOT meets the target is found by
     * bisection; it serves the most on the decode side.  TTFT does not depend
     * on C or the split. */
    int lo = 0, hi = cmax;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        t.base.concurrency = mid;
        if (disagg_estimate(&t, &r, err, errlen) != 0)
            return -1;
        if (meets(&r, ttft_max, tpot_max))
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == 0)
        return 0;
    t.base.concurrency = lo;
    for (int p = tp; p <= gpus - tp; p += tp) {
        t.prefill_gpus = p;
        t.decode_gpus = (gpus - p) / tp * tp;
        if (disagg_estimate(&t, &r, err, errlen) != 0)
            return -1;
        if (meets(&r, ttft_max, tpot_max) && (!*found || r.requests_per_s > best_result->requests_per_s)) {
            *best = t;
            *best_result = r;
            *found = 1;
        }
    }
    if (!*found)
        return 0;
    /* the aggregated server under the same targets, on the same GPUs */
    request_setup a = s->base;
    a.chunk = 0;
    int c = request_best_concurrency(&a, ttft_max, tpot_max, err, errlen);
    if (c < 0)
        return -1;
    best_result->agg_concurrency = c;
    best_result->agg_ttft = best_result->agg_tpot = best_result->agg_requests_per_s = best_result->agg_tokens_per_s = NAN;
    if (c > 0) {
        request_estimate e;
        a.concurrency = c;
        if (request_estimate_compute(&a, &e, err, errlen) != 0)
            return -1;
        const double replicas = (double)(gpus / tp);
        best_result->agg_ttft = e.ttft;
        best_result->agg_tpot = e.tpot;
        best_result->agg_requests_per_s = replicas * e.requests_per_s;
        best_result->agg_tokens_per_s = replicas * e.tokens_per_s;
    }
    return 0;
}

//> disagg_for_rate
int disagg_for_rate(const disagg_setup *s, double rate, int *c, disagg_result *out, char *err, size_t errlen)
{
    if (!(rate > 0) || !isfinite(rate)) {
        snprintf(err, errlen, "the request rate must be a finite number > 0");
        return -1;
    }
    disagg_setup t = *s;
    disagg_result x;
    t.base.concurrency = 1;
    if (disagg_estimate(&t, &x, err, errlen) != 0)
        return -1;
    int hi = x.max_concurrency;
    *c = 0;
    if (hi < 1) {
        *out = x;
        return 0;
    }
    t.base.concurrency = hi;
    if (disagg_estimate(&t, &x, err, errlen) != 0)
        return -1;
    if (x.requests_per_s < rate) { /* a pool falls short even at the fullest decode batch */
        *out = x;
        return 0;
    }
    int lo = 0; /* requests/s at lo < rate <= at hi */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        t.base.concurrency = mid;
        if (disagg_estimate(&t, &x, err, errlen) != 0)
            return -1;
        if (x.requests_per_s >= rate)
            hi = mid;
        else
            lo = mid;
    }
    t.base.concurrency = hi;
    if (disagg_estimate(&t, &x, err, errlen) != 0)
        return -1;
    *c = hi;
    /* the aggregated server: each of its replicas serves an equal share of the rate */
    const double replicas = (double)(s->prefill_gpus + s->decode_gpus) / s->base.tp;
    request_setup a = s->base;
    int ca = request_concurrency_for_rate(&a, rate / replicas, err, errlen);
    if (ca < 0)
        return -1;
    x.agg_concurrency = ca;
    x.agg_ttft = x.agg_tpot = x.agg_requests_per_s = x.agg_tokens_per_s = NAN;
    if (ca > 0) {
        request_estimate e;
        a.concurrency = ca;
        if (request_estimate_compute(&a, &e, err, errlen) != 0)
            return -1;
        x.agg_ttft = e.ttft;
        x.agg_tpot = e.tpot;
        x.agg_requests_per_s = replicas * e.requests_per_s;
        x.agg_tokens_per_s = replicas * e.tokens_per_s;
    }
    *out = x;
    return 0;
}
//< disagg_for_rate
