#include "serve_disagg.h"

#include "cli_args.h"
#include "disagg.h"
#include "memory.h"

#include <math.h>
#include <stdio.h>

static void report_result(report *r, const char *kind, const disagg_setup *d, const disagg_result *x)
{
    char title[160];
    snprintf(title, sizeof title, "%s: disaggregated, prefill and decode pools", kind);
    report_section(r, title);
    report_int(r, "prefill_gpus", "prefill GPUs", d->prefill_gpus);
    report_int(r, "decode_gpus", "decode GPUs", d->decode_gpus);
    report_int(r, "concurrency", "requests in flight per decode instance", d->base.concurrency);
    report_num(r, "prefill_time", "prefill of one prompt (p)", U_SECONDS, x->prefill_time);
    report_num(r, "decode_step", "decode step (d)", U_SECONDS, x->decode_step);
    report_num(r, "kv_transfer_bytes", "KV handed to the decode pool per request", U_BYTES, x->kv_bytes);
    report_num(r, "kv_transfer_time", "its transfer", U_SECONDS, x->kv_time);
    report_num(r, "ttft", "time to first token (p + transfer)", U_SECONDS, x->ttft);
    report_num(r, "tpot", "time per output token (d)", U_SECONDS, x->tpot);
    report_num(r, "prefill_requests_per_s", "prefill pool, requests/s", U_REAL, x->prefill_rate);
    report_num(r, "decode_requests_per_s", "decode pool, requests/s", U_REAL, x->decode_rate);
    report_num(r, "requests_per_s", "requests/s (the slower pool)", U_REAL, x->requests_per_s);
    report_num(r, "tokens_per_s", "output tokens/s", U_TOKENS_PER_S, x->tokens_per_s);
    report_num(r, "balanced_ratio", "prefill GPUs per decode GPU that balance the pools", U_REAL, x->balanced_ratio);
    snprintf(title, sizeof title, "%s: aggregated at the same GPU count (every replica prefills and decodes)", kind);
    report_section(r, title);
    report_int(r, "agg_concurrency", "requests in flight per replica", x->agg_concurrency);
    report_num(r, "agg_ttft", "time to first token", U_SECONDS, x->agg_ttft);
    report_num(r, "agg_tpot", "time per output token", U_SECONDS, x->agg_tpot);
    report_num(r, "agg_requests_per_s", "requests/s", U_REAL, x->agg_requests_per_s);
    report_num(r, "agg_tokens_per_s", "output tokens/s", U_TOKENS_PER_S, x->agg_tokens_per_s);
}

int serve_disaggregated(report *r, const char *kind, const request_setup *s, const disagg_flags *f, int search, int gpus,
                        double ttft, double tpot, double rate)
{
    disagg_setup d = {*s, f->prefill_gpus, f->decode_gpus, 0, f->kv_link_us * 1e-6};
    d.kv_link_bw = f->kv_link_gb_s > 0 ? f->kv_link_gb_s * 1e9 : s->gpu->link_bw;
    if (!(d.kv_link_bw > 0))
        return cli_fail("serve", EXIT_USAGE, "--kv-link-gb-s: %s has no link bandwidth in the GPU table; give one",
                        s->gpu->key);
    char err[512];
    disagg_result x;
    if (search) {
        if (f->prefill_gpus || f->decode_gpus)
            return cli_fail("serve", EXIT_USAGE, "--search chooses the split: leave --prefill-gpus and --decode-gpus out");
        disagg_setup best;
        int found;
        if (disagg_search(&d, gpus, ttft, tpot, &best, &x, &found, err, sizeof err) != 0)
            return cli_fail("serve", EXIT_USAGE, "%s", err);
        if (!found)
            return cli_fail("serve", EXIT_NO_FIT,
                            "no split of %d GPUs into prefill and decode pools of tp %d fits and meets the targets "
                            "(TTFT %g s, TPOT %g s)", gpus, s->tp, ttft, tpot);
        report_result(r, kind, &best, &x);
        return 0;
    }
    if (!f->prefill_gpus || !f->decode_gpus)
        return cli_fail("serve", EXIT_USAGE, "--disaggregate needs --prefill-gpus and --decode-gpus (or --search)");
    if (rate > 0) { /* open-loop arrivals: the decode concurrency that keeps up */
        int c;
        if (disagg_for_rate(&d, rate, &c, &x, err, sizeof err) != 0)
            return cli_fail("serve", EXIT_USAGE, "%s", err);
        if (c == 0) {
            if (x.max_concurrency < 1)
                return cli_fail("serve", EXIT_NO_FIT, "--rate %g: not one request fits a decode instance", rate);
            return cli_fail("serve", EXIT_NO_FIT,
                            "--rate %g requests/s is more than the split serves: the %s pool tops out at %.3g "
                            "requests/s (add %s)", rate, x.prefill_rate < rate ? "prefill" : "decode",
                            x.prefill_rate < rate ? x.prefill_rate : x.decode_rate,
                            x.prefill_rate < rate ? "--prefill-gpus" : "--decode-gpus");
        }
        d.base.concurrency = c;
        report_num(r, "rate", "request rate asked for", U_REAL, rate);
        report_result(r, kind, &d, &x);
        if (x.agg_concurrency == 0)
            report_note(r, "the aggregated server on %d GPUs cannot serve %g requests/s", f->prefill_gpus + f->decode_gpus,
                        rate);
        return 0;
    }
    if (disagg_estimate(&d, &x, err, sizeof err) != 0)
        return cli_fail("serve", EXIT_USAGE, "%s", err);
    if (!x.fits)
        return cli_fail("serve", EXIT_NO_FIT,
                        "--concurrency %d does not fit a decode instance: the largest that does is %d",
                        s->concurrency, x.max_concurrency);
    report_result(r, kind, &d, &x);
    return 0;
}
