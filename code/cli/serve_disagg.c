#include "serve_disagg.h"

#include "disagg.h"
#include "layout.h"
#include "memory.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void disagg_flag_opts(disagg_flags *f, cli_opt *o)
{
    const cli_opt opts[DISAGG_NOPTS] = {
        {"--prefill-gpus", OPT_POS_INT, &f->prefill_gpus, "N", "with --disaggregate: GPUs that prefill, in --tp replicas", 0, 0},
        {"--decode-gpus", OPT_POS_INT, &f->decode_gpus, "N", "with --disaggregate: GPUs that decode, in --tp replicas", 0, 0},
        {"--prefill-workers", OPT_POS_INT, &f->prefill.workers, "N", "with --disaggregate: prefill replicas (default 1)", 0, 0},
        {"--prefill-tp", OPT_POS_INT, &f->prefill.tp, "N", "a prefill replica's tensor parallelism (default --tp)", 0, 0},
        {"--prefill-attention-dp", OPT_POS_INT, &f->prefill.attention_dp, "D", "its data-parallel attention ranks", 0, 0},
        {"--prefill-moe-tp", OPT_POS_INT, &f->prefill.moe_tp, "M", "its experts' tensor split", 0, 0},
        {"--prefill-moe-ep", OPT_POS_INT, &f->prefill.moe_ep, "E", "its experts' expert split", 0, 0},
        {"--prefill-batch", OPT_POS_INT, &f->prefill.batch, "B", "prompts a prefill step takes per rank (default 1)", 0, 0},
        {"--decode-workers", OPT_POS_INT, &f->decode.workers, "N", "with --disaggregate: decode replicas (default 1)", 0, 0},
        {"--decode-tp", OPT_POS_INT, &f->decode.tp, "N", "a decode replica's tensor parallelism (default --tp)", 0, 0},
        {"--decode-attention-dp", OPT_POS_INT, &f->decode.attention_dp, "D", "its data-parallel attention ranks", 0, 0},
        {"--decode-moe-tp", OPT_POS_INT, &f->decode.moe_tp, "M", "its experts' tensor split", 0, 0},
        {"--decode-moe-ep", OPT_POS_INT, &f->decode.moe_ep, "E", "its experts' expert split", 0, 0},
        {"--decode-batch", OPT_POS_INT, &f->decode.batch, "C", "sequences per attention rank (default --concurrency)", 0, 0},
        {"--kv-link-gb-s", OPT_POS_REAL, &f->kv_link_gb_s, "B",
         "with --disaggregate: GB/s per GPU the KV crosses (default NVLink inside a node, else --net-gb-s)", 0, 0},
    };
    memcpy(o, opts, sizeof opts);
}

static int pool_given(const pool_flags *p)
{
    return p->workers || p->tp || p->attention_dp || p->moe_tp || p->moe_ep || p->batch;
}

/* The name of the first of a pool's flags given, or NULL. */
static const char *pool_flag_given(const pool_flags *p, int decode)
{
    static const char *names[2][6] = {
        {"--prefill-workers", "--prefill-tp", "--prefill-attention-dp", "--prefill-moe-tp", "--prefill-moe-ep",
         "--prefill-batch"},
        {"--decode-workers", "--decode-tp", "--decode-attention-dp", "--decode-moe-tp", "--decode-moe-ep",
         "--decode-batch"}};
    const int given[6] = {p->workers, p->tp, p->attention_dp, p->moe_tp, p->moe_ep, p->batch};
    for (int i = 0; i < 6; i++)
        if (given[i])
            return names[decode][i];
    return NULL;
}

const char *disagg_flag_given(const disagg_flags *f)
{
    const char *n;
    if (f->prefill_gpus)
        return "--prefill-gpus";
    if (f->decode_gpus)
        return "--decode-gpus";
    if ((n = pool_flag_given(&f->prefill, 0)) || (n = pool_flag_given(&f->decode, 1)))
        return n;
    return f->kv_link_gb_s > 0 ? "--kv-link-gb-s" : NULL;
}

/* One pool from its flags, or from --prefill-gpus / --decode-gpus N: N / tp replicas of tp. */
static int pool_of(const model_spec *m, const char *name, const pool_flags *pf, int gpus, int tp, int batch,
                   disagg_pool *out)
{
    char err[512], prefix[16];
    snprintf(prefix, sizeof prefix, "%s-", name);
    if (gpus && (pf->workers || pf->tp || pf->attention_dp || pf->moe_tp || pf->moe_ep))
        return cli_fail("serve", EXIT_USAGE, "--%s-gpus states the pool as --tp replicas: give it or the --%s-* "
                                             "layout flags, not both", name, name);
    if (gpus && gpus % tp != 0)
        return cli_fail("serve", EXIT_USAGE, "--%s-gpus %d: the pools must each be a positive multiple of tp %d",
                        name, gpus, tp);
    if (layout_resolve(m, prefix, pf->tp ? pf->tp : tp, pf->attention_dp, pf->moe_tp, pf->moe_ep, &out->layout, err,
                       sizeof err) != 0)
        return cli_fail("serve", EXIT_USAGE, "%s", err);
    out->workers = gpus ? gpus / tp : (pf->workers ? pf->workers : 1);
    out->batch = pf->batch ? pf->batch : batch;
    return 0;
}

static int plan_of(const request_setup *s, const ep_flags *ef, const disagg_flags *f, disagg_plan *p)
{
    int rc;
    *p = (disagg_plan){.base = *s, .kv_link_bw = f->kv_link_gb_s * 1e9, .kv_link_latency = f->kv_link_us * 1e-6};
    p->opt.ep = (ep_layout){0, ep_flags_node_gpus(ef, s->gpu), ef->net_gb_s * 1e9, ef->imbalance > 0 ? ef->imbalance : 1,
                            dtype_bytes(s->prec.act) < 2 ? 1.0 : 2.0, 2.0, ef->routing_skew, 0, MOE_EXCHANGE_ALLTOALL};
    if ((rc = pool_of(s->model, "prefill", &f->prefill, f->prefill_gpus, s->tp, 1, &p->prefill)) != 0 ||
        (rc = pool_of(s->model, "decode", &f->decode, f->decode_gpus, s->tp, s->concurrency, &p->decode)) != 0)
        return rc;
    char err[512];
    request_setup t;
    request_options o;
    if (disagg_pool_request(p, &p->prefill.layout, 1, "prefill-", &t, &o, err, sizeof err) ||
        disagg_pool_request(p, &p->decode.layout, 1, "decode-", &t, &o, err, sizeof err))
        return cli_fail("serve", EXIT_USAGE, "%s", err);
    return 0;
}

static void report_layout(report *r, const char *pool, const disagg_pool *q, const char *sfx)
{
    char key[64], label[96];
#define ROW(what, text, v)                                              \
    do {                                                                \
        snprintf(key, sizeof key, "%s_%s%s", pool, what, sfx);          \
        snprintf(label, sizeof label, "%s pool: %s", pool, text);       \
        report_int(r, key, label, v);                                   \
    } while (0)
    ROW("workers", "replicas", q->workers);
    ROW("tp", "tensor parallelism a rank", q->layout.tp);
    ROW("attention_dp", "attention ranks a replica", q->layout.attention_dp);
    ROW("moe_tp", "experts' tensor split", q->layout.moe_tp);
    ROW("moe_ep", "experts' expert split", q->layout.moe_ep);
    ROW("batch", strcmp(pool, "prefill") ? "sequences a rank decodes" : "prompts a rank prefills a step", q->batch);
    ROW("gpus", "GPUs", q->workers * layout_gpus(&q->layout));
#undef ROW
}

/* The answer's rows; sfx "" for the first answer, "_calibrated" for the measured rates'. */
static void report_pools(report *r, const disagg_plan *p, const disagg_pools_result *x, const char *sfx)
{
    char key[64];
#define K(name) (snprintf(key, sizeof key, "%s%s", name, sfx), key)
    report_layout(r, "prefill", &p->prefill, sfx);
    report_layout(r, "decode", &p->decode, sfx);
    report_int(r, K("concurrency"), "requests in flight: decode batch x attention ranks x decode workers",
               x->concurrency);
    report_num(r, K("prefill_time"), "prefill step of the batch (p)", U_SECONDS, x->prefill_step);
    report_num(r, K("decode_step"), "decode step (d)", U_SECONDS, x->decode_step);
    report_num(r, K("kv_transfer_bytes"), "KV handed to the decode pool per request", U_BYTES, x->kv_bytes);
    report_text(r, K("kv_link"), "over", p->kv_link_bw > 0 ? "the link given" : x->kv_over_nvlink ? "NVLink (one node)"
                                                                                   : "the network (pools span nodes)");
    report_num(r, K("kv_link_gb_s"), "GB/s per GPU", U_REAL, x->kv_link_bw / 1e9);
    report_num(r, K("kv_transfer_time"), "its transfer", U_SECONDS, x->kv_time);
    report_num(r, K("prefill_queue_wait"), "wait for the prefill pool", U_SECONDS, x->prefill_wait);
    report_num(r, K("ttft"), "time to first token (wait + p + transfer)", U_SECONDS, x->ttft);
    report_num(r, K("tpot"), "time per output token (d)", U_SECONDS, x->tpot);
    report_num(r, K("prefill_requests_per_s"), "prefill pool, requests/s", U_REAL, x->prefill_rate);
    report_num(r, K("decode_requests_per_s"), "decode pool, requests/s", U_REAL, x->decode_rate);
    report_num(r, K("requests_per_s"), "requests/s", U_REAL, x->requests_per_s);
    report_num(r, K("tokens_per_s"), "output tokens/s", U_TOKENS_PER_S, x->tokens_per_s);
    report_num(r, K("tokens_per_s_per_gpu"), "output tokens/s per GPU", U_TOKENS_PER_S, x->tokens_per_s_per_gpu);
#undef K
}

/* The aggregated server on the same GPUs: the search's best under the
 * targets; or, for one split, replicas of the decode pool's layout at its
 * batch, or (rate > 0) each at the smallest concurrency serving its share. */
static int report_aggregated(report *r, const disagg_plan *p, int search, int gpus, double rate, double ttft,
                             double tpot, const char *sfx)
{
    char err[512], key[64];
    parallel_layout l = p->decode.layout;
    int c = p->decode.batch;
    request_estimate e;
    double per_gpu = 0;
    const int used = search ? gpus : p->prefill.workers * layout_gpus(&p->prefill.layout) +
                                         p->decode.workers * layout_gpus(&p->decode.layout);
    if (search) {
        if (disagg_aggregated_best(p, gpus, ttft, tpot, &l, &c, &e, &per_gpu, err, sizeof err) != 0)
            return cli_fail("serve", EXIT_USAGE, "%s", err);
    } else {
        request_setup s;
        request_options o;
        if (disagg_pool_request(p, &l, c, "decode-", &s, &o, err, sizeof err))
            return cli_fail("serve", EXIT_USAGE, "%s", err);
        /* rate: each attention rank of tp GPUs serves its share of the rate */
        if (rate > 0 && (c = request_concurrency_for_rate_with(&s, &o, rate * l.tp / used, err, sizeof err)) < 0)
            return cli_fail("serve", EXIT_USAGE, "%s", err);
        s.concurrency = c > 0 ? c : 1;
        if (request_estimate_with(&s, &o, &e, err, sizeof err))
            return cli_fail("serve", EXIT_USAGE, "%s", err);
        per_gpu = e.tokens_per_s / l.tp;
    }
#define K(name) (snprintf(key, sizeof key, "%s%s", name, sfx), key)
    if (c == 0) {
        report_note(r, "aggregated on %d GPUs, no layout %s", used, rate > 0 ? "serves the rate" : "meets the targets");
        return 0;
    }
    report_int(r, K("agg_tp"), "aggregated: tensor parallelism a rank", l.tp);
    report_int(r, K("agg_attention_dp"), "aggregated: attention ranks a replica", l.attention_dp);
    report_int(r, K("agg_moe_ep"), "aggregated: experts' expert split", l.moe_ep);
    report_int(r, K("agg_concurrency"), "aggregated: requests in flight per attention rank", c);
    report_num(r, K("agg_ttft"), "aggregated: time to first token (busy closed loop)", U_SECONDS, e.ttft_closed);
    report_num(r, K("agg_tpot"), "aggregated: time per output token", U_SECONDS, e.tpot);
    report_num(r, K("agg_tokens_per_s_per_gpu"), "aggregated: output tokens/s per GPU", U_TOKENS_PER_S, per_gpu);
    report_num(r, K("agg_tokens_per_s"), "aggregated: output tokens/s on the same GPUs", U_TOKENS_PER_S,
               per_gpu * used);
    report_num(r, K("agg_requests_per_s"), "aggregated: requests/s on the same GPUs", U_REAL,
               per_gpu * used / p->base.output);
#undef K
    return 0;
}

/* One answer on one timed GPU row: the split as given, at a rate, or searched. */
static int answer(report *r, disagg_plan *p, int search, int gpus, double ttft, double tpot, double rate,
                  const char *sfx)
{
    char err[512];
    disagg_pools_result x;
    if (search) {
        disagg_plan best;
        int found;
        if (disagg_pools_search(p, gpus, ttft, tpot, &best, &x, &found, err, sizeof err) != 0)
            return cli_fail("serve", EXIT_USAGE, "%s", err);
        if (!found)
            return cli_fail("serve", EXIT_NO_FIT, "no split of %d GPUs into prefill and decode pools fits and meets "
                                                  "the targets (TTFT %g s, TPOT %g s)", gpus, ttft, tpot);
        *p = best;
    } else if (rate > 0) {
        int c;
        if (disagg_pools_for_rate(p, rate, &c, &x, err, sizeof err) != 0)
            return cli_fail("serve", EXIT_USAGE, "%s", err);
        if (c == 0) {
            if (x.max_batch < 1)
                return cli_fail("serve", EXIT_NO_FIT, "--rate %g: not one request fits a decode rank", rate);
            const int pre = x.prefill_rate < rate;
            return cli_fail("serve", EXIT_NO_FIT, "--rate %g requests/s is more than the split serves: the %s pool "
                            "tops out at %.3g requests/s (add %s)", rate, pre ? "prefill" : "decode",
                            pre ? x.prefill_rate : x.decode_rate,
                            pre ? "--prefill-gpus or --prefill-workers" : "--decode-gpus or --decode-workers");
        }
        p->decode.batch = c;
    } else {
        if (disagg_pools_estimate(p, &x, err, sizeof err) != 0)
            return cli_fail("serve", EXIT_USAGE, "%s", err);
        if (!x.fits)
            return cli_fail("serve", EXIT_NO_FIT, "--decode-batch %d (or --prefill-batch %d) does not fit its "
                            "pool: the largest decode batch that does is %d", p->decode.batch, p->prefill.batch,
                            x.max_batch);
    }
    report_pools(r, p, &x, sfx);
    return report_aggregated(r, p, search, gpus, rate, ttft, tpot, sfx);
}

int serve_disaggregated(report *r, const device_setup *d, const request_setup *s, const ep_flags *ef,
                        const disagg_flags *f, int search, int gpus, double ttft, double tpot, double rate)
{
    const int split = f->prefill_gpus || f->decode_gpus || f->prefill.workers || f->decode.workers;
    if (search && split)
        return cli_fail("serve", EXIT_USAGE, "--search chooses the split: leave --prefill-gpus, --decode-gpus and "
                                             "the worker counts out");
    if (!search && (!f->prefill_gpus != !f->decode_gpus))
        return cli_fail("serve", EXIT_USAGE, "--disaggregate needs both --prefill-gpus and --decode-gpus, or the "
                                             "--prefill-* and --decode-* layouts, or --search");
    if (!search && !split && !pool_given(&f->prefill) && !pool_given(&f->decode))
        return cli_fail("serve", EXIT_USAGE, "--disaggregate needs --prefill-gpus and --decode-gpus, the --prefill-* "
                                             "and --decode-* layouts and workers, or --search");
    disagg_plan p;
    int rc = plan_of(s, ef, f, &p);
    if (rc != 0)
        return rc;
    if (rate > 0)
        report_num(r, "rate", "request rate asked for", U_REAL, rate);
    char title[160];
    snprintf(title, sizeof title, "%s: disaggregated, prefill and decode pools%s", device_first_kind(d, 1),
             search ? " (the best split)" : "");
    report_section(r, title);
    disagg_plan first = p;
    if ((rc = answer(r, &first, search, gpus, ttft, tpot, rate, "")) != 0)
        return rc;
    rated_device cal = device_rated(d);
    if (!cal.have)
        return 0;
    device_report_calibrated_section(r, d, "the same", NULL);
    p.base.gpu = &cal.gpu;
    return answer(r, &p, search, gpus, ttft, tpot, rate, "_calibrated");
}
