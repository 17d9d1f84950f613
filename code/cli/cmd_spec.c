/* napkin spec: speculative decoding on a target model and GPU.  Tokens per
 * round and their distribution, the speedup when verification is free
 * (regime i) and when it costs what the roofline step model says (regime ii),
 * the best draft length, and the batch at which speculation starts to lose. */
#include "cli_band.h"
#include "cli_device.h"
#include "commands.h"
#include "specdec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Beside each calibrated row (cli_band.h): why it has no measured error band. */
static const char NO_RUN_LIKE_IT[] = "no measured run like this one (the serving runs decode without speculation)";

#define SPEC_GAMMA_MAX 64

static const cli_doc spec_doc = {
    .name = "spec",
    .summary = "speculative decoding: tokens per round, speedup in both cost regimes, break-even batch",
    .usage = "--alpha A [--gamma G] [--draft MODEL | --c C] [--draft-tp N] [--draft-gpus shared|own]\n"
             "                     [--model M] [--gpu G] [--tp N] [--batch B] [--context T] [--no-comm]\n"
             "                     [--usable F] [--hbm BYTES] [--batch-max B]\n"
             "                     [--calibrate DIR|NAME | --roofline]",
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
               "GPU's published set (h100, h200), or --calibrate NAME; --calibrate DIR times both answers on a\n"
               "measured set's ceilings (a CPU set is a device of its own: no --gpu); --roofline gives the\n"
               "bound alone.",
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

static void report_calibrated(report *r, const device_setup *d, const spec_calibrated *c)
{
    if (!device_report_calibrated(r, d, "the same rounds", NULL))
        return;
    report_num(r, "t_target_calibrated", "target decode step, calibrated", U_SECONDS, c->e.t_target);
    cli_band_none(r, "t_target_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "t_verify_calibrated", "verification step, calibrated", U_SECONDS, c->e.t_verify);
    cli_band_none(r, "t_verify_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "t_draft_calibrated", "draft step, calibrated", U_SECONDS, c->e.t_draft);
    cli_band_none(r, "t_draft_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "c_calibrated", "draft cost c, calibrated", U_REAL, c->e.c);
    cli_band_none(r, "c_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "speedup_roofline_calibrated", "regime (ii) speedup, calibrated", U_REAL, c->e.speedup_roofline);
    cli_band_none(r, "speedup_roofline_calibrated", NO_RUN_LIKE_IT);
    report_int(r, "best_gamma_roofline_calibrated", "best gamma, regime (ii), calibrated", c->best_gamma);
    cli_band_none(r, "best_gamma_roofline_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "best_speedup_roofline_calibrated", "its speedup", U_REAL, c->best_speedup);
    cli_band_none(r, "best_speedup_roofline_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "break_even_batch_calibrated", "batch where regime (ii) falls below 1, calibrated", U_INT,
               c->break_even_batch > 0 ? c->break_even_batch : NAN);
    cli_band_none(r, "break_even_batch_calibrated", NO_RUN_LIKE_IT);
}

typedef struct {
    device_flags device;
    double alpha;
    int gamma, tp, draft_tp, batch, context, batch_max, no_comm;
    const char *c_text, *draft_key, *model_key, *dtype_s, *draft_gpus;
    /* from the strings, by check() */
    int own_gpus; /* -1: not given */
    double c_given;
} spec_flags;

static int parse(int argc, char **argv, spec_flags *f, cli_common *common)
{
    *f = (spec_flags){.device = device_flags_default(DEVICE_PRICING | DEVICE_MEMORY, "h100"), .alpha = 0.8,
                      .gamma = 4, .tp = 4, .batch = 1, .context = 4096, .batch_max = 4096,
                      .model_key = "llama3-70b", .dtype_s = "bf16", .own_gpus = -1};
    cli_opt opts[13 + 2 * DEVICE_NOPTS_MAX];
    const cli_opt drafting[] = {
        {"--alpha", OPT_FRACTION, &f->alpha, "A", "acceptance rate per draft token (default 0.8)", 0, 0},
        {"--gamma", OPT_POS_INT, &f->gamma, "G", "draft tokens per round (default 4)", 0, 0},
        {"--c", OPT_STRING, &f->c_text, "C", "draft step / target step (instead of --draft)", 0, 0},
        {"--draft", OPT_STRING, &f->draft_key, "MODEL", "draft model (default llama3.2-1b)", 0, 0},
        {"--draft-tp", OPT_POS_INT, &f->draft_tp, "N", "tensor parallel degree of the draft (default --tp)", 0, 0},
        {"--model", OPT_STRING, &f->model_key, "M", "target model (default llama3-70b)", 0, 0},
    };
    const cli_opt target[] = {
        {"--tp", OPT_POS_INT, &f->tp, "N", "tensor parallel degree of the target (default 4)", 0, 0},
        {"--batch", OPT_POS_INT, &f->batch, "B", "sequences in the step (default 1)", 0, 0},
        {"--context", OPT_TOKENS, &f->context, "T", "tokens cached per sequence (default 4096)", 0, 0},
        {"--dtype", OPT_STRING, &f->dtype_s, "D", "weights, KV, activations (default bf16)", 0, 0},
        {"--batch-max", OPT_POS_INT, &f->batch_max, "B",
         "largest batch searched for break-even (default 4096; memory may stop it sooner)", 0, 0},
        {"--draft-gpus", OPT_STRING, &f->draft_gpus, "P",
         "shared: the draft is time-sliced on the target's GPUs; own: it has GPUs of its own "
         "(default shared when --draft-tp equals --tp, own otherwise)", 0, 0},
        {"--no-comm", OPT_FLAG, &f->no_comm, NULL, "leave the tensor-parallel collectives out", 0, 0},
    };
    int n = CLI_NOPTS(drafting);
    memcpy(opts, drafting, sizeof drafting);
    n += device_flag_opts(&f->device, DEVICE_GPU, opts + n);
    memcpy(opts + n, target, sizeof target);
    n += CLI_NOPTS(target);
    n += device_flag_opts(&f->device, DEVICE_MEMORY, opts + n);
    n += device_flag_opts(&f->device, DEVICE_CALIBRATE | DEVICE_ROOFLINE, opts + n);
    return cli_parse(&spec_doc, argc, argv, opts, n, common);
}

static int check(spec_flags *f)
{
    int rc;
    if (f->c_text && f->draft_key)
        return cli_fail("spec", EXIT_USAGE, "give either --c or --draft, not both");
    if (f->gamma > SPEC_GAMMA_MAX)
        return cli_fail("spec", EXIT_USAGE, "--gamma: %d is more than %d", f->gamma, SPEC_GAMMA_MAX);
    if (f->draft_gpus) {
        if (strcmp(f->draft_gpus, "shared") == 0)
            f->own_gpus = 0;
        else if (strcmp(f->draft_gpus, "own") == 0)
            f->own_gpus = 1;
        else
            return cli_fail("spec", EXIT_USAGE, "--draft-gpus: '%s' is not a placement (choices: shared, own)",
                            f->draft_gpus);
    }
    if (f->c_text && (rc = parse_c(f->c_text, &f->c_given)) != 0)
        return rc;
    if (!f->c_text && !f->draft_key)
        f->draft_key = "llama3.2-1b";
    return 0;
}

/* The target, the draft and the device, and a batch that fits them. */
typedef struct {
    cli_specs specs;
    device_setup device;
    spec_setup s;
    spec_fit fit;
} spec_resolved;

/* Nothing is timed for a batch that does not fit. */
static int check_memory(const spec_flags *f, spec_resolved *u)
{
    char err[512];
    if (spec_memory_fit(&u->s, device_policy(&f->device, -1, -1), f->gamma, &u->fit, err, sizeof err) != 0)
        return cli_fail("spec", EXIT_USAGE, "%s", err);
    const spec_fit *fit = &u->fit;
    if (fit->fits)
        return 0;
    const fit_check *side = fit->draft_separate && fit->draft_gpu.max_batch < fit->target_gpu.max_batch
                                ? &fit->draft_gpu
                                : &fit->target_gpu;
    char why[320];
    fit_check_describe(side, f->batch, f->context + f->gamma + 1, why, sizeof why);
    const char *where = side == &fit->draft_gpu ? "the draft's GPUs" : "the target's GPUs";
    if (fit->max_batch < 1)
        return cli_fail("spec", EXIT_NO_FIT, "no batch fits on %s: %s", where, why);
    /* the message ends with the largest batch that fits (the smaller side's) */
    return cli_fail("spec", EXIT_NO_FIT,
                    "--batch %d does not fit %s (context %d + gamma %d + 1 tokens of KV per sequence): %s", f->batch,
                    where, f->context, f->gamma, why);
}

static int resolve(const spec_flags *f, const cli_common *common, spec_resolved *u)
{
    precision prec;
    int rc;
    if ((rc = cli_precision("spec", f->dtype_s, NULL, NULL, NULL, NULL, NULL, &prec)) != 0 ||
        (rc = cli_specs_load("spec", common, &u->specs)) != 0)
        return rc;
    const model_spec *target, *draft = NULL;
    if ((rc = device_setup_resolve("spec", &u->specs, &f->device, prec.compute, &u->device)) != 0 ||
        (rc = cli_find_model("spec", &u->specs, "--model", f->model_key, &target)) != 0 ||
        (f->draft_key && (rc = cli_find_model("spec", &u->specs, "--draft", f->draft_key, &draft)) != 0))
        return rc;
    spec_setup *s = &u->s;
    *s = spec_setup_default(target, draft, &u->device.timed, f->tp, f->batch, f->context);
    s->draft_tp = f->draft_tp > 0 ? f->draft_tp : f->tp;
    s->draft_own_gpus = f->own_gpus >= 0 ? f->own_gpus : s->draft_tp != f->tp;
    s->draft_c = f->c_given;
    s->prec = prec;
    char err[512];
    /* The shapes first, so a bad --draft-tp is named as such. */
    step_shape probe = decode_shape(1, f->context, f->tp, prec);
    if (step_shape_check(target, &probe, err, sizeof err) != 0)
        return cli_fail("spec", EXIT_USAGE, "--tp %d: %s", f->tp, err);
    probe.tp = s->draft_tp;
    if (draft && step_shape_check(draft, &probe, err, sizeof err) != 0)
        return cli_fail("spec", EXIT_USAGE, "--draft-tp %d (the draft's degree%s): %s", s->draft_tp,
                        f->draft_tp > 0 ? "" : ", which defaults to --tp", err);
    return check_memory(f, u);
}

/* The rounds both ways, the best draft lengths and where speculation breaks even. */
typedef struct {
    spec_estimate e;
    double best_free_s, best_roof_s, even_alpha;
    int best_free, best_roof, search_max, even_batch;
    spec_calibrated sc;
} spec_answer;

static int compute(const spec_flags *f, spec_resolved *u, spec_answer *a)
{
    spec_setup *s = &u->s;
    s->skip_comm = f->no_comm;
    char err[512];
    if (spec_estimate_compute(s, f->alpha, f->gamma, &a->e, err, sizeof err) != 0)
        return cli_fail("spec", EXIT_USAGE, "%s%s", err, f->no_comm ? "" : " (or --no-comm)");
    a->best_free = spec_best_gamma(f->alpha, a->e.c, SPEC_GAMMA_MAX, &a->best_free_s);
    a->best_roof = spec_best_gamma_roofline(s, f->alpha, SPEC_GAMMA_MAX, &a->best_roof_s, err, sizeof err);
    a->search_max = f->batch_max < u->fit.max_batch ? f->batch_max : u->fit.max_batch;
    a->even_batch = spec_break_even_batch(s, f->alpha, f->gamma, a->search_max, err, sizeof err);
    a->even_alpha = spec_break_even_alpha(s, f->gamma, err, sizeof err);
    if (a->best_roof < 0 || a->even_batch < 0 || a->even_alpha < 0)
        return cli_fail("spec", EXIT_USAGE, "%s", err);
    memset(&a->sc, 0, sizeof a->sc);
    rated_device cal = device_rated(&u->device);
    if (cal.have &&
        spec_calibrated_compute(s, &cal.gpu, f->alpha, f->gamma, a->search_max, &a->sc, err, sizeof err) != 0)
        return cli_fail("spec", EXIT_USAGE, "%s", err);
    return 0;
}

static void report_setup(report *r, const spec_flags *f, const spec_resolved *u)
{
    const spec_setup *s = &u->s;
    report_section(r, "setup");
    report_text(r, "target", "target model", s->target->key);
    report_text(r, "draft", "draft", s->draft ? s->draft->key : "(cost given by --c)");
    report_text(r, "gpu", "GPU", s->gpu->key);
    device_report_measured(r, &u->device);
    report_int(r, "tp", "tensor parallel", f->tp);
    report_int(r, "batch", "batch", f->batch);
    report_int(r, "context", "context", f->context);
    report_text(r, "draft_gpus", "draft placement",
                !s->draft ? "-" : (s->draft_own_gpus ? "GPUs of its own" : "shared with the target"));
    report_int(r, "draft_tp", "draft tensor parallel", s->draft_tp);
    report_int(r, "max_batch", "largest batch that fits", u->fit.max_batch);
    report_num(r, "alpha", "acceptance rate alpha", U_REAL, f->alpha);
    report_int(r, "gamma", "draft tokens per round gamma", f->gamma);
}

static void report_rounds(report *r, const device_setup *d, const spec_flags *f, const spec_answer *a)
{
    double alpha = f->alpha;
    int gamma = f->gamma;
    report_section(r, "tokens per round (the target's own token included)");
    report_num(r, "tokens_per_round", "expected tokens per round E[N]", U_TOKENS, a->e.tokens);
    report_num(r, "tokens_stddev", "standard deviation of N", U_TOKENS, sqrt(spec_tokens_variance(alpha, gamma)));

    device_report_first(r, d, 1, "step times at this batch");
    report_num(r, "t_target", "target decode step", U_SECONDS, a->e.t_target);
    report_num(r, "t_verify", "verification step (gamma+1 tokens each)", U_SECONDS, a->e.t_verify);
    report_num(r, "t_draft", "draft step", U_SECONDS, a->e.t_draft);
    report_num(r, "c", "draft cost c = draft step / target step", U_REAL, a->e.c);
    report_num(r, "verify_ratio", "verification / target step", U_REAL, a->e.verify_ratio);

    device_report_again(r, d, 1, "speedup over plain decoding");
    report_num(r, "speedup_free", "regime (i): verification costs one step", U_REAL, a->e.speedup_free);
    report_num(r, "speedup_roofline", "regime (ii): roofline verification", U_REAL, a->e.speedup_roofline);
    report_int(r, "best_gamma_free", "best gamma, regime (i)", a->best_free);
    report_num(r, "best_speedup_free", "its speedup", U_REAL, a->best_free_s);
    report_int(r, "best_gamma_roofline", "best gamma, regime (ii)", a->best_roof);
    report_num(r, "best_speedup_roofline", "its speedup", U_REAL, a->best_roof_s);
    report_num(r, "break_even_batch", "batch where regime (ii) falls below 1", U_INT,
               a->even_batch > 0 ? a->even_batch : NAN);
    report_int(r, "break_even_search_max", "break-even searched up to batch", a->search_max);
    report_num(r, "break_even_alpha", "alpha where regime (ii) is 1 at this batch", U_REAL, a->even_alpha);

    report_table *t = report_table_add(r, "distribution", "tokens per round N");
    report_col(t, "tokens", "N", U_INT, 0);
    report_col(t, "probability", "P(N)", U_REAL, 0);
    report_col(t, "cumulative", "P(<= N)", U_REAL, 0);
    for (int k = 1; k <= gamma + 1; k++) {
        report_cell_int(t, k);
        report_cell_num(t, spec_tokens_pmf(alpha, gamma, k));
        report_cell_num(t, spec_tokens_cdf(alpha, gamma, k));
    }
}

static void report_notes(report *r, const spec_flags *f, const spec_resolved *u, const spec_answer *a)
{
    if (a->best_roof_s < 1) /* the search's best is a loss: say so in words, not as a raw 0.99 */
        report_note(r, "no draft length pays at this batch under regime (ii): the best, gamma %d, runs at %.4f of "
                       "plain decoding's speed",
                    a->best_roof, a->best_roof_s);
    if (a->even_batch == 0)
        report_note(r, "no loss within %s: regime (ii) stays above 1 up to batch %d",
                    a->search_max < f->batch_max ? "memory" : "--batch-max", a->search_max);
    if (isnan(a->even_alpha))
        report_note(r, "regime (ii) loses at this batch even with alpha = 1: no acceptance rate breaks even");
    if (f->c_text)
        report_note(r, "draft step taken as c = %g target decode steps at every batch", f->c_given);
    /* A draft that is no smaller than its target, or speaks another
     * vocabulary, makes the numbers above meaningless as advice. */
    const model_spec *draft = u->s.draft, *target = u->s.target;
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
}

int cmd_spec(int argc, char **argv)
{
    spec_flags f;
    cli_common common;
    int rc = parse(argc, argv, &f, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if ((rc = check(&f)) != 0)
        return rc;
    spec_resolved u = {0};
    spec_answer a;
    report *r = NULL;
    if ((rc = resolve(&f, &common, &u)) != 0 || (rc = compute(&f, &u, &a)) != 0)
        goto done;
    r = report_new("spec");
    report_setup(r, &f, &u);
    report_rounds(r, &u.device, &f, &a);
    report_calibrated(r, &u.device, &a.sc);
    report_notes(r, &f, &u, &a);
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    cli_specs_free(&u.specs);
    return rc;
}
