/* napkin prefill: one prefill step of a prompt, op by op summed: FLOPs,
 * bytes, time, bound and the collectives, with logits only where the server
 * samples. */
#include "cli_band.h"
#include "cli_ep.h"
#include "cli_model_on_device.h"
#include "commands.h"
#include "roofline.h"

#include <math.h>
#include <string.h>

/* Beside each calibrated row (cli_band.h): why it has no measured error band. */
static const char NO_RUN_LIKE_IT[] = "no measured run like this one (the serving runs time no prefill alone)";

static const cli_doc DOC = {
    "prefill",
    "one prefill step: FLOPs, bytes, time and bound of a prompt, logits where the server samples",
    "--model M --gpu G [--tp N] [--prompt T] [--batch B] [--all-logits]\n"
    "                     [--dtype D] [--weights Q] [--moe-weights Q] [--kv D]\n"
    "                     [--efficiency F | --bw-efficiency F --flops-efficiency F | --calibrate DIR|NAME]\n"
    "                     [--roofline] [--no-comm] [--routing-skew S] [--ep N [--gpus-per-node N] [--net-gb-s B]\n"
    "                     [--imbalance F]] [--format table|tsv|json]",
    "A prefill runs the whole prompt of each of --batch sequences in one step:\n"
    "2 x parameters x tokens for the projections plus causal attention (each\n"
    "position attends to those before it), at the roofline of each op, plus the\n"
    "tensor-parallel collectives.  Logits are computed at each sequence's last\n"
    "position (where the first output token is sampled); --all-logits computes\n"
    "them at every position, as speculative verification needs.  With\n"
    "--calibrate DIR the measured ceilings replace the datasheet's and both\n"
    "predictions are shown.  --ep N: the routed experts spread over N GPUs, the\n"
    "attention in N/tp replicas of --tp GPUs, each prefilling --batch prompts at\n"
    "once (every replica in the same step), with the all-to-all dispatch and\n"
    "combine of each MoE layer (as napkin decode --ep and napkin ep).\n"
    "Exit status 1 when the prompts do not fit memory.",
};

static void add_step(report *r, const char *prefix, const char *label, const step_cost *c)
{
    char key[64], lab[96];
    snprintf(key, sizeof key, "%stime", prefix);
    snprintf(lab, sizeof lab, "prefill time%s", label);
    report_num(r, key, lab, U_SECONDS, c->time);
    snprintf(key, sizeof key, "%sbound", prefix);
    snprintf(lab, sizeof lab, "set by%s", label);
    report_text(r, key, lab, bound_name(c->bound));
}

/* One GPU's step: of a tp replica, or of the split layout. */
static int price_step(const model_spec *m, const gpu_spec *g, const step_shape *sh, const parallel_layout *pl,
                      const ep_layout *epl, step_cost *c, char *err, size_t errlen)
{
    return layout_is_split(pl) ? layout_decoder_step_cost(m, g, sh, pl, epl, c, err, errlen)
                               : decoder_step_cost(m, g, sh, c, err, errlen);
}

typedef struct {
    device_flags device;
    ep_flags ep;
    precision_flags prec;
    const char *model_key;
    int tp, prompt, batch, all_logits, no_comm;
} prefill_flags;

static int parse(int argc, char **argv, prefill_flags *f, cli_common *common)
{
    *f = (prefill_flags){.device = device_flags_default(DEVICE_PRICING | DEVICE_EFFICIENCY, NULL),
                         .ep = ep_flags_default(), .prec = precision_flags_default(), .tp = 1, .prompt = 2048, .batch = 1};
    cli_opt opts[DEVICE_NOPTS_MAX + 6 + PRECISION_NOPTS + EP_NOPTS];
    const cli_opt mine[] = {
        {"--model", OPT_STRING, &f->model_key, "M", "model key (napkin specs --models)", 1, 0},
        {"--tp", OPT_POS_INT, &f->tp, "N", "tensor-parallel degree (default 1)", 0, 0},
        {"--prompt", OPT_POS_INT, &f->prompt, "T", "prompt tokens per sequence (default 2048)", 0, 0},
        {"--batch", OPT_POS_INT, &f->batch, "B", "sequences prefilled together (default 1)", 0, 0},
        {"--all-logits", OPT_FLAG, &f->all_logits, NULL, "logits at every prompt position", 0, 0},
        {"--no-comm", OPT_FLAG, &f->no_comm, NULL, "leave the tensor-parallel collectives out", 0, 0},
    };
    int n = device_flag_opts(&f->device, DEVICE_PRICING | DEVICE_EFFICIENCY, opts);
    memcpy(opts + n, mine, sizeof mine);
    n += CLI_NOPTS(mine);
    precision_flag_opts(&f->prec, opts + n);
    n += PRECISION_NOPTS;
    ep_flag_opts(&f->ep, opts + n);
    n += EP_NOPTS;
    return cli_parse(&DOC, argc, argv, opts, n, common);
}

/* The prompts must fit beside the weights before they are timed. */
static int check_fit(const prefill_flags *f, const model_on_device *u, const parallel_layout *pl)
{
    resident_model rm = {u->model, u->prec, f->tp};
    fit_check fit;
    char err[512];
    if (memory_fit(&u->device.timed, memory_policy_default(), &rm, 1, 0, f->batch, f->prompt, &fit, err,
                   sizeof err) != 0 ||
        (layout_is_split(pl) &&
         layout_fit_adjust(u->model, u->prec, pl, f->batch, f->prompt, &fit, err, sizeof err) != 0))
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    if (fit.fits)
        return 0;
    char why[320];
    fit_check_describe(&fit, f->batch, f->prompt, why, sizeof why);
    return cli_fail(DOC.name, EXIT_NO_FIT, "--batch %d of --prompt %d does not fit: %s", f->batch, f->prompt, why);
}

/* The step on the timed device, on the datasheet beside a GPU set, and calibrated. */
typedef struct {
    ep_layout epl;
    parallel_layout pl;
    step_shape sh;
    step_cost c, sheet_cost, cc;
} prefill_answer;

static int resolve(const prefill_flags *f, const model_on_device *u, prefill_answer *a)
{
    int rc;
    if ((rc = ep_flags_layout(DOC.name, &f->ep, u->model, &u->device.timed, f->tp, u->prec, &a->epl, &a->pl)) != 0)
        return rc;
    a->sh = prefill_shape(f->batch, 0, f->prompt, f->tp, u->prec);
    a->sh.logits_last = !f->all_logits;
    a->sh.skip_comm = f->no_comm;
    a->sh.routing_skew = a->epl.routing_skew;
    char err[512];
    if (layout_is_split(&a->pl) && f->no_comm)
        return cli_fail(DOC.name, EXIT_USAGE, "--no-comm with --ep or --attention-dp: the all-to-alls are the point "
                                              "of expert parallelism; leave --no-comm out");
    if (step_shape_check(u->model, &a->sh, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--tp %d: %s", f->tp, err);
    return check_fit(f, u, &a->pl);
}

static int compute(const prefill_flags *f, const model_on_device *u, prefill_answer *a)
{
    const device_setup *d = &u->device;
    char err[512];
    if (price_step(u->model, &d->timed, &a->sh, &a->pl, &a->epl, &a->c, err, sizeof err) != 0 ||
        (d->calibrated && d->has_sheet &&
         price_step(u->model, &d->sheet, &a->sh, &a->pl, &a->epl, &a->sheet_cost, err, sizeof err) != 0))
        return cli_fail(DOC.name, EXIT_USAGE, "%s%s", err, f->no_comm ? "" : " (or --no-comm)");
    rated_device cal = device_rated(d);
    if (cal.have && price_step(u->model, &cal.gpu, &a->sh, &a->pl, &a->epl, &a->cc, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    return 0;
}

static void report_answer(report *r, const prefill_flags *f, const model_on_device *u, const prefill_answer *a)
{
    const device_setup *d = &u->device;
    const step_cost *c = &a->c, *cc = &a->cc;
    double tokens = (double)f->batch * f->prompt;
    report_section(r, "Prefill");
    report_text(r, "model", "model", u->model->key);
    report_int(r, "tp", "tensor-parallel degree", f->tp);
    report_int(r, "prompt", "prompt tokens per sequence", f->prompt);
    report_int(r, "batch", "sequences", f->batch);
    report_num(r, "logit_positions", "positions with logits", U_TOKENS, f->all_logits ? tokens : f->batch);
    device_report(r, d);
    device_report_first(r, d, 1, "one prefill step, per GPU");
    report_num(r, "flop", "FLOP", U_FLOP, c->flop);
    report_num(r, "weight_bytes", "weight bytes read", U_BYTES, c->weight_bytes);
    report_num(r, "kv_bytes", "KV bytes read and written", U_BYTES, c->kv_bytes);
    report_num(r, "act_bytes", "activation bytes", U_BYTES, c->act_bytes);
    report_num(r, "intensity", "intensity", U_INTENSITY, c->intensity);
    report_num(r, "time_compute", "compute time (FLOP / peak)", U_SECONDS, c->time_compute);
    report_num(r, "time_memory", "memory time (bytes / bandwidth)", U_SECONDS, c->time_memory);
    report_num(r, "time_comm", "communication (TP collectives)", U_SECONDS, c->time_comm);
    add_step(r, "", d->calibrated ? " (measured ceilings)" : "", c);
    report_num(r, "tokens_per_s", "prompt tokens per second", U_TOKENS_PER_S, tokens / c->time);
    if (d->calibrated && d->has_sheet)
        add_step(r, "datasheet_", " (datasheet)", &a->sheet_cost);
    if (layout_is_split(&a->pl)) {
        layout_report(r, &a->pl, f->batch);
        if (a->epl.ep > 1)
            ep_report(r, u->model, &d->timed, &a->epl, f->tp, tokens / f->tp);
        report_num(r, "group_tokens_per_s", "prompt tokens per second, the whole replica", U_TOKENS_PER_S,
                   tokens * a->pl.attention_dp / c->time);
        report_num(r, "tokens_per_s_per_gpu", "prompt tokens per second per GPU of the replica", U_TOKENS_PER_S,
                   tokens * a->pl.attention_dp / layout_gpus(&a->pl) / c->time);
    }
    if (d->rates.have) {
        device_report_calibrated_section(r, d, "the same step", NULL); /* the first section names the calibration */
        report_num(r, "time_calibrated", "prefill time, calibrated", U_SECONDS, cc->time);
        cli_band_none(r, "time_calibrated", NO_RUN_LIKE_IT);
        report_num(r, "time_comm_calibrated", "communication, calibrated", U_SECONDS, cc->time_comm);
        cli_band_none(r, "time_comm_calibrated", NO_RUN_LIKE_IT);
        report_num(r, "tokens_per_s_calibrated", "prompt tokens per second, calibrated", U_TOKENS_PER_S,
                   tokens / cc->time);
        cli_band_none(r, "tokens_per_s_calibrated", NO_RUN_LIKE_IT);
        report_num(r, "calibrated_over_roofline", "calibrated / roofline time", U_REAL, cc->time / c->time);
        cli_band_none(r, "calibrated_over_roofline", NO_RUN_LIKE_IT);
    }
}

int cmd_prefill(int argc, char **argv)
{
    prefill_flags f;
    cli_common common;
    int rc = parse(argc, argv, &f, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    model_on_device u;
    prefill_answer a;
    report *r = NULL;
    if ((rc = model_on_device_resolve(DOC.name, &common, &f.prec, f.model_key, &f.device, &u)) != 0 ||
        (rc = resolve(&f, &u, &a)) != 0 || (rc = compute(&f, &u, &a)) != 0)
        goto done;
    r = report_new(DOC.name);
    report_answer(r, &f, &u, &a);
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    model_on_device_free(&u);
    return rc;
}
