#include "disagg.h"

#include "memory.h"
#include "pricing.h"
#include "queue.h"

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

/* ---- Pools as deployed (disagg.h) ---- */

//> disagg_pool_request
int disagg_pool_request(const disagg_plan *p, const parallel_layout *l, int batch, const char *prefix,
                        request_setup *s, request_options *o, char *err, size_t errlen)
{
    const model_spec *m = p->base.model;
    const int mixture = m->experts > 1;
    *s = p->base;
    *o = p->opt;
    s->tp = l->tp;
    s->concurrency = batch;
    s->chunk = 0; /* a prefill worker runs whole prompts; a decode worker none */
    s->pp = 1;
    o->ep.ep = 0;
    o->layout = (parallel_layout){0};
    if (!mixture)
        return 0; /* a dense model's attention-dp ranks are independent tp replicas */
    if (l->tp < 1 || l->attention_dp < 1 || l->moe_tp < 1 || l->moe_ep < 1 ||
        l->moe_tp * l->moe_ep != l->tp * l->attention_dp) {
        snprintf(err, errlen, "--%smoe-tp %d x --%smoe-ep %d must be --%stp %d x --%sattention-dp %d", prefix,
                 l->moe_tp, prefix, l->moe_ep, prefix, l->tp, prefix, l->attention_dp);
        return -1;
    }
    /* any layout of a mixture, as request.h prices it: one attention rank of the replica */
    o->layout = *l;
    o->ep.ep = l->moe_ep > 1 ? l->moe_ep : 0;
    return 0;
}
//< disagg_pool_request

int disagg_kv_link(const gpu_spec *g, int gpus, int gpus_per_node, double net_bw, double *bw)
{
    if (gpus <= gpus_per_node && g->link_bw > 0) {
        *bw = g->link_bw;
        return 1;
    }
    *bw = net_bw;
    return 0;
}

//> disagg_prefill_wait
double disagg_prefill_wait(double rate, double prefill_capacity, int slots, double p_b, double decode_span,
                           int concurrency, double kv_time)
{
    queue_formula q;
    if (rate < prefill_capacity && mdc_formula(rate, p_b, slots, &q) == 0)
        return q.wait;
    /* saturated: every request not decoding waits for the prefill pool, N / X = TTFT + (o - 1) d */
    double w = concurrency / rate - decode_span - p_b - kv_time;
    return w > 0 ? w : 0;
}
//< disagg_prefill_wait

static int pool_gpus(const disagg_pool *q)
{
    return q->workers * layout_gpus(&q->layout);
}

/* Both pools priced, the wait left for the caller: rate is X, or the rate asked for. */
static int pools_price(const disagg_plan *p, disagg_pools_result *out, char *err, size_t errlen)
{
    if (p->prefill.workers < 1 || p->decode.workers < 1 || p->prefill.batch < 1 || p->decode.batch < 1) {
        snprintf(err, errlen, "each pool needs at least one worker, and batches of at least 1");
        return -1;
    }
    if (p->base.output < 1 || !(p->kv_link_latency >= 0)) {
        snprintf(err, errlen, "the KV link's latency must not be negative");
        return -1;
    }
    request_setup ps, ds;
    request_options po, dopt;
    if (disagg_pool_request(p, &p->prefill.layout, p->prefill.batch, "prefill-", &ps, &po, err, errlen) ||
        disagg_pool_request(p, &p->decode.layout, p->decode.batch, "decode-", &ds, &dopt, err, errlen))
        return -1;
    disagg_pools_result r = {0};
    if (request_prefill_step(&ps, &po, p->prefill.batch, &r.prefill_step, err, errlen))
        return -1;
    request_estimate pe, de;
    ps.output = 1; /* a prefill worker holds the prompts it prefills, not their answers */
    if (request_estimate_with(&ps, &po, &pe, err, errlen) || request_estimate_with(&ds, &dopt, &de, err, errlen))
        return -1;
    r.decode_step = de.decode_step;
    r.fits = pe.fit.fits && de.fit.fits;
    r.max_batch = de.fit.max_batch;
    r.gpus = pool_gpus(&p->prefill) + pool_gpus(&p->decode);
    /* one copy of the prompt's cache, sent by the prefill rank's tp GPUs at once */
    const int tp = p->prefill.layout.tp;
    r.kv_bytes = kv_bytes_per_token(p->base.model, p->base.prec.kv) * p->base.prompt;
    r.kv_over_nvlink = 0;
    r.kv_link_bw = p->kv_link_bw;
    if (!(r.kv_link_bw > 0))
        r.kv_over_nvlink = disagg_kv_link(p->base.gpu, r.gpus, p->opt.ep.gpus_per_node, p->opt.ep.net_bw,
                                          &r.kv_link_bw);
    if (!(r.kv_link_bw > 0)) {
        snprintf(err, errlen, "the KV hand-off needs a link bandwidth above 0");
        return -1;
    }
    op_cost kv_send = {.name = "kv_transfer", .kind = OP_P2P, .comm_bytes = r.kv_bytes / tp,
                       .link_bw = r.kv_link_bw, .link_latency = p->kv_link_latency};
    r.kv_time = price_op(&kv_send, p->base.gpu, 0, 1, NULL);
    const int pranks = p->prefill.workers * p->prefill.layout.attention_dp;
    const int dranks = p->decode.workers * p->decode.layout.attention_dp;
    r.prefill_rate = disagg_prefill_rate(r.prefill_step, pranks * p->prefill.batch, 1);
    r.decode_rate = disagg_decode_rate(r.decode_step, p->decode.batch, p->base.output, dranks, 1);
    r.concurrency = p->decode.batch * dranks;
    r.tpot = r.decode_step;
    *out = r;
    return 0;
}

/* TTFT at arrival rate `rate` and the throughput that follows. */
static void pools_finish(const disagg_plan *p, double rate, disagg_pools_result *r)
{
    const int slots = p->prefill.workers * p->prefill.layout.attention_dp * p->prefill.batch;
    const double span = p->base.output > 1 ? (p->base.output - 1) * r->decode_step : 0;
    r->requests_per_s = rate;
    r->prefill_rho = rate / r->prefill_rate;
    r->prefill_wait = disagg_prefill_wait(rate, r->prefill_rate, slots, r->prefill_step, span, r->concurrency,
                                          r->kv_time);
    r->ttft = r->prefill_wait + r->prefill_step + r->kv_time;
    r->tokens_per_s = rate * p->base.output;
    r->tokens_per_s_per_gpu = r->tokens_per_s / r->gpus;
}

int disagg_pools_estimate(const disagg_plan *p, disagg_pools_result *out, char *err, size_t errlen)
{
    if (pools_price(p, out, err, errlen))
        return -1;
    pools_finish(p, fmin(out->prefill_rate, out->decode_rate), out);
    return 0;
}

int disagg_pools_for_rate(const disagg_plan *p, double rate, int *batch, disagg_pools_result *out, char *err,
                          size_t errlen)
{
    if (!(rate > 0) || !isfinite(rate)) {
        snprintf(err, errlen, "the request rate must be a finite number > 0");
        return -1;
    }
    disagg_plan t = *p;
    t.decode.batch = 1;
    if (pools_price(&t, out, err, errlen))
        return -1;
    int hi = out->max_batch, lo = 0; /* requests/s at lo < rate <= at hi */
    *batch = 0;
    if (hi < 1)
        return 0;
    t.decode.batch = hi;
    if (pools_price(&t, out, err, errlen))
        return -1;
    if (fmin(out->prefill_rate, out->decode_rate) < rate) {
        pools_finish(&t, fmin(out->prefill_rate, out->decode_rate), out);
        return 0;
    }
    while (hi - lo > 1) {
        t.decode.batch = lo + (hi - lo) / 2;
        if (pools_price(&t, out, err, errlen))
            return -1;
        if (out->decode_rate >= rate)
            hi = t.decode.batch;
        else
            lo = t.decode.batch;
    }
    t.decode.batch = hi;
    if (pools_price(&t, out, err, errlen))
        return -1;
    pools_finish(&t, rate, out);
    *batch = hi;
    return 0;
}

int disagg_candidate_layouts(const model_spec *m, int gpus, parallel_layout *out, int max)
{
    int n = 0;
    for (int t = 1; t <= gpus && n < max; t *= 2)
        if (m->heads % t == 0)
            out[n++] = (parallel_layout){t, 1, t, 1};
    for (int g = 2; m->experts > 1 && g <= gpus; g *= 2)
        for (int t = 1; t <= g && m->experts % g == 0 && n < max; t *= 2)
            if (m->heads % t == 0)
                out[n++] = (parallel_layout){t, g / t, 1, g};
    return n;
}

static int pools_meet(const disagg_pools_result *r, double ttft_max, double tpot_max)
{
    return r->fits && (ttft_max <= 0 || r->ttft <= ttft_max) && (tpot_max <= 0 || r->tpot <= tpot_max);
}

/* The largest decode batch of plan t meeting the targets: TPOT by bisection
 * (d grows with C), then TTFT by bisection below it (the arrival rate, and
 * so the prefill wait, grows with C).  0 when none does. */
static int best_decode_batch(disagg_plan *t, double ttft_max, double tpot_max, disagg_pools_result *r, char *err,
                             size_t errlen)
{
    t->decode.batch = 1;
    if (disagg_pools_estimate(t, r, err, errlen))
        return -1;
    int cap = r->max_batch;
    for (int pass = 0; pass < 2; pass++) {
        int lo = 0, hi = cap;
        while (lo < hi) {
            t->decode.batch = lo + (hi - lo + 1) / 2;
            if (disagg_pools_estimate(t, r, err, errlen))
                return -1;
            int ok = r->fits && (pass == 0 ? (tpot_max <= 0 || r->tpot <= tpot_max)
                                           : (ttft_max <= 0 || r->ttft <= ttft_max));
            if (ok)
                lo = t->decode.batch;
            else
                hi = t->decode.batch - 1;
        }
        cap = lo;
    }
    if (cap < 1)
        return 0;
    t->decode.batch = cap;
    if (disagg_pools_estimate(t, r, err, errlen))
        return -1;
    return pools_meet(r, ttft_max, tpot_max) ? cap : 0;
}

//> disagg_pools_search
int disagg_pools_search(const disagg_plan *p, int gpus, double ttft_max, double tpot_max, disagg_plan *best,
                        disagg_pools_result *best_result, int *found, char *err, size_t errlen)
{
    parallel_layout cand[64];
    if (gpus > DISAGG_SEARCH_MAX_GPUS) {
        snprintf(err, errlen, "--gpus %d: the disaggregated search tries every pair of pool layouts and worker "
                              "counts, up to %d GPUs", gpus, DISAGG_SEARCH_MAX_GPUS);
        return -1;
    }
    const int n = disagg_candidate_layouts(p->base.model, gpus, cand, 64);
    *found = 0;
    disagg_plan t = *p;
    if (t.prefill.batch < 1)
        t.prefill.batch = 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const int gp = layout_gpus(&cand[i]), gd = layout_gpus(&cand[j]);
            if (gp + gd > gpus)
                continue;
            /* a pair whose pools do not hold one prompt or one sequence never will, at any worker count */
            t.prefill.layout = cand[i];
            t.decode.layout = cand[j];
            t.prefill.workers = t.decode.workers = t.decode.batch = 1;
            disagg_pools_result probe;
            if (disagg_pools_estimate(&t, &probe, err, errlen))
                return -1;
            if (!probe.fits)
                continue;
            for (int wp = 1; wp * gp + gd <= gpus; wp++)
                for (int wd = 1; wp * gp + wd * gd <= gpus; wd++) {
                    t.prefill.layout = cand[i];
                    t.decode.layout = cand[j];
                    t.prefill.workers = wp;
                    t.decode.workers = wd;
                    disagg_pools_result r;
                    int c = best_decode_batch(&t, ttft_max, tpot_max, &r, err, errlen);
                    if (c < 0)
                        return -1;
                    if (c > 0 && (!*found || r.tokens_per_s_per_gpu > best_result->tokens_per_s_per_gpu)) {
                        *best = t;
                        *best_result = r;
                        *found = 1;
                    }
                }
        }
    return 0;
}
//< disagg_pools_search

int disagg_aggregated_best(const disagg_plan *p, int gpus, double ttft_max, double tpot_max, parallel_layout *layout,
                           int *concurrency, request_estimate *e, double *tokens_per_s_per_gpu, char *err,
                           size_t errlen)
{
    parallel_layout cand[64];
    const int n = disagg_candidate_layouts(p->base.model, gpus, cand, 64);
    *concurrency = 0;
    *tokens_per_s_per_gpu = 0;
    for (int i = 0; i < n; i++) {
        request_setup s;
        request_options o;
        if (disagg_pool_request(p, &cand[i], 1, "", &s, &o, err, errlen))
            return -1;
        int c = request_best_concurrency_with(&s, &o, ttft_max, tpot_max, err, errlen);
        if (c < 0)
            return -1;
        if (c == 0)
            continue;
        request_estimate x;
        s.concurrency = c;
        if (request_estimate_with(&s, &o, &x, err, errlen))
            return -1;
        /* an attention rank's throughput over its tp GPUs: the same per GPU for every replica */
        const double per_gpu = x.tokens_per_s / cand[i].tp;
        if (per_gpu > *tokens_per_s_per_gpu) {
            *layout = cand[i];
            *concurrency = c;
            *e = x;
            *tokens_per_s_per_gpu = per_gpu;
        }
    }
    return 0;
}
