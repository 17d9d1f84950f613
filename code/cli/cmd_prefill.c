/* napkin prefill: one prefill step of a prompt, op by op summed: FLOPs,
 * bytes, time, bound and the collectives, with logits only where the server
 * samples. */
#include "cli_device.h"
#include "cli_ep.h"
#include "commands.h"
#include "roofline.h"

#include <math.h>

static const cli_doc DOC = {
    "prefill",
    "one prefill step: FLOPs, bytes, time and bound of a prompt, logits where the server samples",
    "--model M --gpu G [--tp N] [--prompt T] [--batch B] [--all-logits] [--dtype D]\n"
    "                     [--efficiency F | --bw-efficiency F --flops-efficiency F | --calibrate DIR]\n"
    "                     [--no-comm] [--routing-skew S] [--ep N [--gpus-per-node N] [--net-gb-s B]\n"
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

/* One GPU's step: of a tp replica, or of the expert-parallel group. */
static int price_step(const model_spec *m, const gpu_spec *g, const step_shape *sh, const ep_layout *epl,
                      step_cost *c, char *err, size_t errlen)
{
    return epl->ep > 1 ? ep_decoder_step_cost(m, g, sh, epl, c, err, errlen)
                       : decoder_step_cost(m, g, sh, c, err, errlen);
}

int cmd_prefill(int argc, char **argv)
{
    device_flags df = device_flags_default();
    const char *model_key = NULL, *dtype_s = "bf16";
    int tp = 1, prompt = 2048, batch = 1, all_logits = 0, no_comm = 0;
    ep_flags epf = ep_flags_default();
    cli_opt opts[DEVICE_NOPTS + 7 + EP_NOPTS];
    device_flag_opts(&df, opts);
    ep_flag_opts(&epf, opts + DEVICE_NOPTS + 7);
    cli_opt more[] = {
        {"--model", OPT_STRING, &model_key, "M", "model key (napkin specs --models)", 1, 0},
        {"--tp", OPT_POS_INT, &tp, "N", "tensor-parallel degree (default 1)", 0, 0},
        {"--prompt", OPT_POS_INT, &prompt, "T", "prompt tokens per sequence (default 2048)", 0, 0},
        {"--batch", OPT_POS_INT, &batch, "B", "sequences prefilled together (default 1)", 0, 0},
        {"--all-logits", OPT_FLAG, &all_logits, NULL, "logits at every prompt position", 0, 0},
        {"--dtype", OPT_STRING, &dtype_s, "D", "weights, KV, activations and compute (default bf16)", 0, 0},
        {"--no-comm", OPT_FLAG, &no_comm, NULL, "leave the tensor-parallel collectives out", 0, 0},
    };
    for (int i = 0; i < 7; i++)
        opts[DEVICE_NOPTS + i] = more[i];
    cli_common common;
    int rc = cli_parse(&DOC, argc, argv, opts, CLI_NOPTS(opts), &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    precision prec;
    if ((rc = cli_precision(DOC.name, dtype_s, NULL, NULL, NULL, NULL, &prec)) != 0)
        return rc;
    cli_specs specs;
    if ((rc = cli_specs_load(DOC.name, &common, &specs)) != 0)
        return rc;
    const model_spec *m;
    device_setup d;
    if ((rc = device_model_resolve(DOC.name, &specs, model_key, &df, prec.compute, &m, &d)) != 0) {
        cli_specs_free(&specs);
        return rc;
    }
    ep_layout epl;
    if ((rc = ep_flags_layout(DOC.name, &epf, m, tp, prec, &epl)) != 0) {
        cli_specs_free(&specs);
        return rc;
    }
    step_shape sh = prefill_shape(batch, 0, prompt, tp, prec);
    sh.logits_last = !all_logits;
    sh.skip_comm = no_comm;
    sh.routing_skew = epl.routing_skew;
    char err[512];
    if (epl.ep > 1 && no_comm) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_USAGE, "--no-comm with --ep: the all-to-alls are the point of expert "
                                              "parallelism; leave --no-comm out");
    }
    if (step_shape_check(m, &sh, err, sizeof err) != 0) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_USAGE, "--tp %d: %s", tp, err);
    }
    resident_model rm = {m, prec, tp};
    fit_check fit;
    if (memory_fit(&d.timed, memory_policy_default(), &rm, 1, 0, batch, prompt, &fit, err, sizeof err) != 0 ||
        (epl.ep > 1 && ep_fit_adjust(m, prec, epl.ep, tp, batch, prompt, &fit, err, sizeof err) != 0)) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    }
    if (!fit.fits) {
        char why[320];
        fit_check_describe(&fit, batch, prompt, why, sizeof why);
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_NO_FIT, "--batch %d of --prompt %d does not fit: %s", batch, prompt, why);
    }
    step_cost c, sheet_cost;
    if (price_step(m, &d.timed, &sh, &epl, &c, err, sizeof err) != 0 ||
        (d.calibrated && d.has_sheet && price_step(m, &d.sheet, &sh, &epl, &sheet_cost, err, sizeof err) != 0)) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_USAGE, "%s%s", err, no_comm ? "" : " (or --no-comm)");
    }
    step_cost cc;
    if (d.rates.have && price_step(m, &d.rates.gpu, &sh, &epl, &cc, err, sizeof err) != 0) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    }
    report *r = report_new(DOC.name);
    report_section(r, "Prefill");
    report_text(r, "model", "model", m->key);
    report_int(r, "tp", "tensor-parallel degree", tp);
    report_int(r, "prompt", "prompt tokens per sequence", prompt);
    report_int(r, "batch", "sequences", batch);
    report_num(r, "logit_positions", "positions with logits", U_TOKENS, all_logits ? (double)batch * prompt : batch);
    device_report(r, &d);
    report_section(r, "One prefill step, per GPU");
    report_num(r, "flop", "FLOP", U_FLOP, c.flop);
    report_num(r, "weight_bytes", "weight bytes read", U_BYTES, c.weight_bytes);
    report_num(r, "kv_bytes", "KV bytes read and written", U_BYTES, c.kv_bytes);
    report_num(r, "act_bytes", "activation bytes", U_BYTES, c.act_bytes);
    report_num(r, "intensity", "intensity", U_INTENSITY, c.intensity);
    report_num(r, "time_compute", "compute time (FLOP / peak)", U_SECONDS, c.time_compute);
    report_num(r, "time_memory", "memory time (bytes / bandwidth)", U_SECONDS, c.time_memory);
    report_num(r, "time_comm", "communication (TP collectives)", U_SECONDS, c.time_comm);
    add_step(r, "", d.calibrated ? " (measured ceilings)" : "", &c);
    report_num(r, "tokens_per_s", "prompt tokens per second", U_TOKENS_PER_S, (double)batch * prompt / c.time);
    if (d.calibrated && d.has_sheet)
        add_step(r, "datasheet_", " (datasheet)", &sheet_cost);
    if (epl.ep > 1) {
        ep_report(r, m, &d.timed, &epl, tp, (double)batch * prompt / tp);
        report_num(r, "group_tokens_per_s", "prompt tokens per second, the whole group", U_TOKENS_PER_S,
                   (double)batch * prompt * epl.ep / tp / c.time);
    }
    if (d.rates.have) {
        report_section(r, "The same step at measured kernel rates (calibrated)");
        report_num(r, "time_calibrated", "prefill time, calibrated", U_SECONDS, cc.time);
        report_num(r, "time_comm_calibrated", "communication, calibrated", U_SECONDS, cc.time_comm);
        report_num(r, "tokens_per_s_calibrated", "prompt tokens per second, calibrated", U_TOKENS_PER_S,
                   (double)batch * prompt / cc.time);
        report_num(r, "calibrated_over_roofline", "calibrated / roofline time", U_REAL, cc.time / c.time);
    }
    rc = report_print(r, common.format, stdout);
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
