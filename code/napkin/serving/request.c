/* One request end to end: see request.h for the closed-loop model. */
#include "request.h"

#include "pipeline.h"
#include "pricing.h"

#include <math.h>
#include <stdio.h>

static int check_setup(const request_setup *s, char *err, size_t errlen)
{
    const char *why = NULL;
    if (!s->model || !s->gpu)
        why = "a request needs a model and a GPU";
    else if (s->prompt < 1 || s->output < 1)
        why = "prompt and output must be at least one token";
    else if (s->concurrency < 1)
        why = "concurrency must be at least 1";
    else if (s->chunk < 0)
        why = "the prefill chunk must not be negative";
    else if (!(s->price_per_gpu_hour >= 0) || !isfinite(s->price_per_gpu_hour))
        why = "the price must be a finite number >= 0";
    else if (s->pp < 0)
        why = "the pipeline degree must not be negative";
    else if (s->pp > 1 && s->chunk > 0 && s->chunk < s->prompt)
        why = "chunked prefill with pipeline parallelism is not modelled: give one or the other";
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

parallel_layout request_layout(const request_setup *s, const request_options *o)
{
    if (o && o->layout.tp > 0)
        return o->layout;
    const int ep = o && o->ep.ep > 1 ? o->ep.ep : 1;
    if (ep > 1)
        return (parallel_layout){s->tp, s->tp > 0 ? ep / s->tp : 0, 1, ep};
    return (parallel_layout){s->tp, 1, s->tp, 1};
}

/* A layout beyond one tensor-parallel group: attention ranks or experts split. */
static int layout_split(const parallel_layout *l)
{
    return l->attention_dp > 1 || l->moe_ep > 1;
}

/* The all-to-all's links for the layout: the options' when given. */
static ep_layout layout_links(const request_setup *s, const request_options *o, const parallel_layout *l)
{
    ep_layout links = o && o->ep.gpus_per_node > 0 ? o->ep : ep_links_default(l->moe_ep, s->prec, s->gpu);
    if (o)
        links.routing_skew = o->ep.routing_skew;
    links.ep = l->moe_ep;
    return links;
}

static int stages(const request_setup *s)
{
    return s->pp > 1 ? s->pp : 1;
}

/* One step's cost; with a pipeline, c is the slowest stage's and c->time
 * what the step takes end to end: one prompt's trip through the stages (a
 * prefill, one microbatch), or the steady-state cycle of min(batch, pp)
 * microbatches (a decode step, every sequence advanced once). */
static int step(const request_setup *s, const request_options *o, step_shape sh, step_cost *c, char *err,
                size_t errlen)
{
    const parallel_layout l = request_layout(s, o);
    if (layout_split(&l)) { /* one GPU of the replica, its attention rank's shape */
        const ep_layout links = layout_links(s, o, &l);
        return layout_decoder_step_cost(s->model, s->gpu, &sh, &l, &links, c, err, errlen);
    }
    sh.routing_skew = o ? o->ep.routing_skew : 0;
    if (stages(s) == 1)
        return decoder_step_cost(s->model, s->gpu, &sh, c, err, errlen);
    int decode = sh.new_tokens == 1;
    int micro = decode ? (sh.batch < s->pp ? sh.batch : s->pp) : 1;
    pipeline_cost pc;
    if (pipeline_step_cost(s->model, s->gpu, &sh, s->pp, micro, &pc, err, errlen) != 0)
        return -1;
    *c = pc.stage;
    c->time = decode ? pc.cycle_time : pc.latency;
    return 0;
}

static int mtp_on(const request_options *o)
{
    return o && o->mtp_steps > 0;
}

/* One decode step's time at a context; with multi-token prediction, the
 * round's time per output token (mtp.h), the round itself into *round. */
static int decode_time(const request_setup *s, const request_options *o, int batch, int context, double *t,
                       mtp_round *round, char *err, size_t errlen)
{
    step_shape sh = decode_shape(batch, context, s->tp, s->prec);
    step_cost c;
    if (!mtp_on(o)) {
        if (step(s, o, sh, &c, err, errlen))
            return -1;
        *t = c.time;
        return 0;
    }
    step_cost pass;
    sh.routing_skew = o->ep.routing_skew;
    const parallel_layout l = request_layout(s, o);
    if (step(s, o, mtp_verify_shape(&sh, o->mtp_steps), &c, err, errlen))
        return -1;
    if (layout_split(&l)) { /* the module's layer split as the main model's are */
        const ep_layout links = layout_links(s, o, &l);
        if (layout_mtp_pass_cost(s->model, s->gpu, &sh, &l, &links, &pass, err, errlen))
            return -1;
    } else if (mtp_pass_cost(s->model, s->gpu, &sh, &pass, err, errlen))
        return -1;
    *round = mtp_round_of(c.time, pass.time, o->mtp_steps, o->mtp_accept);
    *t = round->per_token;
    return 0;
}

/* Mean decode step of `batch` sequences over the contexts prompt .. prompt +
 * output - 2: the step is linear in the context, so the step at the mean
 * context is the mean step (one evaluation instead of output - 1).  With
 * multi-token prediction the mean round into *round. */
static int mean_decode_step(const request_setup *s, const request_options *o, int batch, double *t,
                            mtp_round *round, char *err, size_t errlen)
{
    if (s->output < 2) {
        *t = 0;
        return 0;
    }
    double a, b;
    mtp_round ra = {0}, rb = {0};
    if (decode_time(s, o, batch, s->prompt, &a, &ra, err, errlen) ||
        decode_time(s, o, batch, s->prompt + s->output - 2, &b, &rb, err, errlen))
        return -1;
    *t = 0.5 * (a + b);
    if (mtp_on(o)) /* the parts at the mean context; E[N] is the same at both */
        *round = mtp_round_of(0.5 * (ra.verify + rb.verify), 0.5 * (ra.pass + rb.pass), o->mtp_steps,
                              o->mtp_accept);
    return 0;
}

/* The weights a step of `batch` decodes reads, priced as one HBM read: a
 * mixture's decode reads only the experts its tokens route to (and with a
 * layout, one GPU's share), which the priced step's weight bytes count. */
static int decode_weight_read(const request_setup *s, const request_options *o, int batch, double *t, char *err,
                              size_t errlen)
{
    step_cost c;
    if (step(s, o, decode_shape(batch, s->prompt, s->tp, s->prec), &c, err, errlen))
        return -1;
    op_cost read = {.name = "weight_read", .kind = OP_HBM_READ, .weight_bytes = c.weight_bytes};
    *t = price_op(&read, s->gpu, 0, 1, NULL);
    return 0;
}

//> closed_loop_ttft
/* A request that arrives in a busy closed loop waits, on average, for half
 * of the decode step in flight, then for the prefills queued ahead of its
 * own: the prefills form a queue served at p each, busy rho = C p / e2e of
 * the time, and with arrivals spread like a Poisson stream its mean wait is
 * the M/D/1 one, rho p / (2 (1 - rho)) (Pollaczek-Khinchine). */
double closed_loop_ttft(double p, double d, double rho)
{
    double queue = rho < 1 ? rho * p / (2 * (1 - rho)) : INFINITY;
    return d / 2 + queue + p;
}
//< closed_loop_ttft

int request_prefill_step(const request_setup *s, const request_options *o, int batch, double *time, char *err,
                         size_t errlen)
{
    if (check_setup(s, err, errlen))
        return -1;
    if (batch < 1) {
        snprintf(err, errlen, "a prefill step takes at least one prompt");
        return -1;
    }
    step_shape pf = prefill_shape(batch, 0, s->prompt, s->tp, s->prec);
    pf.logits_last = !s->all_logits;
    step_cost c;
    if (step(s, o, pf, &c, err, errlen))
        return -1;
    *time = c.time;
    return 0;
}

double closed_loop_e2e(double p, double d, int concurrency, int output)
{
    /* the replica runs every slot's prefill and the decode steps all slots share */
    return concurrency * p + (output - 1) * d;
}

double closed_loop_tpot(double p, double d, int concurrency, int output)
{
    return output > 1 ? (closed_loop_e2e(p, d, concurrency, output) - p) / (output - 1) : 0;
}

int prefix_own_tokens(int prompt, int output, int prefix, double hit)
{
    return prompt + output - (int)floor(hit * prefix);
}

/* The weights' read of a priced step, as a time. */
static double weight_read_time(const request_setup *s, double weight_bytes)
{
    op_cost read = {.name = "weight_read", .kind = OP_HBM_READ, .weight_bytes = weight_bytes};
    return price_op(&read, s->gpu, 0, 1, NULL);
}

//> mixed_tpot
/* In-flight batching (request_options.mixed_steps, request.h): TPOT and e2e
 * when every prompt rides in a step with the running decodes.  p and w_p:
 * the prompt's step alone and its weight read; tokens: E[N] a decode step
 * yields a sequence (1 without MTP). */
static int mixed_tpot(const request_setup *s, const request_options *o, double p, double w_p, double tokens,
                      request_estimate *r, char *err, size_t errlen)
{
    const double C = s->concurrency;
    const int budget = o->budget > 0 ? o->budget : CLOSED_LOOP_DEFAULT_BUDGET;
    const int n = (s->prompt + budget - 1) / budget;   /* steps a prompt takes */
    const double rounds = (s->output - 1) / tokens;     /* decode steps a request takes */
    /* a request's own decode steps carry the others' prompts and decodes, and its own decode */
    const double m = (C - 1) / (n + rounds);                 /* prompts a step carries */
    const double decoding = 1 + (C - 1) * rounds / (n + rounds); /* decodes a step carries */
    const int c_dec = decoding < 1 ? 1 : (int)lround(decoding);
    double d;
    mtp_round round = {0};
    if (mean_decode_step(s, o, c_dec, &d, &round, err, errlen))
        return -1;
    step_cost dc; /* the decode step's weights: at a small batch, the experts it touches */
    if (step(s, o, decode_shape(c_dec, s->prompt + s->output / 2, s->tp, s->prec), &dc, err, errlen))
        return -1;
    const double w_d = weight_read_time(s, dc.weight_bytes);
    const double more_weights = w_p > w_d ? w_p - w_d : 0; /* what a step with a prompt reads beyond */
    const double work = p > w_p ? p - w_p : 0;            /* the prompt's work beyond its weight read */
    const double with_prompt = m * n < 1 ? m * n : 1;     /* share of steps holding prompt tokens */
    r->tpot = d + (with_prompt * more_weights + m * work) / tokens;
    r->mixed_step = r->tpot * tokens;
    r->prefill_steps = n;
    r->e2e = n * (d * tokens + more_weights) + work + (s->output - 1) * r->tpot;
    return 0;
}
//< mixed_tpot

int request_estimate_compute(const request_setup *s, request_estimate *out, char *err, size_t errlen)
{
    return request_estimate_cached(s, 0, 0, out, err, errlen);
}

//> request_estimate
int request_estimate_cached(const request_setup *s, int prefix_tokens, double prefix_hit, request_estimate *out,
                            char *err, size_t errlen)
{
    request_options o = {.prefix_tokens = prefix_tokens, .prefix_hit = prefix_hit};
    return request_estimate_with(s, &o, out, err, errlen);
}

static int estimate_in_flight(const request_setup *s, const request_options *opt, request_estimate *out, char *err,
                              size_t errlen);

int request_estimate_with(const request_setup *s, const request_options *opt, request_estimate *out, char *err,
                          size_t errlen)
{
    if (estimate_in_flight(s, opt, out, err, errlen) != 0)
        return -1;
    out->running = out->fit.fits ? s->concurrency : 0;
    if (out->fit.fits || out->fit.max_batch < 1 || out->fit.max_batch >= s->concurrency)
        return 0;
    /* the engine runs what its KV cache holds; the other clients wait for a slot */
    request_setup held = *s;
    held.concurrency = out->fit.max_batch;
    request_estimate b;
    if (estimate_in_flight(&held, opt, &b, err, errlen) != 0)
        return -1;
    double wait = ((double)s->concurrency / held.concurrency - 1) * b.e2e;
    b.e2e += wait;
    b.ttft_closed += wait;
    b.fit = out->fit;
    b.running = held.concurrency;
    *out = b;
    return 0;
}

static int estimate_in_flight(const request_setup *s, const request_options *opt, request_estimate *out, char *err,
                              size_t errlen)
{
    if (check_setup(s, err, errlen))
        return -1;
    const int prefix_tokens = opt ? opt->prefix_tokens : 0;
    const double prefix_hit = opt ? opt->prefix_hit : 0;
    const parallel_layout lay = request_layout(s, opt);
    const int split = layout_split(&lay);
    if (lay.tp != s->tp) {
        snprintf(err, errlen, "the layout's tp %d is not the setup's %d", lay.tp, s->tp);
        return -1;
    }
    if (split && s->pp > 1) {
        snprintf(err, errlen, "expert parallelism or attention data parallelism with pipeline parallelism is not "
                              "modelled: give one or the other");
        return -1;
    }
    if (opt && (opt->budget < 0 || opt->requests < 0 || (opt->requests > 0 && opt->requests < s->concurrency) ||
                !(opt->overhead >= 0) || !isfinite(opt->overhead))) {
        snprintf(err, errlen, "the benchmark needs a token budget >= 1, at least as many requests as the "
                              "concurrency (%d) and an overhead >= 0", s->concurrency);
        return -1;
    }
    if (mtp_on(opt) && (mtp_check(s->model, opt->mtp_steps, opt->mtp_accept, err, errlen) != 0))
        return -1;
    if (mtp_on(opt) && (s->pp > 1 || (s->chunk > 0 && s->chunk < s->prompt))) {
        snprintf(err, errlen, "multi-token prediction with a pipeline or chunked prefill is not modelled: give one "
                              "or the other");
        return -1;
    }
    const int cached = prefix_tokens > 0 && prefix_hit > 0;
    if (prefix_tokens < 0 || prefix_tokens >= s->prompt || !(prefix_hit >= 0 && prefix_hit <= 1)) {
        snprintf(err, errlen, "the cached prefix must be from 0 to prompt - 1 tokens and its hit rate from 0 to 1");
        return -1;
    }
    if (cached && ((s->chunk > 0 && s->chunk < s->prompt) || s->pp > 1)) {
        snprintf(err, errlen, "prefix caching with chunked prefill or pipeline parallelism is not modelled");
        return -1;
    }
    request_estimate r = {0};
    const double C = s->concurrency, o = s->output;
    const int gpus = s->tp * stages(s); /* with ep: one attention replica's share of the group */
    model_spec stage; /* what one stage's GPUs hold: the whole model without a pipeline */
    if (pipeline_stage_model(s->model, stages(s), &stage, err, errlen) != 0)
        return -1;
    resident_model rm = {&stage, s->prec, s->tp};
    if (!cached) {
        if (memory_fit(s->gpu, s->policy, &rm, 1, 0, s->concurrency, s->prompt + s->output, &r.fit, err, errlen))
            return -1;
    } else { /* one shared copy of the prefix, and each slot's own tokens */
        int own = prefix_own_tokens(s->prompt, s->output, prefix_tokens, prefix_hit);
        double shared = kv_bytes_per_token_per_gpu(&stage, s->prec.kv, s->tp) * prefix_tokens;
        if (memory_fit(s->gpu, s->policy, &rm, 1, shared, s->concurrency, own, &r.fit, err, errlen))
            return -1;
    }
    if (mtp_on(opt) && mtp_fit_adjust(&rm, s->concurrency,
                                      cached ? prefix_own_tokens(s->prompt, s->output, prefix_tokens, prefix_hit)
                                             : s->prompt + s->output,
                                      &r.fit, err, errlen))
        return -1;
    if (split && layout_fit_adjust(&stage, s->prec, &lay, s->concurrency,
                                cached ? prefix_own_tokens(s->prompt, s->output, prefix_tokens, prefix_hit)
                                       : s->prompt + s->output,
                                &r.fit, err, errlen))
        return -1;

    /* p: the whole prompt in one step; logits where the server samples */
    step_shape pf = prefill_shape(1, 0, s->prompt, s->tp, s->prec);
    pf.logits_last = !s->all_logits;
    step_cost pc;
    if (step(s, opt, pf, &pc, err, errlen))
        return -1;
    r.prefill_flop = pc.flop;
    r.prefill_bytes = pc.bytes;
    r.prefill_time = pc.time;
    r.prefill_bound = pc.bound;
    if (cached) { /* a hit prefills the rest of the prompt against the cached prefix */
        step_shape hit = prefill_shape(1, prefix_tokens, s->prompt - prefix_tokens, s->tp, s->prec);
        hit.logits_last = !s->all_logits;
        step_cost hc;
        if (step(s, opt, hit, &hc, err, errlen))
            return -1;
        const double h = prefix_hit;
        r.prefill_flop = h * hc.flop + (1 - h) * pc.flop;
        r.prefill_bytes = h * hc.bytes + (1 - h) * pc.bytes;
        r.prefill_time = h * hc.time + (1 - h) * pc.time;
    }
    const double p = r.prefill_time;

    double steps_per_request, prefill_share_of_step;
    if (s->chunk == 0 || s->chunk >= s->prompt) {
        /* e2e = C p + (o - 1) d: the replica runs every slot's prefill and
         * the decode steps that all slots share */
        if (mean_decode_step(s, opt, s->concurrency, &r.decode_step, &r.mtp, err, errlen))
            return -1;
        r.prefill_steps = 1;
        r.ttft = p;
        r.e2e = closed_loop_e2e(p, r.decode_step, s->concurrency, s->output);
        r.tpot = closed_loop_tpot(p, r.decode_step, s->concurrency, s->output);
        /* the step as the closed loop prices it: the weights once, each decode, each prompt token;
         * a step of decodes alone reads the weights of its own step (a mixture's: the experts its
         * tokens route to), so that a step of the C decodes costs d (closed_loop.h) */
        op_cost weight_read = {.name = "weight_read", .kind = OP_HBM_READ, .weight_bytes = pc.weight_bytes};
        double w = price_op(&weight_read, s->gpu, 0, 1, NULL);
        r.costs.weight_read = w < p ? w : p;
        r.costs.per_token = (p - r.costs.weight_read) / s->prompt;
        if (s->output > 1) {
            double wd;
            if (decode_weight_read(s, opt, s->concurrency, &wd, err, errlen))
                return -1;
            r.costs.decode_weight_read = wd < r.decode_step ? wd : r.decode_step;
            r.costs.per_decode = (r.decode_step - r.costs.decode_weight_read) / C;
        }
        bench_setup b = {s->concurrency, s->prompt, s->output, opt ? opt->budget : 0, opt ? opt->requests : 0,
                         opt ? opt->overhead : 0, opt ? opt->departure_wait : 0, opt ? opt->prefill_first : 0};
        if (s->pp > 1 || closed_loop_bench_ttft(&b, &r.costs, &r.bench) != 0)
            r.ttft_closed = closed_loop_ttft(p, r.decode_step, C * p / r.e2e) + (opt ? opt->overhead : 0);
        else {
            r.ttft_closed = r.bench.mean;
            if (b.prefill_first) { /* cohorts: the prompts of the round pause every decode */
                r.tpot = r.bench.step;
                r.e2e = r.bench.cycle - b.overhead;
            }
        }
        if (opt && opt->mixed_steps && !opt->prefill_first && s->pp <= 1 && s->output > 1 &&
            mixed_tpot(s, opt, p, weight_read_time(s, pc.weight_bytes), mtp_on(opt) ? r.mtp.tokens : 1, &r, err,
                       errlen))
            return -1;
        r.gpu_seconds_per_request = gpus * r.e2e / C;
        if (s->price_per_gpu_hour > 0) {
            double per_s = s->price_per_gpu_hour / 3600 * gpus;
            r.cost_per_m_input = per_s * p / s->prompt * 1e6;
            r.cost_per_m_output = o > 1 ? per_s * (o - 1) * r.decode_step / C / o * 1e6 : NAN;
        }
    } else {
        /* n mixed steps a prompt; in steady state n / (n + o - 1) of the
         * slots are prefilling and the rest decode */
        int n = (s->prompt + s->chunk - 1) / s->chunk;
        steps_per_request = n + o - 1;
        double decoding = C * (o - 1) / steps_per_request;
        int c_dec = decoding < 1 ? 1 : (int)lround(decoding);
        double q = C * s->prompt / steps_per_request; /* prompt tokens a step carries */
        if (q > s->chunk * C)
            q = s->chunk * C;
        if (mean_decode_step(s, opt, c_dec, &r.decode_step, &r.mtp, err, errlen))
            return -1;
        int qi = q < 1 ? 1 : (int)lround(q);
        step_cost qc;
        /* the chunk sits halfway through its prompt on average */
        if (step(s, opt, prefill_shape(1, s->prompt / 2, qi, s->tp, s->prec), &qc, err, errlen))
            return -1;
        /* what the chunk adds to the decode step: its step less the weight read the two share */
        op_cost weight_read = {.name = "weight_read", .kind = OP_HBM_READ, .weight_bytes = qc.weight_bytes};
        double extra = qc.time - price_op(&weight_read, s->gpu, 0, 1, NULL);
        if (extra < 0)
            extra = 0;
        r.mixed_step = r.decode_step + extra;
        prefill_share_of_step = extra;
        r.prefill_steps = n;
        r.ttft = n * r.mixed_step;
        r.ttft_closed = r.mixed_step / 2 + r.ttft; /* it joins at the next step: half a step's wait */
        r.tpot = r.mixed_step;
        r.e2e = steps_per_request * r.mixed_step;
        r.gpu_seconds_per_request = gpus * r.e2e / C;
        if (s->price_per_gpu_hour > 0) {
            double per_s = s->price_per_gpu_hour / 3600 * gpus;
            double replica_s = r.e2e / C; /* one request's share of the replica's time */
            double in_s = replica_s * prefill_share_of_step / r.mixed_step;
            r.cost_per_m_input = per_s * in_s / s->prompt * 1e6;
            r.cost_per_m_output = per_s * (replica_s - in_s) / o * 1e6;
        }
    }
    if (!(s->price_per_gpu_hour > 0))
        r.cost_per_m_input = r.cost_per_m_output = NAN;
    r.user_tokens_per_s = r.tpot > 0 ? 1 / r.tpot : NAN;
    r.requests_per_s = C / r.e2e; /* Little's law on the closed loop */
    r.tokens_per_s = o * r.requests_per_s;
    r.gpus = gpus;
    *out = r;
    return 0;
}
//< request_estimate

static int max_fitting(const request_setup *s, const request_options *o, char *err, size_t errlen)
{
    request_setup t = *s;
    t.concurrency = 1;
    request_estimate e;
    if (request_estimate_with(&t, o, &e, err, errlen))
        return -1;
    return e.fit.max_batch;
}

int request_concurrency_for_rate(const request_setup *s, double rate, char *err, size_t errlen)
{
    return request_concurrency_for_rate_with(s, NULL, rate, err, errlen);
}

int request_concurrency_for_rate_with(const request_setup *s, const request_options *o, double rate, char *err,
                                      size_t errlen)
{
    if (!(rate > 0) || !isfinite(rate)) {
        snprintf(err, errlen, "the request rate must be a finite number > 0");
        return -1;
    }
    int hi = max_fitting(s, o, err, errlen);
    if (hi < 0)
        return -1;
    if (hi == 0)
        return 0;
    request_setup t = *s;
    request_estimate e;
    t.concurrency = hi;
    if (request_estimate_with(&t, o, &e, err, errlen))
        return -1;
    if (e.requests_per_s < rate)
        return 0; /* even the fullest replica falls short */
    int lo = 0; /* throughput(lo) < rate <= throughput(hi) */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        t.concurrency = mid;
        if (request_estimate_with(&t, o, &e, err, errlen))
            return -1;
        if (e.requests_per_s >= rate)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* The TTFT a limit is checked against is the benchmark's (ttft_closed):
 * what a user of the server sees, waits and overhead included. */
static int meets_tpot(const request_estimate *e, double tpot_max)
{
    return tpot_max <= 0 || e->tpot <= tpot_max;
}

static int meets_ttft(const request_estimate *e, double ttft_max)
{
    return ttft_max <= 0 || e->ttft_closed <= ttft_max;
}

int request_best_concurrency(const request_setup *s, double ttft_max, double tpot_max, char *err, size_t errlen)
{
    return request_best_concurrency_with(s, NULL, ttft_max, tpot_max, err, errlen);
}

//> best_concurrency
int request_best_concurrency_with(const request_setup *s, const request_options *o, double ttft_max,
                                  double tpot_max, char *err, size_t errlen)
{
    int hi = max_fitting(s, o, err, errlen);
    if (hi <= 0)
        return hi;
    request_setup t = *s;
    request_estimate e;
    /* TPOT grows with the concurrency (every step carries more decodes and
     * the prompts of more requests): bisect for the last C that meets it */
    t.concurrency = hi;
    if (request_estimate_with(&t, o, &e, err, errlen))
        return -1;
    if (!meets_tpot(&e, tpot_max)) {
        int lo = 0; /* tpot(lo) meets (C = 0 vacuously), tpot(hi) does not */
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            t.concurrency = mid;
            if (request_estimate_with(&t, o, &e, err, errlen))
                return -1;
            if (meets_tpot(&e, tpot_max))
                lo = mid;
            else
                hi = mid;
        }
        hi = lo;
    }
    /* the benchmark's TTFT is not monotone in C (the departure interval
     * shrinks as the queues grow, the start-up burst steps through the
     * budget): scan down from the largest C that meets the TPOT */
    for (int c = hi; c >= 1; c--) {
        t.concurrency = c;
        if (request_estimate_with(&t, o, &e, err, errlen))
            return -1;
        if (meets_ttft(&e, ttft_max))
            return c;
    }
    return 0;
}
//< best_concurrency
