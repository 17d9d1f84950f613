/* napkin ep: one decode step of a mixture of experts spread over an
 * expert-parallel group, the attention data-parallel: memory per GPU, the
 * experts the group's tokens touch, the all-to-alls and tokens per second. */
#include "cli_device.h"
#include "commands.h"
#include "expert_parallel.h"

#include <math.h>

static const cli_doc DOC = {
    "ep",
    "expert parallelism: a MoE decode step over an EP group, memory, all-to-all, tokens per second",
    "--model M --gpu G --ep N [--batch B] [--context C] [--dtype D] [--net-gb-s B]\n"
    "                     [--gpus-per-node N] [--imbalance F | --routing-skew S] [--usable F]\n"
    "                     [--format table|tsv|json]",
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

int cmd_ep(int argc, char **argv)
{
    device_flags df = device_flags_default();
    const char *model_key = NULL, *dtype_s = "bf16";
    int ep = 0, batch = 1, context = 4096, per_node = 8;
    double net_gb_s = 50, imbalance = 1, usable = NAN, skew = 0;
    cli_opt more[] = {
        {"--model", OPT_STRING, &model_key, "M", "model key (napkin specs --models)", 1, 0},
        {"--ep", OPT_POS_INT, &ep, "N", "GPUs the routed experts are spread over", 1, 0},
        {"--batch", OPT_POS_INT, &batch, "B", "sequences each GPU decodes (default 1)", 0, 0},
        {"--context", OPT_POS_INT, &context, "C", "tokens cached per sequence (default 4096)", 0, 0},
        {"--dtype", OPT_STRING, &dtype_s, "D", "weights, KV, activations and compute (default bf16)", 0, 0},
        {"--net-gb-s", OPT_POS_REAL, &net_gb_s, "B", "network GB/s per GPU across nodes (default 50)", 0, 0},
        {"--gpus-per-node", OPT_POS_INT, &per_node, "N", "GPUs joined by NVLink (default 8)", 0, 0},
        {"--imbalance", OPT_POS_REAL, &imbalance, "F", "busiest GPU's load over the mean, >= 1 (default 1)", 0, 0},
        {"--usable", OPT_FRACTION, &usable, "F", "share of GPU memory the server may use (default 0.9)", 0, 0},
        {"--routing-skew", OPT_POS_REAL, &skew, "S", "a Zipf(S) router over the experts (default uniform)", 0, 0},
    };
    enum { NMORE = (int)(sizeof more / sizeof more[0]) };
    cli_opt opts[DEVICE_NOPTS + NMORE];
    device_flag_opts(&df, opts);
    for (int i = 0; i < NMORE; i++)
        opts[DEVICE_NOPTS + i] = more[i];
    cli_common common;
    int rc = cli_parse(&DOC, argc, argv, opts, CLI_NOPTS(opts), &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if (imbalance != 1 && skew > 0)
        return cli_fail(DOC.name, EXIT_USAGE, "give --imbalance or --routing-skew, not both: the skewed router sets "
                                              "the busiest GPU's load");
    if (imbalance < 1)
        return cli_fail(DOC.name, EXIT_USAGE, "--imbalance %g: the busiest GPU carries at least the mean (>= 1)",
                        imbalance);
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
    char err[512];
    ep_layout l = {ep, per_node, net_gb_s * 1e9, imbalance, dtype_bytes(prec.act) < 2 ? 1.0 : 2.0, 2.0, skew};
    ep_cost a2a;
    fit_check fit;
    memory_policy pol = cli_policy(usable, -1, -1, 0);
    ep_layout busy = l;
    double touched = 0;
    if (ep_busiest_gpu(m, &l, (double)batch * ep, &busy.imbalance, &touched, err, sizeof err) != 0 ||
        ep_step_cost(m, &d.timed, &busy, batch, &a2a, err, sizeof err) != 0 ||
        ep_memory_fit(m, &d.timed, prec, pol, ep, batch, context, &fit, err, sizeof err) != 0) {
        rc = cli_fail(DOC.name, EXIT_USAGE, "--ep %d: %s", ep, err);
        cli_specs_free(&specs);
        return rc;
    }
    if (!fit.fits) {
        char why[320];
        fit_check_describe(&fit, batch, context, why, sizeof why);
        rc = cli_fail(DOC.name, EXIT_NO_FIT, "--batch %d per GPU at --ep %d does not fit: %s", batch, ep, why);
        cli_specs_free(&specs);
        return rc;
    }
    step_shape s = decode_shape(batch, context, 1, prec);
    step_cost c, cc;
    if (ep_decoder_step_cost(m, &d.timed, &s, &l, &c, err, sizeof err) != 0 ||
        (d.rates.have && ep_decoder_step_cost(m, &d.rates.gpu, &s, &l, &cc, err, sizeof err) != 0)) {
        rc = cli_fail(DOC.name, EXIT_USAGE, "%s", err);
        cli_specs_free(&specs);
        return rc;
    }
    report *r = report_new(DOC.name);
    report_section(r, "The group");
    report_text(r, "model", "model", m->key);
    report_int(r, "ep", "expert-parallel GPUs", ep);
    report_int(r, "batch_per_gpu", "sequences each GPU decodes", batch);
    report_int(r, "context", "context (tokens)", context);
    device_report(r, &d);
    report_section(r, "Memory per GPU");
    report_num(r, "weight_bytes_per_gpu", "weights (experts / ep, the rest whole)", U_BYTES, fit.weights);
    report_num(r, "kv_budget_bytes", "left for KV", U_BYTES, fit.kv_budget);
    report_int(r, "max_batch", "largest batch per GPU at this context", fit.max_batch);
    report_section(r, "Experts");
    report_num(r, "experts_per_gpu", "routed experts each GPU holds", U_REAL, a2a.experts_per_gpu);
    report_num(r, "experts_touched_per_gpu", "of them touched by the group's tokens (the busiest GPU)", U_REAL,
               touched);
    report_num(r, "busiest_gpu_load", "the busiest GPU's load over the mean", U_REAL, busy.imbalance);
    report_section(r, "All-to-all, one MoE layer");
    report_num(r, "dispatch_bytes", "bytes a GPU sends in a dispatch", U_BYTES, a2a.dispatch_bytes);
    report_num(r, "combine_bytes", "and in a combine", U_BYTES, a2a.combine_bytes);
    report_num(r, "intra_node_share", "share inside the node (NVLink)", U_REAL, a2a.intra_share);
    report_num(r, "dispatch_time", "dispatch", U_SECONDS, a2a.dispatch_time);
    report_num(r, "combine_time", "combine", U_SECONDS, a2a.combine_time);
    report_section(r, "One decode step, per GPU");
    report_num(r, "step_weight_bytes", "weight bytes read", U_BYTES, c.weight_bytes);
    report_num(r, "step_kv_bytes", "KV bytes read and written", U_BYTES, c.kv_bytes);
    report_num(r, "time_comm", "all-to-alls", U_SECONDS, c.time_comm);
    report_num(r, "step_time", "step time (op rooflines + all-to-alls)", U_SECONDS, c.time);
    report_num(r, "tokens_per_s_per_gpu", "tokens/s per GPU", U_TOKENS_PER_S, batch / c.time);
    report_num(r, "tokens_per_s", "tokens/s, the group", U_TOKENS_PER_S, (double)batch * ep / c.time);
    report_num(r, "tokens_per_s_per_user", "tokens/s per user", U_TOKENS_PER_S, 1 / c.time);
    if (d.rates.have) { /* the all-to-alls keep their link model: no published table measures them */
        report_section(r, "The same step at measured kernel rates (calibrated)");
        report_num(r, "step_time_calibrated", "step time, calibrated", U_SECONDS, cc.time);
        report_num(r, "tokens_per_s_calibrated", "tokens/s, the group, calibrated", U_TOKENS_PER_S,
                   (double)batch * ep / cc.time);
        report_num(r, "tokens_per_s_per_user_calibrated", "tokens/s per user, calibrated", U_TOKENS_PER_S,
                   1 / cc.time);
    }
    rc = report_print(r, common.format, stdout);
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
