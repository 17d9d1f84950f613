/* napkin ep: one decode step of a mixture of experts spread over an
 * expert-parallel group, the attention data-parallel: memory per GPU, the
 * experts the group's tokens touch, the all-to-alls and tokens per second. */
#include "cli_band.h"
#include "cli_ep.h"
#include "cli_model_on_device.h"
#include "commands.h"
#include "expert_parallel.h"

#include <math.h>
#include <string.h>

/* Beside each calibrated row (cli_band.h): why it has no measured error band. */
static const char NO_RUN_LIKE_IT[] = "no measured run like this one (the serving runs use no expert parallelism)";

static const cli_doc DOC = {
    "ep",
    "expert parallelism: a MoE decode step over an EP group, memory, all-to-all, tokens per second",
    "--model M --gpu G (--ep N | --moe-ep E) [--moe-tp M] [--attention-dp D] [--batch B] [--context C]\n"
    "                     [--dtype D] [--weights Q] [--moe-weights Q] [--kv D] [--net-gb-s B]\n"
    "                     [--gpus-per-node N] [--imbalance F | --routing-skew S] [--usable F]\n"
    "                     [--efficiency F | --bw-efficiency F --flops-efficiency F | --calibrate DIR|NAME]\n"
    "                     [--roofline] [--format table|tsv|json]",
    "The routed experts are spread over --ep GPUs (each holds experts / ep of\n"
    "them whole); every GPU holds everything else and decodes --batch sequences\n"
    "of its own (data-parallel attention).  Each MoE layer dispatches every\n"
    "token's hidden state to the GPUs of its top-k experts and combines the\n"
    "outputs back: tokens x k x (ep-1)/ep vectors a GPU sends each way (fp8\n"
    "dispatch with --dtype fp8, bf16 otherwise; bf16 combine), over NVLink to\n"
    "the GPUs of its node (--gpus-per-node, default 8) and the network to the\n"
    "rest (--net-gb-s per GPU, default 50: a 400 Gb/s NIC), the two at once.\n"
    "A GPU reads only its experts that some token of the group routes to:\n"
    "(E/ep)(1 - (1 - k/E)^(batch x ep)).  --imbalance F: the busiest GPU gets F\n"
    "times the mean load, and the step waits for it.  --routing-skew S: a Zipf(S)\n"
    "router instead of a uniform one, the experts dealt out round-robin hottest\n"
    "first; the hottest GPU sets the load and the experts read.\n"
    "The layout as the engines state it (one GPU an attention rank): --moe-ep E\n"
    "(--ep's other name) expert groups, each expert split --moe-tp M ways, over\n"
    "--attention-dp D ranks, M x E = D (default D = E, M = 1).\n"
    "--weights Q and --moe-weights Q store the weights in a format of their own\n"
    "(bf16, fp8, fp8_block, int4_wo, nvfp4, mxfp4; napkin memory --help).\n"
    "napkin decode, prefill and serve take --ep too, with --tp attention replicas.\n"
    "Exit status 1 when the batch does not fit a GPU (the message gives the\n"
    "largest that does); 2 for a bad flag, a dense model or an --ep that does\n"
    "not divide the experts.",
};

typedef struct {
    device_flags device;
    precision_flags prec;
    ep_flags ep;
    const char *model_key;
    int batch, context;
} ep_cmd_flags;

static int parse(int argc, char **argv, ep_cmd_flags *f, cli_common *common)
{
    *f = (ep_cmd_flags){.device = device_flags_default(DEVICE_PRICING | DEVICE_EFFICIENCY | DEVICE_USABLE, NULL),
                        .prec = precision_flags_default(), .ep = ep_flags_default(), .batch = 1, .context = 4096};
    cli_opt opts[2 * DEVICE_NOPTS_MAX + 3 + PRECISION_NOPTS + EP_NOPTS];
    const cli_opt group[] = {
        {"--model", OPT_STRING, &f->model_key, "M", "model key (napkin specs --models)", 1, 0},
        {"--batch", OPT_POS_INT, &f->batch, "B", "sequences each GPU decodes (default 1)", 0, 0},
        {"--context", OPT_POS_INT, &f->context, "C", "tokens cached per sequence (default 4096)", 0, 0},
    };
    int n = device_flag_opts(&f->device, DEVICE_PRICING | DEVICE_EFFICIENCY, opts);
    memcpy(opts + n, group, sizeof group);
    n += CLI_NOPTS(group);
    precision_flag_opts(&f->prec, opts + n);
    n += PRECISION_NOPTS;
    n += device_flag_opts(&f->device, DEVICE_USABLE, opts + n);
    ep_flag_opts(&f->ep, opts + n); /* the shared table (cli_ep.h): the layout, the links, the router */
    n += EP_NOPTS;
    return cli_parse(&DOC, argc, argv, opts, n, common);
}

static int check(const ep_cmd_flags *f)
{
    if (!f->ep.ep && !f->ep.moe_ep)
        return cli_fail(DOC.name, EXIT_USAGE, "give --ep N (or --moe-ep N): the GPUs the routed experts are spread "
                                              "over");
    if (f->ep.imbalance > 0 && f->ep.routing_skew > 0)
        return cli_fail(DOC.name, EXIT_USAGE, "give --imbalance or --routing-skew, not both: the skewed router sets "
                                              "the busiest GPU's load");
    if (f->ep.imbalance > 0 && f->ep.imbalance < 1)
        return cli_fail(DOC.name, EXIT_USAGE, "--imbalance %g: the busiest GPU carries at least the mean (>= 1)",
                        f->ep.imbalance);
    return 0;
}

/* The group's layout, memory and all-to-alls, and its decode step both ways. */
typedef struct {
    parallel_layout pl;
    ep_layout l, busy;
    double touched;
    ep_cost a2a;
    fit_check fit;
    step_cost c, cc;
} ep_answer;

static int compute(const ep_cmd_flags *f, const model_on_device *u, ep_answer *a)
{
    const model_spec *m = u->model;
    const device_setup *d = &u->device;
    const ep_flags *e = &f->ep;
    char err[512];
    if (m->experts <= 1)
        return cli_fail(DOC.name, EXIT_USAGE, "--model %s is dense: ep prices a mixture of experts", m->key);
    int rc = ep_flags_parallel(DOC.name, e, m, 1, &a->pl); /* one GPU an attention rank */
    if (rc != 0)
        return rc;
    const int D = a->pl.attention_dp, M = a->pl.moe_tp, E = a->pl.moe_ep;
    a->l = (ep_layout){E, ep_flags_node_gpus(e, &d->timed), e->net_gb_s * 1e9, e->imbalance > 0 ? e->imbalance : 1,
                       dtype_bytes(u->prec.act) < 2 ? 1.0 : 2.0, 2.0, e->routing_skew, 0,
                       MOE_EXCHANGE_ALLTOALL};
    a->busy = a->l;
    a->touched = 0;
    memory_policy pol = device_policy(&f->device, -1, -1);
    resident_model rm = {m, u->prec, 1};
    /* the group's tokens reach the experts; each GPU sends its own to the M slices of each pair's expert */
    if (ep_busiest_gpu(m, &a->l, (double)f->batch * D, &a->busy.imbalance, &a->touched, err, sizeof err) != 0 ||
        ep_step_cost(m, &d->timed, &a->busy, (double)f->batch * M, &a->a2a, err, sizeof err) != 0 ||
        memory_fit(&d->timed, pol, &rm, 1, 0, f->batch, f->context, &a->fit, err, sizeof err) != 0 ||
        layout_fit_adjust(m, u->prec, &a->pl, f->batch, f->context, &a->fit, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--ep %d: %s", E, err);
    if (!a->fit.fits) {
        char why[320];
        fit_check_describe(&a->fit, f->batch, f->context, why, sizeof why);
        return cli_fail(DOC.name, EXIT_NO_FIT, "--batch %d per GPU at --ep %d does not fit: %s", f->batch, E, why);
    }
    step_shape s = decode_shape(f->batch, f->context, 1, u->prec);
    rated_device cal = device_rated(d);
    if (layout_decoder_step_cost(m, &d->timed, &s, &a->pl, &a->l, &a->c, err, sizeof err) != 0 ||
        (cal.have && layout_decoder_step_cost(m, &cal.gpu, &s, &a->pl, &a->l, &a->cc, err, sizeof err) != 0))
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    return 0;
}

static void report_answer(report *r, const ep_cmd_flags *f, const model_on_device *u, const ep_answer *a)
{
    int batch = f->batch, ep = a->pl.moe_ep, ranks = a->pl.attention_dp;
    const step_cost *c = &a->c, *cc = &a->cc;
    report_section(r, "The group");
    report_text(r, "model", "model", u->model->key);
    report_int(r, "ep", "expert-parallel GPUs", ep);
    report_int(r, "batch_per_gpu", "sequences each GPU decodes", batch);
    report_int(r, "context", "context (tokens)", f->context);
    precision_report_formats(r, u->model, &u->prec);
    device_report(r, &u->device);
    layout_report(r, &a->pl, batch);
    report_section(r, "Memory per GPU");
    report_num(r, "weight_bytes_per_gpu", "weights (experts / ep, the rest whole)", U_BYTES, a->fit.weights);
    report_num(r, "kv_budget_bytes", "left for KV", U_BYTES, a->fit.kv_budget);
    report_int(r, "max_batch", "largest batch per GPU at this context", a->fit.max_batch);
    report_section(r, "Experts");
    report_num(r, "experts_per_gpu", "routed experts each GPU holds", U_REAL, a->a2a.experts_per_gpu);
    report_num(r, "experts_touched_per_gpu", "of them touched by the group's tokens (the busiest GPU)", U_REAL,
               a->touched);
    report_num(r, "busiest_gpu_load", "the busiest GPU's load over the mean", U_REAL, a->busy.imbalance);
    device_report_first(r, &u->device, 1, "all-to-all, one MoE layer");
    report_num(r, "dispatch_bytes", "bytes a GPU sends in a dispatch", U_BYTES, a->a2a.dispatch_bytes);
    report_num(r, "combine_bytes", "and in a combine", U_BYTES, a->a2a.combine_bytes);
    report_num(r, "intra_node_share", "share inside the node (NVLink)", U_REAL, a->a2a.intra_share);
    report_num(r, "dispatch_time", "dispatch", U_SECONDS, a->a2a.dispatch_time);
    report_num(r, "combine_time", "combine", U_SECONDS, a->a2a.combine_time);
    device_report_again(r, &u->device, 1, "one decode step, per GPU");
    report_num(r, "step_weight_bytes", "weight bytes read", U_BYTES, c->weight_bytes);
    report_num(r, "step_kv_bytes", "KV bytes read and written", U_BYTES, c->kv_bytes);
    report_num(r, "time_comm", "all-to-alls", U_SECONDS, c->time_comm);
    report_num(r, "step_time", "step time (op rooflines + all-to-alls)", U_SECONDS, c->time);
    report_num(r, "tokens_per_s_per_gpu", "tokens/s per GPU", U_TOKENS_PER_S, batch / c->time);
    report_num(r, "tokens_per_s", "tokens/s, the group", U_TOKENS_PER_S, (double)batch * ranks / c->time);
    report_num(r, "tokens_per_s_per_user", "tokens/s per user", U_TOKENS_PER_S, 1 / c->time);
    if (u->device.rates.have) { /* the all-to-alls keep their link model: no published table measures them */
        /* the group's section above already names the calibration */
        device_report_calibrated_section(r, &u->device, "the same step", NULL);
        report_num(r, "step_time_calibrated", "step time, calibrated", U_SECONDS, cc->time);
        cli_band_none(r, "step_time_calibrated", NO_RUN_LIKE_IT);
        report_num(r, "tokens_per_s_calibrated", "tokens/s, the group, calibrated", U_TOKENS_PER_S,
                   (double)batch * ranks / cc->time);
        cli_band_none(r, "tokens_per_s_calibrated", NO_RUN_LIKE_IT);
        report_num(r, "tokens_per_s_per_user_calibrated", "tokens/s per user, calibrated", U_TOKENS_PER_S,
                   1 / cc->time);
        cli_band_none(r, "tokens_per_s_per_user_calibrated", NO_RUN_LIKE_IT);
    }
}

int cmd_ep(int argc, char **argv)
{
    ep_cmd_flags f;
    cli_common common;
    int rc = parse(argc, argv, &f, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if ((rc = check(&f)) != 0)
        return rc;
    model_on_device u;
    ep_answer a;
    report *r = NULL;
    if ((rc = model_on_device_resolve(DOC.name, &common, &f.prec, f.model_key, &f.device, &u)) != 0 ||
        (rc = compute(&f, &u, &a)) != 0)
        goto done;
    r = report_new(DOC.name);
    report_answer(r, &f, &u, &a);
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    model_on_device_free(&u);
    return rc;
}
