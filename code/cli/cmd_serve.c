/* napkin serve: one request end to end on a replica with C requests in
 * flight (or at a request rate): TTFT, TPOT, latency, throughput, cost per
 * million tokens, and --search for the cheapest tensor-parallel degree that
 * meets latency targets. */
#include "cli_band.h"
#include "cli_ep.h"
#include "cli_mtp.h"
#include "cli_model_on_device.h"
#include "commands.h"
#include "request.h"
#include "serve_disagg.h"
#include "simulate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const cli_doc DOC = {
    "serve",
    "one request end to end: TTFT, TPOT, throughput and cost per million tokens at a concurrency or rate",
    "--model M --gpu G [--tp N] [--pp N] [--prompt T] [--output T] [--concurrency C | --rate R]\n"
    "                     [--chunked-prefill T] [--all-logits] [--price P] [--usable F] [--hbm BYTES]\n"
    "                     [--dtype D] [--weights Q] [--moe-weights Q] [--kv D]\n"
    "                     [--efficiency F | --bw-efficiency F --flops-efficiency F | --calibrate DIR|NAME]\n"
    "                     [--roofline] [--search [--ttft S] [--tpot S] [--gpus N]] [--format table|tsv|json]\n"
    "                     [--prefix T [--prefix-hit F]] [--routing-skew S]\n"
    "                     [--ep N [--gpus-per-node N] [--net-gb-s B] [--imbalance F]]\n"
    "                     [--disaggregate (--prefill-gpus N --decode-gpus N | --search |\n"
    "                      --prefill-workers N --prefill-tp N --prefill-attention-dp D --prefill-moe-tp M\n"
    "                      --prefill-moe-ep E --prefill-batch B, and the same --decode-*) [--kv-link-gb-s B]]\n"
    "                     [--engine E] [--max-num-batched-tokens T] [--requests N] [--overhead S] [--simulate]\n"
    "                     [--mtp N --mtp-accept A]",
    "A closed loop of C requests in flight on one replica of --tp GPUs: each\n"
    "request is a prefill of its prompt (p, logits at the last position), then\n"
    "output - 1 decode steps of the batch of C (d, the mean over the growing\n"
    "context).  By Little's law: latency = C p + (output - 1) d, TTFT = p,\n"
    "TPOT = d + (C - 1) p / (output - 1): every other request's prefill stalls\n"
    "this one's decoding.  --chunked-prefill T carries at most T prompt tokens a\n"
    "step inside the decode steps instead (TTFT = steps x mixed step).\n"
    "Cost: the replica's GPU time per request at --price per GPU-hour, split\n"
    "into prefill (input tokens) and decode (output tokens).  --rate R finds the\n"
    "smallest C that serves R requests/s.  --pp N splits the layers into N\n"
    "pipeline stages of --tp GPUs (p: one prompt through the stages; d: the\n"
    "cycle of min(C, N) microbatches; not with chunked prefill).\n"
    "--search tries every tensor-parallel degree that divides the heads and every\n"
    "pipeline degree that divides the layers, tp x pp up to --gpus (data-parallel\n"
    "replicas filling them), keeps those that fit and meet --ttft and --tpot at the largest\n"
    "concurrency that does, and ranks them by GPU-seconds per request (the order\n"
    "of cost per token at any price).\n"
    "--prefix T: the first T tokens of every prompt are shared and cached (a\n"
    "system prompt); --prefix-hit F of requests find them (default 1): a hit\n"
    "prefills the rest of its prompt only, and the slots share one copy.\n"
    "--ep N (a mixture): the routed experts spread over a group of N GPUs whose\n"
    "attention runs in N/tp replicas of --tp GPUs (napkin decode --ep); C is each\n"
    "attention replica's, the throughput and the cost are one replica's and the\n"
    "group's throughput N/tp times that (--rate R is the group's: R tp/N each).\n"
    "--search also tries every EP degree that divides the experts with every tp\n"
    "dividing it (the `ep` column; 1 = none), and keeps --prefix and\n"
    "--routing-skew in every candidate.\n"
    "--disaggregate: prefill and decode on separate pools, each --X-workers\n"
    "replicas of its own layout (--X-tp, --X-attention-dp, --X-moe-tp, --X-moe-ep\n"
    "for X = prefill, decode; --prefill-gpus N / --decode-gpus N: N / --tp\n"
    "replicas of --tp); --prefill-batch prompts a rank prefills a step,\n"
    "--decode-batch (default --concurrency) sequences a rank decodes, and\n"
    "decode batch x attention ranks x decode workers requests in flight.  The\n"
    "KV of each prompt crosses NVLink when both pools fit one node\n"
    "(--gpus-per-node), else the network (--net-gb-s a GPU), or --kv-link-gb-s.\n"
    "TTFT = the wait for the prefill pool (M/D/c below its capacity, the closed\n"
    "loop's Little's law when it sets the rate) + the prefill step + the\n"
    "hand-off; TPOT = the decode step; throughput the slower pool's; the\n"
    "aggregated server on as many GPUs beside it, and the calibrated answer\n"
    "beside the roofline's.  With --search: every pair of pool layouts (TP\n"
    "degrees; for a mixture EP groups with attention ranks of every tp, DEP at\n"
    "tp 1), worker counts and the largest decode batch meeting --ttft and\n"
    "--tpot on --gpus, the most output tokens/s per GPU, against the aggregated\n"
    "best on the same GPUs.  With a split, --rate R finds the smallest decode\n"
    "batch at which both pools keep up.  Not with --disaggregate: --rate with\n"
    "--search, --chunked-prefill (it mixes prompt chunks into one pool's decode\n"
    "steps, and disaggregation has no prompts on the decode pool to mix), --pp,\n"
    "--prefix and --ep (give each pool's --X-moe-ep).\n"
    "ttft_closed is the TTFT a closed-loop benchmark measures: it sends --requests\n"
    "N (default 10 C), C at once (the start-up burst, prefilled through the\n"
    "engine's --max-num-batched-tokens T a step, default 8192: TensorRT-LLM's\n"
    "max_num_tokens, vLLM's max_num_batched_tokens and SGLang's\n"
    "chunked_prefill_size on these GPUs), then one each time one completes\n"
    "(steady state: half a step, the prefills queued ahead, its own), each\n"
    "with --overhead S outside the GPU (--engine trtllm|vllm|sglang: its budget\n"
    "and the overhead fitted on half its measured runs; trtllm and vllm batch in\n"
    "flight, so each prompt rides in a step of the running decodes and TPOT is\n"
    "the mean such step, the weights read once a step).  --simulate replays\n"
    "that benchmark step by step over the same step costs and prints TTFT and\n"
    "TPOT as mean, p50, p90 and p99 (ttft_sim_*, tpot_sim_*).\n"
    "When the KV cache holds fewer than C requests, the engine runs the most it\n"
    "holds (the `running` row) and the others wait in its queue: TPOT and the\n"
    "throughput are those of the running batch, and the wait for a slot adds to\n"
    "the end-to-end latency and the closed loop's TTFT.  The calibrated answer of\n"
    "a published:SYSTEM/ENGINE set plans memory as that engine does by default\n"
    "(vLLM's gpu_memory_utilization 0.9, SGLang's mem_fraction_static,\n"
    "TensorRT-LLM's free_gpu_memory_fraction 0.9) unless --usable is given.\n"
    "--mtp N --mtp-accept A (a model with an MTP module): the decode step d is\n"
    "the round of napkin decode --mtp, (verify + N module passes) / (1 + A +\n"
    "... + A^N) per output token, with the module's weights and KV resident;\n"
    "with --rate and --search too (tp layouts only), not with --ep, --pp,\n"
    "--chunked-prefill or --disaggregate.\n"
    "Exit status 1 when not one request of prompt + output tokens fits, or the\n"
    "rate cannot be served.",
};

static void report_estimate(report *r, const device_setup *d, const request_estimate *e, double price)
{
    device_report_first(r, d, 1, "prefill");
    report_num(r, "prefill_flop", "FLOP per GPU", U_FLOP, e->prefill_flop);
    report_num(r, "prefill_time", "prefill of one prompt (p)", U_SECONDS, e->prefill_time);
    report_text(r, "prefill_bound", "set by", bound_name(e->prefill_bound));
    report_int(r, "prefill_steps", "steps a prompt takes", e->prefill_steps);
    device_report_again(r, d, 1, "decode");
    report_num(r, "decode_step", "mean decode step (d)", U_SECONDS, e->decode_step);
    if (e->mixed_step > 0)
        report_num(r, "mixed_step", "mixed step (decodes + a prompt chunk)", U_SECONDS, e->mixed_step);
    device_report_again(r, d, 1, "one request");
    report_num(r, "ttft", "time to first token (the prefill alone)", U_SECONDS, e->ttft);
    report_num(r, "ttft_closed", "time to first token in the busy closed loop", U_SECONDS, e->ttft_closed);
    report_num(r, "tpot", "time per output token", U_SECONDS, e->tpot);
    report_num(r, "e2e", "end-to-end latency", U_SECONDS, e->e2e);
    report_num(r, "user_tokens_per_s", "tokens/s per user", U_TOKENS_PER_S, e->user_tokens_per_s);
    device_report_again(r, d, 1, "the replica");
    report_num(r, "tokens_per_s", "output tokens/s", U_TOKENS_PER_S, e->tokens_per_s);
    report_num(r, "requests_per_s", "requests/s", U_REAL, e->requests_per_s);
    report_num(r, "gpu_seconds_per_request", "GPU-seconds per request", U_SECONDS, e->gpu_seconds_per_request);
    report_num(r, "gpu_hours_per_m_output", "GPU-hours per million output tokens", U_REAL,
               e->tokens_per_s > 0 ? e->gpus * 1e6 / e->tokens_per_s / 3600 : NAN);
    if (price > 0) {
        report_num(r, "cost_per_m_input", "cost per million input tokens", U_REAL, e->cost_per_m_input);
        report_num(r, "cost_per_m_output", "cost per million output tokens", U_REAL, e->cost_per_m_output);
    }
    report_int(r, "max_concurrency", "largest concurrency that fits", e->fit.max_batch);
}

/* Every tp that divides the heads (and suits the KV heads), up to gpus. */
/* One candidate layout: tp x pp, or an expert-parallel group of ep GPUs with
 * attention replicas of tp (pp 1). */
typedef struct {
    int tp, pp, ep, replicas, c;
    request_estimate e;
} layout_row;

static int try_layout(const request_setup *base, const request_options *opt, int gpus, int tp, int pp, int ep,
                      double ttft, double tpot, layout_row *out, char *err, size_t errlen)
{
    request_setup s = *base;
    s.tp = tp;
    s.pp = pp;
    request_options o = *opt;
    o.ep.ep = ep;
    if (o.mtp_steps > 0 && (ep > 1 || pp > 1)) /* multi-token prediction is modelled on tp layouts */
        return 0;
    step_shape probe = decode_shape(1, 0, tp, s.prec);
    if (step_shape_check(s.model, &probe, err, errlen) != 0 || s.model->layers % pp != 0 ||
        (pp > 1 && s.chunk > 0 && s.chunk < s.prompt) || (pp > 1 && o.prefix_tokens > 0))
        return 0;
    int c = request_best_concurrency_with(&s, &o, ttft, tpot, err, errlen);
    if (c <= 0)
        return c;
    s.concurrency = c;
    if (request_estimate_with(&s, &o, &out->e, err, errlen) != 0)
        return -1;
    out->tp = tp;
    out->pp = pp;
    out->ep = ep;
    out->c = c;
    /* attention replicas: of tp x pp GPUs, or ep / tp in each of the groups that fit */
    out->replicas = ep > 1 ? gpus / ep * (ep / tp) : gpus / (tp * pp);
    return 1;
}

static int search(report *r, const char *key, const char *title, const request_setup *base,
                  const request_options *opt, int gpus, double ttft, double tpot, char *err, size_t errlen)
{
    report_table *t = report_table_add(r, key, title);
    report_col(t, "tp", "tp", U_INT, 0);
    report_col(t, "pp", "pp", U_INT, 0);
    report_col(t, "ep", "ep", U_INT, 0);
    report_col(t, "replicas", "replicas", U_INT, 0);
    report_col(t, "concurrency", "C", U_INT, 0);
    report_col(t, "ttft", "TTFT", U_SECONDS, 0);
    report_col(t, "ttft_closed", "TTFT, benchmark", U_SECONDS, 0); /* what --ttft limits */
    report_col(t, "tpot", "TPOT", U_SECONDS, 0);
    report_col(t, "tokens_per_s", "tokens/s (all replicas)", U_TOKENS_PER_S, 0);
    report_col(t, "gpu_seconds_per_request", "GPU-s a request", U_SECONDS, 0);
    report_col(t, "cost_per_m_input", "cost per M input", U_REAL, 0);
    report_col(t, "cost_per_m_output", "cost per M output", U_REAL, 0);
    layout_row rows[128];
    int n = 0;
    /* 64-bit counters: doubling past any int gpus cannot wrap */
    for (long long tp = 1; tp <= gpus; tp *= 2)
        for (long long pp = 1; tp * pp <= gpus && n < 128; pp *= 2) {
            int k = try_layout(base, opt, gpus, (int)tp, (int)pp, 1, ttft, tpot, &rows[n], err, errlen);
            if (k < 0)
                return -1;
            n += k;
        }
    const model_spec *m = base->model;
    for (long long ep = 2; m->experts > 1 && ep <= gpus; ep *= 2) /* expert-parallel groups, attention replicas of tp */
        for (long long tp = 1; tp <= ep && m->experts % ep == 0 && n < 128; tp *= 2) {
            int k = try_layout(base, opt, gpus, (int)tp, 1, (int)ep, ttft, tpot, &rows[n], err, errlen);
            if (k < 0)
                return -1;
            n += k;
        }
    /* cheapest first: GPU-seconds per request, the order of cost per token */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && rows[j].e.gpu_seconds_per_request < rows[j - 1].e.gpu_seconds_per_request; j--) {
            layout_row tmp = rows[j];
            rows[j] = rows[j - 1];
            rows[j - 1] = tmp;
        }
    for (int i = 0; i < n; i++) {
        report_cell_int(t, rows[i].tp);
        report_cell_int(t, rows[i].pp);
        report_cell_int(t, rows[i].ep);
        report_cell_int(t, rows[i].replicas);
        report_cell_int(t, rows[i].c);
        report_cell_num(t, rows[i].e.ttft);
        report_cell_num(t, rows[i].e.ttft_closed);
        report_cell_num(t, rows[i].e.tpot);
        report_cell_num(t, rows[i].e.tokens_per_s * rows[i].replicas);
        report_cell_num(t, rows[i].e.gpu_seconds_per_request);
        report_cell_num(t, rows[i].e.cost_per_m_input);
        report_cell_num(t, rows[i].e.cost_per_m_output);
    }
    return n;
}

typedef struct {
    device_flags device;
    ep_flags ep;
    mtp_flags mtp;
    disagg_flags dg;
    precision_flags prec;
    const char *model_key;
    int tp, pp, prompt, output, concurrency, chunk, all_logits, do_search, gpus, disaggregate, prefix;
    double rate, price, ttft, tpot, prefix_hit;
    const char *engine;
    int budget, requests, simulate;
    double overhead;
} serve_flags;

static int parse(int argc, char **argv, serve_flags *f, cli_common *common)
{
    *f = (serve_flags){.device = device_flags_default(DEVICE_PRICING | DEVICE_EFFICIENCY | DEVICE_MEMORY, NULL),
                       .ep = ep_flags_default(), .mtp = mtp_flags_default(), .prec = precision_flags_default(), .tp = 1, .pp = 1, .prompt = 2048, .output = 256,
                       .gpus = 8};
    const cli_opt request[] = {
        {"--model", OPT_STRING, &f->model_key, "M", "model key (napkin specs --models)", 1, 0},
        {"--tp", OPT_POS_INT, &f->tp, "N", "tensor-parallel degree (default 1)", 0, 0},
        {"--pp", OPT_POS_INT, &f->pp, "N", "pipeline stages, each of --tp GPUs (default 1)", 0, 0},
        {"--prompt", OPT_POS_INT, &f->prompt, "T", "prompt tokens per request (default 2048)", 0, 0},
        {"--output", OPT_POS_INT, &f->output, "T", "output tokens per request (default 256)", 0, 0},
        {"--concurrency", OPT_POS_INT, &f->concurrency, "C", "requests in flight (default 1)", 0, 0},
        {"--rate", OPT_POS_REAL, &f->rate, "R", "requests per second to serve (instead of --concurrency)", 0, 0},
        {"--chunked-prefill", OPT_POS_INT, &f->chunk, "T", "at most T prompt tokens a step, mixed into decodes", 0,
         0},
        {"--all-logits", OPT_FLAG, &f->all_logits, NULL, "logits at every prompt position", 0, 0},
        {"--price", OPT_POS_REAL, &f->price, "P", "price of one GPU-hour (for the costs)", 0, 0},
    };
    const cli_opt layouts[] = {
        {"--search", OPT_FLAG, &f->do_search, NULL, "try every tp x pp layout and EP group up to --gpus", 0, 0},
        {"--ttft", OPT_POS_REAL, &f->ttft, "S", "with --search: the most time to first token allowed", 0, 0},
        {"--tpot", OPT_POS_REAL, &f->tpot, "S", "with --search: the most time per output token allowed", 0, 0},
        {"--gpus", OPT_POS_INT, &f->gpus, "N", "with --search: GPUs to fill with replicas (default 8)", 0, 0},
        {"--prefix", OPT_POS_INT, &f->prefix, "T", "tokens of every prompt shared and cached (a system prompt)", 0, 0},
        {"--prefix-hit", OPT_FRACTION, &f->prefix_hit, "F", "with --prefix: share of requests that find it (default 1)",
         0, 0},
        {"--disaggregate", OPT_FLAG, &f->disaggregate, NULL, "prefill and decode on separate GPU pools", 0, 0},
    };
    const cli_opt bench[] = {
        {"--engine", OPT_STRING, &f->engine, "E", "trtllm, vllm or sglang: its token budget and fitted overhead", 0,
         0},
        {"--max-num-batched-tokens", OPT_POS_INT, &f->budget, "T", "the engine's token budget a step (default 8192)",
         0, 0},
        {"--requests", OPT_POS_INT, &f->requests, "N", "requests the benchmark sends (default 10 x concurrency)", 0,
         0},
        {"--overhead", OPT_POS_REAL, &f->overhead, "S", "seconds a request spends outside the GPU (default 0)",
         0, 0},
        {"--simulate", OPT_FLAG, &f->simulate, NULL, "replay the benchmark step by step: TTFT and TPOT percentiles",
         0, 0},
    };
    cli_opt opts[2 * DEVICE_NOPTS_MAX + 25 + PRECISION_NOPTS + EP_NOPTS + MTP_NOPTS + DISAGG_NOPTS];
    int n = device_flag_opts(&f->device, DEVICE_PRICING | DEVICE_EFFICIENCY, opts);
    memcpy(opts + n, request, sizeof request);
    n += CLI_NOPTS(request);
    precision_flag_opts(&f->prec, opts + n);
    n += PRECISION_NOPTS;
    n += device_flag_opts(&f->device, DEVICE_MEMORY, opts + n);
    memcpy(opts + n, layouts, sizeof layouts);
    n += CLI_NOPTS(layouts);
    memcpy(opts + n, bench, sizeof bench);
    n += CLI_NOPTS(bench);
    ep_flag_opts(&f->ep, opts + n);
    n += EP_NOPTS;
    mtp_flag_opts(&f->mtp, opts + n);
    n += MTP_NOPTS;
    disagg_flag_opts(&f->dg, opts + n);
    n += DISAGG_NOPTS;
    return cli_parse(&DOC, argc, argv, opts, n, common);
}

/* The flags that go together, and those that do not. */
static int check(serve_flags *f)
{
    if (f->concurrency && f->rate > 0)
        return cli_fail(DOC.name, EXIT_USAGE, "give --concurrency or --rate, not both");
    if (!f->do_search && (f->ttft > 0 || f->tpot > 0))
        return cli_fail(DOC.name, EXIT_USAGE, "--ttft and --tpot are targets for --search");
    if (!f->disaggregate && disagg_flag_given(&f->dg))
        return cli_fail(DOC.name, EXIT_USAGE, "%s goes with --disaggregate (the --prefill-*, --decode-* and "
                                              "--kv-link-gb-s flags state a split)", disagg_flag_given(&f->dg));
    if (f->prefix_hit > 0 && !f->prefix)
        return cli_fail(DOC.name, EXIT_USAGE, "--prefix-hit goes with --prefix");
    if (f->prefix && (f->disaggregate || f->pp > 1 || f->chunk))
        return cli_fail(DOC.name, EXIT_USAGE, "--prefix is not modelled with --disaggregate, --pp or "
                                              "--chunked-prefill: a hit's shorter prefill is priced on one pool, "
                                              "whole, in one stage");
    if ((f->ep.ep || f->ep.moe_ep || f->ep.moe_tp || f->ep.attention_dp) && (f->disaggregate || f->do_search))
        return cli_fail(DOC.name, EXIT_USAGE, "--%s with %s: %s",
                        f->ep.ep ? "ep" : f->ep.moe_ep ? "moe-ep" : f->ep.moe_tp ? "moe-tp" : "attention-dp",
                        f->disaggregate ? "--disaggregate" : "--search",
                        f->disaggregate ? "each pool has its own layout: give --prefill-moe-ep and --decode-moe-ep "
                                          "(and their -tp, -attention-dp)"
                                        : "the search tries every EP degree itself; leave --ep out");
    if (f->prefix && f->prefix >= f->prompt)
        return cli_fail(DOC.name, EXIT_USAGE, "--prefix %d must be shorter than the --prompt (%d tokens)", f->prefix,
                        f->prompt);
    if (f->disaggregate && f->rate > 0 && f->do_search)
        return cli_fail(DOC.name, EXIT_USAGE, "--rate with --disaggregate --search: the search finds the split that "
                                              "serves the most; give the split (--prefill-gpus, --decode-gpus or "
                                              "the pools' workers) to serve a --rate");
    if (f->disaggregate && f->chunk)
        return cli_fail(DOC.name, EXIT_USAGE, "--disaggregate with --chunked-prefill has no meaning: chunking mixes "
                                              "prompt chunks into the decode steps of one pool, and a disaggregated "
                                              "decode pool runs no prompts");
    if (f->disaggregate && f->pp > 1)
        return cli_fail(DOC.name, EXIT_USAGE, "--disaggregate with --pp is not modelled: give one or the other");
    if (f->mtp.steps && (f->disaggregate || f->ep.ep || f->pp > 1 || f->chunk))
        return cli_fail(DOC.name, EXIT_USAGE, "--mtp with --disaggregate, --ep, --pp or --chunked-prefill is not "
                                              "modelled yet: give one or the other");
    if (f->prefix && !(f->prefix_hit > 0))
        f->prefix_hit = 1;
    if (f->engine && !engine_defaults_find(f->engine))
        return cli_fail(DOC.name, EXIT_USAGE, "--engine %s: not an engine (%s)", f->engine, engine_names());
    if (f->requests && f->concurrency && f->requests < f->concurrency)
        return cli_fail(DOC.name, EXIT_USAGE, "--requests %d is fewer than the --concurrency %d", f->requests,
                        f->concurrency);
    if (f->simulate && (f->do_search || f->disaggregate || f->chunk || f->pp > 1 || f->rate > 0))
        return cli_fail(DOC.name, EXIT_USAGE, "--simulate replays one replica at a --concurrency: not with "
                                              "--search, --disaggregate, --chunked-prefill, --pp or --rate");
    if (f->engine) {
        const engine_defaults *e = engine_defaults_find(f->engine);
        if (!f->budget)
            f->budget = e->budget;
        if (!(f->overhead > 0))
            f->overhead = e->overhead;
    }
    return 0;
}

/* The request on the resolved model and device: its layout, expert group and options. */
typedef struct {
    request_setup s;
    request_options opt;
} serve_plan;

static int plan(const serve_flags *f, const model_on_device *u, serve_plan *p)
{
    const model_spec *m = u->model;
    char err[512];
    int rc;
    step_shape probe = decode_shape(1, 0, f->tp, u->prec);
    if (step_shape_check(m, &probe, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--tp %d: %s", f->tp, err);
    if (m->layers % f->pp != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--pp %d does not divide the %d layers of %s", f->pp, m->layers, m->key);
    if (f->pp > 1 && f->chunk > 0 && f->chunk < f->prompt)
        return cli_fail(DOC.name, EXIT_USAGE, "--chunked-prefill with --pp is not modelled: give one or the other");
    ep_layout epl;
    parallel_layout pl;
    ep_flags links = f->ep; /* a split's hand-off and its pools' groups use the links without --ep */
    if (f->disaggregate) {
        links.gpus_per_node = ep_flags_default().gpus_per_node;
        links.net_gb_s = ep_flags_default().net_gb_s;
    }
    if ((rc = ep_flags_layout(DOC.name, &links, m, &u->device.timed, f->do_search ? 1 : f->tp, u->prec, &epl, &pl)) != 0)
        return rc;
    if (!f->do_search && layout_is_split(&pl) && f->pp > 1)
        return cli_fail(DOC.name, EXIT_USAGE, "--ep (--moe-ep) or --attention-dp with --pp is not modelled: give one "
                                              "or the other");
    if (f->do_search && !(epl.imbalance >= 1)) /* the search's EP candidates: the flags' links, uniform load */
        epl = (ep_layout){0, ep_flags_node_gpus(&f->ep, &u->device.timed), f->ep.net_gb_s * 1e9, 1, dtype_bytes(u->prec.act) < 2 ? 1.0 : 2.0,
                          2.0, f->ep.routing_skew, 0, MOE_EXCHANGE_ALLTOALL};
    p->opt = (request_options){.ep = epl, .prefix_tokens = f->prefix, .prefix_hit = f->prefix_hit,
                               .budget = f->budget, .requests = f->requests, .overhead = f->overhead,
                               .prefill_first = f->engine && engine_defaults_find(f->engine)->prefill_first,
                               .mixed_steps = f->engine && !engine_defaults_find(f->engine)->prefill_first &&
                                              !f->chunk && f->pp <= 1,
                               .layout = f->do_search ? (parallel_layout){0} : pl};
    if ((rc = mtp_flags_resolve(DOC.name, &f->mtp, m, &p->opt.mtp_steps, &p->opt.mtp_accept)) != 0)
        return rc;
    p->s = (request_setup){m, &u->device.timed, u->prec, f->tp, f->prompt, f->output,
                           f->concurrency ? f->concurrency : 1, f->chunk, f->all_logits,
                           device_policy(&f->device, -1, -1), f->price, f->pp};
    return 0;
}

static void report_workload(report *r, const serve_flags *f, const model_on_device *u)
{
    report_section(r, "Workload");
    report_text(r, "model", "model", u->model->key);
    report_int(r, "prompt", "prompt tokens", f->prompt);
    report_int(r, "output", "output tokens", f->output);
    if (!f->do_search) {
        report_int(r, "tp", "tensor-parallel degree", f->tp);
        report_int(r, "pp", "pipeline stages", f->pp);
    }
    if (f->chunk)
        report_int(r, "chunked_prefill", "prompt tokens a step (chunked prefill)", f->chunk);
    device_report(r, &u->device);
}

static void report_prefix(report *r, const serve_flags *f)
{
    if (!f->prefix)
        return;
    report_int(r, "prefix", "shared prefix tokens (cached)", f->prefix);
    report_num(r, "prefix_hit", "share of requests that find it", U_REAL, f->prefix_hit);
}

/* --search: the layouts that meet the targets, at the roofline and calibrated. */
static int serve_search(report *r, const serve_flags *f, const serve_plan *p, const device_setup *d)
{
    char err[512];
    report_prefix(r, f);
    int n = search(r, "search", "Layouts (tp x pp, or EP groups of ep GPUs) that fit and meet the targets, "
                                "cheapest first", &p->s, &p->opt, f->gpus, f->ttft, f->tpot, err, sizeof err);
    rated_device cal = device_rated(d);
    if (n >= 0 && cal.have) { /* the same search at measured kernel rates */
        request_setup c = p->s;
        c.gpu = &cal.gpu;
        int nc = search(r, "search_calibrated", "The same search, calibrated: layouts that meet the targets at "
                                               "measured kernel rates, cheapest first",
                        &c, &p->opt, f->gpus, f->ttft, f->tpot, err, sizeof err);
        if (nc < 0)
            n = nc;
        else if (nc == 0)
            report_note(r, "calibrated, no layout up to %d GPUs meets the targets", f->gpus);
    }
    if (n < 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    if (n == 0)
        return cli_fail(DOC.name, EXIT_NO_FIT,
                        "no tensor-parallel degree up to %d GPUs fits and meets the targets (TTFT %g s, TPOT %g s)",
                        f->gpus, f->ttft, f->tpot);
    return 0;
}

/* --rate R: the smallest concurrency that serves it, into p->s.concurrency.
 * With --ep, R is the group's: each of its ep / tp attention replicas serves an equal share. */
static int concurrency_for_rate(const serve_flags *f, serve_plan *p)
{
    const int ranks = p->opt.layout.attention_dp > 1 ? p->opt.layout.attention_dp : 1;
    const int ep = ranks > 1 || p->opt.ep.ep > 1;
    const double share = f->rate / ranks; /* each attention rank serves an equal share */
    char err[512];
    int c = request_concurrency_for_rate_with(&p->s, &p->opt, share, err, sizeof err);
    if (c < 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    if (c > 0) {
        p->s.concurrency = c;
        return 0;
    }
    /* the fullest replica's rate, for the message */
    request_estimate full;
    request_setup t = p->s;
    t.concurrency = 1;
    request_estimate_with(&t, &p->opt, &full, err, sizeof err);
    t.concurrency = full.fit.max_batch > 0 ? full.fit.max_batch : 1;
    request_estimate_with(&t, &p->opt, &full, err, sizeof err);
    return cli_fail(DOC.name, EXIT_NO_FIT,
                    "--rate %g requests/s is more than one %s serves: at the largest concurrency "
                    "that fits (%d) it serves %.3g requests/s (add replicas, or a larger --tp)",
                    f->rate, ep > 1 ? "expert-parallel group" : "replica", full.fit.max_batch,
                    full.fit.max_batch > 0 ? full.requests_per_s * f->rate / share : 0.0);
}

/* The calibrated answer, each row with the band of held-out measured runs like it (cli_band.h). */
static void report_calibrated_bands(report *r, const serve_flags *f, const device_setup *d, const request_setup *t,
                                    const request_estimate *ec)
{
    static const char alone[] = "no measured run times it (the runs measure TTFT, TPOT and latency "
                                "in a busy closed loop)";
    /* the runs judged as answered the way this answer is: with --engine, under the engine's schedule
     * (and its fitted overhead where the answer has one); without, by the plain closed loop */
    const band_quantity tpot_kind = f->engine ? BAND_TPOT : BAND_TPOT_PLAIN;
    const band_quantity ttft_kind = !f->engine ? BAND_TTFT_PLAIN : f->overhead > 0 ? BAND_TTFT_BENCH : BAND_TTFT_CLOSED;
    const band_quantity e2e_kind = !f->engine ? BAND_E2E_PLAIN : f->overhead > 0 ? BAND_E2E_BENCH : BAND_E2E;
    cli_band b;
    cli_band_open(&b, d, t->model, t->concurrency, t->prompt, t->output);
    report_num(r, "prefill_time_calibrated", "prefill of one prompt", U_SECONDS, ec->prefill_time);
    cli_band_none(r, "prefill_time_calibrated", alone);
    report_num(r, "decode_step_calibrated", "mean decode step", U_SECONDS, ec->decode_step);
    cli_band_row(r, &b, "decode_step_calibrated", tpot_kind, 0);
    report_num(r, "ttft_calibrated", "time to first token (the prefill alone)", U_SECONDS, ec->ttft);
    cli_band_none(r, "ttft_calibrated", alone);
    report_num(r, "ttft_closed_calibrated", "time to first token in the busy closed loop", U_SECONDS,
               ec->ttft_closed);
    cli_band_row(r, &b, "ttft_closed_calibrated", ttft_kind, 0);
    report_num(r, "tpot_calibrated", "time per output token", U_SECONDS, ec->tpot);
    cli_band_row(r, &b, "tpot_calibrated", tpot_kind, 0);
    report_num(r, "e2e_calibrated", "end-to-end latency", U_SECONDS, ec->e2e);
    cli_band_row(r, &b, "e2e_calibrated", e2e_kind, 0);
    report_num(r, "tokens_per_s_calibrated", "output tokens/s", U_TOKENS_PER_S, ec->tokens_per_s);
    cli_band_row(r, &b, "tokens_per_s_calibrated", e2e_kind, 1);
    report_num(r, "requests_per_s_calibrated", "requests/s", U_REAL, ec->requests_per_s);
    cli_band_row(r, &b, "requests_per_s_calibrated", e2e_kind, 1);
    if (f->price > 0) { /* the GPU-seconds a token takes: as the latency */
        report_num(r, "cost_per_m_output_calibrated", "cost per million output tokens", U_REAL,
                   ec->cost_per_m_output);
        cli_band_row(r, &b, "cost_per_m_output_calibrated", e2e_kind, 0);
    }
    cli_band_close(&b);
}

/* The request again at measured kernel rates, and on the datasheet beside a GPU set. */
static void report_other_devices(report *r, const serve_flags *f, const device_setup *d, const serve_plan *p)
{
    char err[512];
    rated_device cal = device_rated(d);
    request_estimate ec, es;
    request_setup t = p->s;
    t.gpu = &cal.gpu;
    const char *engine = cal.gpu.rates ? strrchr(cal.gpu.rates->name, '/') : NULL;
    memory_policy own;
    resident_model rm = {p->s.model, p->s.prec, p->s.tp};
    if (engine && isnan(f->device.usable) && p->s.pp <= 1 && /* a pipeline's stages: the default */
        memory_policy_engine(engine + 1, &cal.gpu, &rm, &own) == 0) {
        own.capacity = p->s.policy.capacity; /* the engine's own policy; --hbm still counts */
        t.policy = own;
    }
    if (cal.have && request_estimate_with(&t, &p->opt, &ec, err, sizeof err) == 0) {
        device_report_calibrated_section(r, d, "the same", NULL); /* the first section names the calibration */
        report_calibrated_bands(r, f, d, &t, &ec);
    }
    t.gpu = &d->sheet;
    if (d->calibrated && d->has_sheet && request_estimate_with(&t, &p->opt, &es, err, sizeof err) == 0) {
        report_section(r, "Bound: the same on datasheet rates");
        report_num(r, "datasheet_ttft", "time to first token", U_SECONDS, es.ttft);
        report_num(r, "datasheet_tpot", "time per output token", U_SECONDS, es.tpot);
        report_num(r, "datasheet_tokens_per_s", "output tokens/s", U_TOKENS_PER_S, es.tokens_per_s);
    }
}

/* --simulate: the benchmark replayed over the calibrated step costs (the
 * timed device's without a calibration), the closed form beside it. */
static int report_simulation(report *r, const serve_flags *f, const device_setup *d, const serve_plan *p,
                             const request_estimate *timed)
{
    char err[512];
    rated_device cal = device_rated(d);
    request_estimate ec = *timed;
    request_setup t = p->s;
    t.gpu = &cal.gpu;
    if (cal.have && request_estimate_with(&t, &p->opt, &ec, err, sizeof err) != 0)
        ec = *timed;
    /* a prefill-first engine keeps alike requests in cohorts (closed_loop.h): replayed alike */
    const int alike = p->opt.prefill_first;
    sim_setup s = {{p->s.concurrency, f->prompt, f->output, f->budget, f->requests, f->overhead, 0, alike},
                   ec.costs, 0, !alike, 1, alike ? 0 : SIM_SPREAD};
    sim_result sr;
    if (sim_run(&s, 0, &sr, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    report_section(r, cal.have ? "Simulated benchmark (calibrated step costs)" : "Simulated benchmark");
    report_int(r, "sim_requests", "requests sent", bench_requests(&s.bench));
    report_int(r, "sim_budget", "token budget a step", bench_budget(&s.bench));
    report_num(r, "sim_overhead", "overhead a request", U_SECONDS, f->overhead);
    report_num(r, "ttft_sim_mean", "TTFT, mean", U_SECONDS, sr.ttft.mean);
    report_num(r, "ttft_sim_p50", "TTFT, p50", U_SECONDS, sr.ttft.p50);
    report_num(r, "ttft_sim_p90", "TTFT, p90", U_SECONDS, sr.ttft.p90);
    report_num(r, "ttft_sim_p99", "TTFT, p99", U_SECONDS, sr.ttft.p99);
    report_num(r, "ttft_closed_form", "TTFT, the closed form", U_SECONDS, ec.ttft_closed);
    report_num(r, "tpot_sim_mean", "TPOT, mean", U_SECONDS, sr.tpot.mean);
    report_num(r, "tpot_sim_p50", "TPOT, p50", U_SECONDS, sr.tpot.p50);
    report_num(r, "tpot_sim_p90", "TPOT, p90", U_SECONDS, sr.tpot.p90);
    report_num(r, "tpot_sim_p99", "TPOT, p99", U_SECONDS, sr.tpot.p99);
    report_num(r, "tpot_closed_form", "TPOT, the closed form", U_SECONDS, ec.tpot);
    return 0;
}

/* With --mtp: the round, and the same requests without it. */
static int report_mtp(report *r, const serve_plan *p, const request_estimate *e)
{
    request_options plain = p->opt;
    plain.mtp_steps = 0;
    request_estimate e0;
    char err[512];
    if (request_estimate_with(&p->s, &plain, &e0, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    mtp_report(r, &e->mtp, p->opt.mtp_steps, p->opt.mtp_accept, e0.decode_step, "", "");
    report_num(r, "tpot_request_without_mtp", "the request's TPOT without MTP (tpot above: with)", U_SECONDS, e0.tpot);
    report_num(r, "tokens_per_s_without_mtp", "output tokens/s without MTP", U_TOKENS_PER_S, e0.tokens_per_s);
    mtp_report_memory(r, p->s.model, p->s.prec, p->s.tp);
    return 0;
}

/* One replica (or expert-parallel group) at --concurrency or --rate. */
static int serve_one(report *r, const serve_flags *f, const model_on_device *u, serve_plan *p)
{
    int rc;
    if (f->rate > 0) {
        if ((rc = concurrency_for_rate(f, p)) != 0)
            return rc;
        report_num(r, "rate", "request rate asked for", U_REAL, f->rate);
    }
    const request_setup *s = &p->s;
    const ep_layout *epl = &p->opt.ep;
    request_estimate e;
    char err[512];
    if (request_estimate_with(s, &p->opt, &e, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    if (e.running < 1) { /* not one sequence: an engine holding the rest in its queue cannot start either */
        char why[320];
        fit_check_describe(&e.fit, s->concurrency, f->prompt + f->output, why, sizeof why);
        return cli_fail(DOC.name, EXIT_NO_FIT, "--concurrency %d does not fit: %s (prompt + output tokens each)",
                        s->concurrency, why);
    }
    report_int(r, "concurrency", "requests in flight", s->concurrency);
    if (e.running < s->concurrency)
        report_int(r, "running", "of those, running at once (the KV cache holds no more; the rest wait in the queue)",
                   e.running);
    report_prefix(r, f);
    report_estimate(r, &u->device, &e, f->price);
    if (p->opt.mtp_steps && (rc = report_mtp(r, p, &e)) != 0)
        return rc;
    const parallel_layout *pl = &p->opt.layout;
    if (layout_is_split(pl)) { /* the numbers above are one attention rank's */
        const double ranks = pl->attention_dp;
        layout_report(r, pl, s->concurrency);
        if (epl->ep > 1)
            ep_report(r, u->model, &u->device.timed, epl, f->tp, (double)s->concurrency / f->tp);
        report_num(r, "group_tokens_per_s", "output tokens/s, the whole replica", U_TOKENS_PER_S,
                   e.tokens_per_s * ranks);
        report_num(r, "group_requests_per_s", "requests/s, the whole replica", U_REAL, e.requests_per_s * ranks);
        report_num(r, "tokens_per_s_per_gpu", "output tokens/s per GPU of the replica", U_TOKENS_PER_S,
                   e.tokens_per_s * ranks / layout_gpus(pl));
    }
    report_other_devices(r, f, &u->device, p);
    return f->simulate ? report_simulation(r, f, &u->device, p, &e) : 0;
}

int cmd_serve(int argc, char **argv)
{
    serve_flags f;
    cli_common common;
    int rc = parse(argc, argv, &f, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if ((rc = check(&f)) != 0)
        return rc;
    model_on_device u;
    serve_plan p;
    report *r = NULL;
    if ((rc = model_on_device_resolve(DOC.name, &common, &f.prec, f.model_key, &f.device, &u)) != 0 ||
        (rc = plan(&f, &u, &p)) != 0)
        goto done;
    r = report_new(DOC.name);
    report_workload(r, &f, &u);
    if (f.disaggregate)
        rc = serve_disaggregated(r, &u.device, &p.s, &f.ep, &f.dg, f.do_search, f.gpus, f.ttft, f.tpot, f.rate);
    else if (f.do_search)
        rc = serve_search(r, &f, &p, &u.device);
    else
        rc = serve_one(r, &f, &u, &p);
    if (rc == 0)
        rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    model_on_device_free(&u);
    return rc;
}
