/* napkin ep: one decode step of a mixture of experts spread over an
 * expert-parallel group, the attention data-parallel: memory per GPU, the
 * experts the group's tokens touch, the all-to-alls and tokens per second. */
#include "cli_band.h"
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
    "--model M --gpu G --ep N [--batch B] [--context C] [--dtype D] [--net-gb-s B]\n"
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
    "napkin decode, prefill and serve take --ep too, with --tp attention replicas.\n"
    "Exit status 1 when the batch does not fit a GPU (the message gives the\n"
    "largest that does); 2 for a bad flag, a dense model or an --ep that does\n"
    "not divide the experts.",
};

typedef struct {
    device_flags device;
    const char *model_key, *dtype_s;
    int ep, batch, context, per_node;
    double net_gb_s, imbalance, skew;
} ep_cmd_flags;

static int parse(int argc, char **argv, ep_cmd_flags *f, cli_common *common)
{
    *f = (ep_cmd_flags){.device = device_flags_default(DEVICE_PRICING | DEVICE_EFFICIENCY | DEVICE_USABLE, NULL),
                        .dtype_s = "bf16", .batch = 1, .context = 4096, .per_node = 8, .net_gb_s = 50,
                        .imbalance = 1};
    cli_opt opts[2 * DEVICE_NOPTS_MAX + 9];
    const cli_opt group[] = {
        {"--model", OPT_STRING, &f->model_key, "M", "model key (napkin specs --models)", 1, 0},
        {"--ep", OPT_POS_INT, &f->ep, "N", "GPUs the routed experts are spread over", 1, 0},
        {"--batch", OPT_POS_INT, &f->batch, "B", "sequences each GPU decodes (default 1)", 0, 0},
        {"--context", OPT_POS_INT, &f->context, "C", "tokens cached per sequence (default 4096)", 0, 0},
        {"--dtype", OPT_STRING, &f->dtype_s, "D", "weights, KV, activations and compute (default bf16)", 0, 0},
        {"--net-gb-s", OPT_POS_REAL, &f->net_gb_s, "B", "network GB/s per GPU across nodes (default 50)", 0, 0},
        {"--gpus-per-node", OPT_POS_INT, &f->per_node, "N", "GPUs joined by NVLink (default 8)", 0, 0},
        {"--imbalance", OPT_POS_REAL, &f->imbalance, "F", "busiest GPU's load over the mean, >= 1 (default 1)", 0, 0},
    };
    const cli_opt skew = {"--routing-skew", OPT_POS_REAL, &f->skew, "S",
                          "a Zipf(S) router over the experts (default uniform)", 0, 0};
    int n = device_flag_opts(&f->device, DEVICE_PRICING | DEVICE_EFFICIENCY, opts);
    memcpy(opts + n, group, sizeof group);
    n += CLI_NOPTS(group);
    n += device_flag_opts(&f->device, DEVICE_USABLE, opts + n);
    opts[n++] = skew;
    return cli_parse(&DOC, argc, argv, opts, n, common);
}

static int check(const ep_cmd_flags *f)
{
    if (f->imbalance != 1 && f->skew > 0)
        return cli_fail(DOC.name, EXIT_USAGE, "give --imbalance or --routing-skew, not both: the skewed router sets "
                                              "the busiest GPU's load");
    if (f->imbalance < 1)
        return cli_fail(DOC.name, EXIT_USAGE, "--imbalance %g: the busiest GPU carries at least the mean (>= 1)",
                        f->imbalance);
    return 0;
}

/* The group's memory and all-to-alls, and its decode step both ways. */
typedef struct {
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
    char err[512];
    a->l = (ep_layout){f->ep, f->per_node, f->net_gb_s * 1e9, f->imbalance, dtype_bytes(u->prec.act) < 2 ? 1.0 : 2.0,
                       2.0, f->skew, 0, MOE_EXCHANGE_ALLTOALL};
    a->busy = a->l;
    a->touched = 0;
    memory_policy pol = device_policy(&f->device, -1, -1);
    if (ep_busiest_gpu(m, &a->l, (double)f->batch * f->ep, &a->busy.imbalance, &a->touched, err, sizeof err) != 0 ||
        ep_step_cost(m, &d->timed, &a->busy, f->batch, &a->a2a, err, sizeof err) != 0 ||
        ep_memory_fit(m, &d->timed, u->prec, pol, f->ep, f->batch, f->context, &a->fit, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--ep %d: %s", f->ep, err);
    if (!a->fit.fits) {
        char why[320];
        fit_check_describe(&a->fit, f->batch, f->context, why, sizeof why);
        return cli_fail(DOC.name, EXIT_NO_FIT, "--batch %d per GPU at --ep %d does not fit: %s", f->batch, f->ep, why);
    }
    step_shape s = decode_shape(f->batch, f->context, 1, u->prec);
    rated_device cal = device_rated(d);
    if (ep_decoder_step_cost(m, &d->timed, &s, &a->l, &a->c, err, sizeof err) != 0 ||
        (cal.have && ep_decoder_step_cost(m, &cal.gpu, &s, &a->l, &a->cc, err, sizeof err) != 0))
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    return 0;
}

static void report_answer(report *r, const ep_cmd_flags *f, const model_on_device *u, const ep_answer *a)
{
    int batch = f->batch, ep = f->ep;
    const step_cost *c = &a->c, *cc = &a->cc;
    report_section(r, "The group");
    report_text(r, "model", "model", u->model->key);
    report_int(r, "ep", "expert-parallel GPUs", ep);
    report_int(r, "batch_per_gpu", "sequences each GPU decodes", batch);
    report_int(r, "context", "context (tokens)", f->context);
    device_report(r, &u->device);
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
    report_num(r, "tokens_per_s", "tokens/s, the group", U_TOKENS_PER_S, (double)batch * ep / c->time);
    report_num(r, "tokens_per_s_per_user", "tokens/s per user", U_TOKENS_PER_S, 1 / c->time);
    if (u->device.rates.have) { /* the all-to-alls keep their link model: no published table measures them */
        /* the group's section above already names the calibration */
        device_report_calibrated_section(r, &u->device, "the same step", NULL);
        report_num(r, "step_time_calibrated", "step time, calibrated", U_SECONDS, cc->time);
        cli_band_none(r, "step_time_calibrated", NO_RUN_LIKE_IT);
        report_num(r, "tokens_per_s_calibrated", "tokens/s, the group, calibrated", U_TOKENS_PER_S,
                   (double)batch * ep / cc->time);
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
    if ((rc = model_on_device_resolve(DOC.name, &common, f.dtype_s, f.model_key, &f.device, &u)) != 0 ||
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
