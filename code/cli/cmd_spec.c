/* napkin spec: speculative decoding on a target model and GPU.  Tokens per
 * round and their distribution, the speedup when verification is free
 * (regime i) and when it costs what the roofline step model says (regime ii),
 * the best draft length, and the batch at which speculation starts to lose. */
#include "cli_args.h"
#include "cli_lookup.h"
#include "cli_rates.h"
#include "commands.h"
#include "specdec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_GAMMA_MAX 64

static const cli_doc spec_doc = {
    .name = "spec",
    .summary = "speculative decoding: tokens per round, speedup in both cost regimes, break-even batch",
    .usage = "--alpha A [--gamma G] [--draft MODEL | --c C] [--draft-tp N] [--draft-gpus shared|own]\n"
             "                     [--model M] [--gpu G] [--tp N] [--batch B] [--context T] [--no-comm]\n"
             "                     [--usable F] [--hbm BYTES] [--batch-max B]\n"
             "                     [--calibrate published:SYSTEM/BACKEND | --roofline]",
    .details = "Regime (i): verifying gamma+1 tokens costs one target step; speedup = E[N] / (gamma c + 1).\n"
               "Regime (ii): the target step with gamma+1 new tokens per sequence and the draft steps cost\n"
               "what the roofline step model says at the batch.  With --c instead of --draft, a draft step\n"
               "costs c target decode steps at every batch.  Break-even batch: the smallest batch at which\n"
               "regime (ii) falls below 1, searched up to the largest batch that fits in memory (and\n"
               "--batch-max); \"none\" (null in JSON) when speculation does not lose within memory.\n"
               "Memory: the target's GPUs hold the target and, with --draft-gpus shared (the default when\n"
               "--draft-tp equals --tp), the draft; each sequence holds context + gamma + 1 tokens of KV for\n"
               "both.  A batch that does not fit exits 1 and names the largest that does.\n"
               "Beside the roofline, the step times, regime (ii) and break-even are priced again at the\n"
               "achieved rates fitted to published kernel measurements (napkin calibrate): by default the\n"
               "GPU's published set (h100, h200), or --calibrate NAME; --roofline gives the bound alone.",
};

/* c as a string: 0 is a valid draft cost (draft heads), OPT_POS_REAL is not. */
/* The one number syntax of every flag (no sign: "-0" is refused), from 0 */
static int parse_c(const char *s, double *out)
{
    return cli_real_in("spec", "--c", s, 0, CLI_REAL_MAX, out);
}

/* The timed answers again, at measured kernel rates. */
typedef struct {
    spec_estimate e;
    int best_gamma, break_even_batch;
    double best_speedup;
} spec_calibrated;

static int spec_calibrated_compute(const spec_setup *roof, const gpu_spec *cal_gpu, double alpha, int gamma,
                                   int search_max, spec_calibrated *out, char *err, size_t errlen)
{
    spec_setup s = *roof;
    s.gpu = cal_gpu;
    if (spec_estimate_compute(&s, alpha, gamma, &out->e, err, errlen) != 0)
        return -1;
    out->best_gamma = spec_best_gamma_roofline(&s, alpha, SPEC_GAMMA_MAX, &out->best_speedup, err, errlen);
    out->break_even_batch = spec_break_even_batch(&s, alpha, gamma, search_max, err, errlen);
    return out->best_gamma < 0 || out->break_even_batch < 0 ? -1 : 0;
}

static void report_calibrated(report *r, const cli_rates *cal, const spec_calibrated *c)
{
    report_section(r, "The same rounds at measured kernel rates (calibrated)");
    cli_rates_report(r, cal);
    if (!cal->have)
        return;
    report_num(r, "t_target_calibrated", "target decode step, calibrated", U_SECONDS, c->e.t_target);
    report_num(r, "t_verify_calibrated", "verification step, calibrated", U_SECONDS, c->e.t_verify);
    report_num(r, "t_draft_calibrated", "draft step, calibrated", U_SECONDS, c->e.t_draft);
    report_num(r, "c_calibrated", "draft cost c, calibrated", U_REAL, c->e.c);
    report_num(r, "speedup_roofline_calibrated", "regime (ii) speedup, calibrated", U_REAL, c->e.speedup_roofline);
    report_int(r, "best_gamma_roofline_calibrated", "best gamma, regime (ii), calibrated", c->best_gamma);
    report_num(r, "best_speedup_roofline_calibrated", "its speedup", U_REAL, c->best_speedup);
    report_num(r, "break_even_batch_calibrated", "batch where regime (ii) falls below 1, calibrated", U_INT,
               c->break_even_batch > 0 ? c->break_even_batch : NAN);
}

int cmd_spec(int argc, char **argv)
{
    double alpha = 0.8;
    int gamma = 4, tp = 4, draft_tp = 0, batch = 1, context = 4096, batch_max = 4096;
    const char *c_text = NULL, *draft_key = NULL, *model_key = "llama3-70b", *gpu_key = "h100";
    const char *dtype_name_s = "bf16", *draft_gpus = NULL;
    int no_comm = 0, roofline = 0;
    const char *calibrate = NULL;
    double usable = NAN, hbm = 0;
    cli_opt opts[] = {
        {"--alpha", OPT_FRACTION, &alpha, "A", "acceptance rate per draft token (default 0.8)", 0, 0},
        {"--gamma", OPT_POS_INT, &gamma, "G", "draft tokens per round (default 4)", 0, 0},
        {"--c", OPT_STRING, &c_text, "C", "draft step / target step (instead of --draft)", 0, 0},
        {"--draft", OPT_STRING, &draft_key, "MODEL", "draft model (default llama3.2-1b)", 0, 0},
        {"--draft-tp", OPT_POS_INT, &draft_tp, "N", "tensor parallel degree of the draft (default --tp)", 0, 0},
        {"--model", OPT_STRING, &model_key, "M", "target model (default llama3-70b)", 0, 0},
        {"--gpu", OPT_STRING, &gpu_key, "G", "GPU (default h100)", 0, 0},
        {"--tp", OPT_POS_INT, &tp, "N", "tensor parallel degree of the target (default 4)", 0, 0},
        {"--batch", OPT_POS_INT, &batch, "B", "sequences in the step (default 1)", 0, 0},
        {"--context", OPT_TOKENS, &context, "T", "tokens cached per sequence (default 4096)", 0, 0},
        {"--dtype", OPT_STRING, &dtype_name_s, "D", "weights, KV, activations (default bf16)", 0, 0},
        {"--batch-max", OPT_POS_INT, &batch_max, "B",
         "largest batch searched for break-even (default 4096; memory may stop it sooner)", 0, 0},
        {"--draft-gpus", OPT_STRING, &draft_gpus, "P",
         "shared: the draft is time-sliced on the target's GPUs; own: it has GPUs of its own "
         "(default shared when --draft-tp equals --tp, own otherwise)", 0, 0},
        {"--no-comm", OPT_FLAG, &no_comm, NULL, "leave the tensor-parallel collectives out", 0, 0},
        {"--usable", OPT_FRACTION, &usable, "F", "share of GPU memory the server may use (default 0.9)", 0, 0},
        {"--hbm", OPT_POS_REAL, &hbm, "BYTES", "memory of one GPU in bytes (default: what the driver reports)",
         0, 0},
        {"--calibrate", OPT_STRING, &calibrate, "NAME",
         "the calibrated answer's rates (default: the GPU's published set)", 0, 0},
        {"--roofline", OPT_FLAG, &roofline, NULL, "the roofline alone, no calibrated answer", 0, 0},
    };
    cli_common common;
    int rc = cli_parse(&spec_doc, argc, argv, opts, CLI_NOPTS(opts), &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if (c_text && draft_key)
        return cli_fail("spec", EXIT_USAGE, "give either --c or --draft, not both");
    if (gamma > SPEC_GAMMA_MAX)
        return cli_fail("spec", EXIT_USAGE, "--gamma: %d is more than %d", gamma, SPEC_GAMMA_MAX);
    int own_gpus = -1;
    if (draft_gpus) {
        if (strcmp(draft_gpus, "shared") == 0)
            own_gpus = 0;
        else if (strcmp(draft_gpus, "own") == 0)
            own_gpus = 1;
        else
            return cli_fail("spec", EXIT_USAGE, "--draft-gpus: '%s' is not a placement (choices: shared, own)",
                            draft_gpus);
    }
    if (cli_hbm_check("spec", hbm) != 0)
        return EXIT_USAGE;
    double c_given = 0.0;
    if (c_text && (rc = parse_c(c_text, &c_given)) != 0)
        return rc;
    if (!c_text && !draft_key)
        draft_key = "llama3.2-1b";

    precision prec;
    if ((rc = cli_precision("spec", dtype_name_s, NULL, NULL, NULL, NULL, &prec)) != 0)
        return rc;
    cli_specs specs;
    if ((rc = cli_specs_load("spec", &common, &specs)) != 0)
        return rc;
    const gpu_spec *gpu;
    const model_spec *target, *draft = NULL;
    if ((rc = cli_find_gpu("spec", &specs, "--gpu", gpu_key, &gpu)) != 0 ||
        (rc = cli_find_model("spec", &specs, "--model", model_key, &target)) != 0 ||
        (draft_key && (rc = cli_find_model("spec", &specs, "--draft", draft_key, &draft)) != 0)) {
        cli_specs_free(&specs);
        return rc;
    }

    spec_setup s = spec_setup_default(target, draft, gpu, tp, batch, context);
    s.draft_tp = draft_tp > 0 ? draft_tp : tp;
    s.draft_own_gpus = own_gpus >= 0 ? own_gpus : s.draft_tp != tp;
    s.draft_c = c_given;
    s.prec = prec;
    char err[512];
    /* The shapes first, so a bad --draft-tp is named as such. */
    step_shape probe = decode_shape(1, context, tp, prec);
    if (step_shape_check(target, &probe, err, sizeof err) != 0) {
        cli_specs_free(&specs);
        return cli_fail("spec", EXIT_USAGE, "--tp %d: %s", tp, err);
    }
    probe.tp = s.draft_tp;
    if (draft && step_shape_check(draft, &probe, err, sizeof err) != 0) {
        cli_specs_free(&specs);
        return cli_fail("spec", EXIT_USAGE, "--draft-tp %d (the draft's degree%s): %s", s.draft_tp,
                        draft_tp > 0 ? "" : ", which defaults to --tp", err);
    }
    /* Nothing is timed for a batch that does not fit. */
    memory_policy pol = cli_policy(usable, -1, -1, hbm);
    spec_fit fit;
    if (spec_memory_fit(&s, pol, gamma, &fit, err, sizeof err) != 0) {
        cli_specs_free(&specs);
        return cli_fail("spec", EXIT_USAGE, "%s", err);
    }
    if (!fit.fits) {
        const fit_check *side = fit.draft_separate && fit.draft_gpu.max_batch < fit.target_gpu.max_batch
                                    ? &fit.draft_gpu
                                    : &fit.target_gpu;
        char why[320];
        fit_check_describe(side, batch, context + gamma + 1, why, sizeof why);
        cli_specs_free(&specs);
        const char *where = side == &fit.draft_gpu ? "the draft's GPUs" : "the target's GPUs";
        if (fit.max_batch < 1)
            return cli_fail("spec", EXIT_NO_FIT, "no batch fits on %s: %s", where, why);
        /* the message ends with the largest batch that fits (the smaller side's) */
        return cli_fail("spec", EXIT_NO_FIT,
                        "--batch %d does not fit %s (context %d + gamma %d + 1 tokens of KV per sequence): %s",
                        batch, where, context, gamma, why);
    }
    cli_rates cal;
    if ((rc = cli_rates_resolve("spec", gpu, calibrate, roofline, &cal)) != 0) {
        cli_specs_free(&specs);
        return rc;
    }
    spec_estimate e;
    s.skip_comm = no_comm;
    if (spec_estimate_compute(&s, alpha, gamma, &e, err, sizeof err) != 0) {
        cli_specs_free(&specs);
        return cli_fail("spec", EXIT_USAGE, "%s%s", err, no_comm ? "" : " (or --no-comm)");
    }
    double best_free_s, best_roof_s;
    int best_free = spec_best_gamma(alpha, e.c, SPEC_GAMMA_MAX, &best_free_s);
    int best_roof = spec_best_gamma_roofline(&s, alpha, SPEC_GAMMA_MAX, &best_roof_s, err, sizeof err);
    int search_max = batch_max < fit.max_batch ? batch_max : fit.max_batch;
    int even_batch = spec_break_even_batch(&s, alpha, gamma, search_max, err, sizeof err);
    double even_alpha = spec_break_even_alpha(&s, gamma, err, sizeof err);
    if (best_roof < 0 || even_batch < 0 || even_alpha < 0) {
        cli_specs_free(&specs);
        return cli_fail("spec", EXIT_USAGE, "%s", err);
    }
    spec_calibrated sc;
    memset(&sc, 0, sizeof sc);
    if (cal.have && spec_calibrated_compute(&s, &cal.gpu, alpha, gamma, search_max, &sc, err, sizeof err) != 0) {
        cli_specs_free(&specs);
        return cli_fail("spec", EXIT_USAGE, "%s", err);
    }

    report *r = report_new("spec");
    report_section(r, "setup");
    report_text(r, "target", "target model", target->key);
    report_text(r, "draft", "draft", draft ? draft->key : "(cost given by --c)");
    report_text(r, "gpu", "GPU", gpu->key);
    report_int(r, "tp", "tensor parallel", tp);
    report_int(r, "batch", "batch", batch);
    report_int(r, "context", "context", context);
    report_text(r, "draft_gpus", "draft placement",
                !draft ? "-" : (s.draft_own_gpus ? "GPUs of its own" : "shared with the target"));
    report_int(r, "draft_tp", "draft tensor parallel", s.draft_tp);
    report_int(r, "max_batch", "largest batch that fits", fit.max_batch);
    report_num(r, "alpha", "acceptance rate alpha", U_REAL, alpha);
    report_int(r, "gamma", "draft tokens per round gamma", gamma);

    report_section(r, "tokens per round (the target's own token included)");
    report_num(r, "tokens_per_round", "expected tokens per round E[N]", U_TOKENS, e.tokens);
    report_num(r, "tokens_stddev", "standard deviation of N", U_TOKENS,
               sqrt(spec_tokens_variance(alpha, gamma)));

    report_section(r, "step times at this batch");
    report_num(r, "t_target", "target decode step", U_SECONDS, e.t_target);
    report_num(r, "t_verify", "verification step (gamma+1 tokens each)", U_SECONDS, e.t_verify);
    report_num(r, "t_draft", "draft step", U_SECONDS, e.t_draft);
    report_num(r, "c", "draft cost c = draft step / target step", U_REAL, e.c);
    report_num(r, "verify_ratio", "verification / target step", U_REAL, e.verify_ratio);

    report_section(r, "speedup over plain decoding");
    report_num(r, "speedup_free", "regime (i): verification costs one step", U_REAL, e.speedup_free);
    report_num(r, "speedup_roofline", "regime (ii): roofline verification", U_REAL, e.speedup_roofline);
    report_int(r, "best_gamma_free", "best gamma, regime (i)", best_free);
    report_num(r, "best_speedup_free", "its speedup", U_REAL, best_free_s);
    report_int(r, "best_gamma_roofline", "best gamma, regime (ii)", best_roof);
    report_num(r, "best_speedup_roofline", "its speedup", U_REAL, best_roof_s);
    report_num(r, "break_even_batch", "batch where regime (ii) falls below 1", U_INT,
               even_batch > 0 ? even_batch : NAN);
    report_int(r, "break_even_search_max", "break-even searched up to batch", search_max);
    report_num(r, "break_even_alpha", "alpha where regime (ii) is 1 at this batch", U_REAL, even_alpha);

    report_table *t = report_table_add(r, "distribution", "tokens per round N");
    report_col(t, "tokens", "N", U_INT, 0);
    report_col(t, "probability", "P(N)", U_REAL, 0);
    report_col(t, "cumulative", "P(<= N)", U_REAL, 0);
    for (int k = 1; k <= gamma + 1; k++) {
        report_cell_int(t, k);
        report_cell_num(t, spec_tokens_pmf(alpha, gamma, k));
        report_cell_num(t, spec_tokens_cdf(alpha, gamma, k));
    }
    report_calibrated(r, &cal, &sc);
    if (best_roof_s < 1) /* the search's best is a loss: say so in words, not as a raw 0.99 */
        report_note(r, "no draft length pays at this batch under regime (ii): the best, gamma %d, runs at %.4f of "
                       "plain decoding's speed",
                    best_roof, best_roof_s);
    if (even_batch == 0)
        report_note(r, "no loss within %s: regime (ii) stays above 1 up to batch %d",
                    search_max < batch_max ? "memory" : "--batch-max", search_max);
    if (isnan(even_alpha))
        report_note(r, "regime (ii) loses at this batch even with alpha = 1: no acceptance rate breaks even");
    if (c_text)
        report_note(r, "draft step taken as c = %g target decode steps at every batch", c_given);
    /* A draft that is no smaller than its target, or speaks another
     * vocabulary, makes the numbers above meaningless as advice. */
    if (draft) {
        double pd = model_params(draft).total, pt = model_params(target).total;
        if (pd >= pt)
            report_note(r, "warning: the draft %s (%.3g B parameters) is not smaller than the target %s (%.3g B): "
                           "drafting cannot pay", draft->key, pd / 1e9, target->key, pt / 1e9);
        if (draft->vocab != target->vocab)
            report_note(r, "warning: the draft %s has a vocabulary of %d tokens, the target %s %d: their tokens "
                           "cannot be verified against each other (alpha is not defined)",
                        draft->key, draft->vocab, target->key, target->vocab);
    }

    rc = report_print(r, common.format, stdout);
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
