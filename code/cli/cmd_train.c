/* napkin train: two questions about training.
 *   With --tokens: the compute of a run (6 N D plus attention), the cluster
 *   that meets --days at an MFU, the days a given --gpus takes, GPU-hours and
 *   money at --price.
 *   Without --tokens: the memory of one GPU of a TP x PP x DP layout (the
 *   first pipeline stage), by part and for every recompute setting, whether
 *   it fits, and the largest microbatch that does; --search lists the
 *   layouts of --gpus GPUs that fit. */
#include "cli_count.h"
#include "cli_device.h"
#include "commands.h"
#include "memory.h"
#include "train.h"

#include <math.h>
#include <string.h>

#define CMD "train"
#define MICRO_BATCH_LIMIT 4096
#define SEARCH_MAX 64

static const cli_doc DOC = {
    CMD,
    "training: FLOPs, the cluster for a deadline, and memory per GPU with activations",
    "--tokens D (--model M | --params N) [--days T] [--gpus N] [--gpu G] [--mfu F] [--price P]\n"
    "       napkin train --model M [--seq S] [--micro-batch B] [--tp N] [--pp N] [--dp N] [--sp]\n"
    "                    [--recompute none|selective|full] [--zero 0-3] [--grad-dtype bf16|fp32]\n"
    "                    [--master-dtype fp32|bf16] [--gpu G] [--search --gpus N]",
    "Compute (with --tokens): model FLOPs = (6 N + 12 L s d) D, N the parameters that multiply\n"
    "(the embedding lookup excluded), d = heads x head dim; --params alone omits the attention\n"
    "term.  GPU-seconds = FLOPs / (dense peak x MFU); the cluster is rounded up to whole\n"
    "--node-size nodes and pays for failures: by default Llama 3's 466 interruptions in 54 days\n"
    "on 16,384 GPUs (arXiv 2407.21783), each losing the time that left them 90% goodput;\n"
    "--goodput F fixes it instead.  With --model the cluster must also hold the model: the\n"
    "least model-parallel layout that does is shown.  Counts take suffixes: 1T, 300B, 7e9.\n"
    "Memory (without --tokens): mixed-precision Adam keeps 2 + 2 + 12 bytes per parameter\n"
    "(bf16 weights and gradients; fp32 master, momentum, variance); --grad-dtype fp32 makes the\n"
    "gradients 4 (Megatron-LM's default), --master-dtype bf16 drops the master copy.\n"
    "ZeRO --zero 1/2/3 shards the optimizer, the gradients, the weights over --dp.  Activations per\n"
    "layer follow Korthikanti et al. (arXiv 2205.05198) with --activations korthikanti, or a\n"
    "Llama-style layer with flash attention (no s^2 term), GQA and a gated MLP (default\n"
    "modern).  The first stage of a 1F1B pipeline holds pp microbatches in flight.\n"
    "Exit status 1 when the layout does not fit (the message names the largest microbatch that\n"
    "does, or a layout of the same GPU count), no cluster meets --days, or no layout of the\n"
    "cluster holds the --model; 2 for a bad flag, a --tp that does not divide the heads or a\n"
    "--pp that does not divide the layers.\n"
    "Time here comes from the --mfu given, not from pricing each op, so train gives no\n"
    "calibrated answer (napkin decode, prefill and serve price steps at measured rates).",
};

static int seen(const cli_opt *opts, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(opts[i].name, name) == 0)
            return opts[i].seen;
    return 0;
}

typedef struct {
    device_flags device; /* --gpu alone: the time comes from --mfu, not from pricing each op */
    const char *model_key, *params_text, *tokens_text, *dtype_text;
    double days, mfu, goodput, price, interruptions, hours_lost;
    int gpus, node_size, seq;
    int micro_batch, tp, pp, dp, sp, zero, microbatches, search;
    const char *recompute_text, *act_text, *schedule_text, *grad_dtype, *master_dtype;
} train_flags;

/* The layout the memory flags describe; EXIT_USAGE for an unknown choice. */
static int layout_from_flags(const train_flags *f, train_layout *l)
{
    *l = train_layout_default();
    l->seq = f->seq;
    l->micro_batch = f->micro_batch;
    l->tp = f->tp;
    l->pp = f->pp;
    l->dp = f->dp;
    l->sp = f->sp;
    l->zero = f->zero;
    l->microbatches = f->microbatches;
    if (recompute_parse(f->recompute_text, &l->recompute) != 0)
        return cli_fail(CMD, EXIT_USAGE, "--recompute: unknown '%s' (choices: %s)", f->recompute_text,
                        recompute_choices());
    if (activation_model_parse(f->act_text, &l->act) != 0)
        return cli_fail(CMD, EXIT_USAGE, "--activations: unknown '%s' (choices: korthikanti, modern)", f->act_text);
    if (pipe_schedule_parse(f->schedule_text, &l->schedule) != 0)
        return cli_fail(CMD, EXIT_USAGE, "--schedule: unknown '%s' (choices: 1f1b, gpipe)", f->schedule_text);
    if (l->zero > 3)
        return cli_fail(CMD, EXIT_USAGE, "--zero %d must be 0, 1, 2 or 3", l->zero);
    return 0;
}

/* The memory levers a layout does not use yet, for a "try ..." note:
 * "--zero 3, --sp, --recompute full or more GPUs" less those already set. */
static const char *untried_levers(const train_layout *l, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%smore GPUs", l->zero < 3 ? "--zero 3, " : "", l->sp ? "" : "--sp, ",
             l->recompute == RECOMPUTE_FULL ? "" : "--recompute full or ");
    return buf;
}

/* Does the model fit the cluster?  The least model-parallel layout of
 * `gpus` that holds it at the flags' sequence, microbatch and settings. */
static int report_cluster_layout(report *r, const char *prefix, const model_spec *m, const gpu_spec *g,
                                 const train_layout *base, int gpus, int node_size)
{
    train_state_bytes b = train_state_adam_mixed();
    layout_fit best;
    char key[64];
    int n = train_layout_search(m, g, gpus, node_size, base, &b, &best, 1);
    if (n <= 0) {
        char levers[96];
        report_note(r, "no tp x pp x dp layout of %d GPUs holds %s at microbatch %d (seq %d, ZeRO %d); try %s", gpus,
                    m->key, base->micro_batch, base->seq, base->zero, untried_levers(base, levers, sizeof levers));
        return EXIT_NO_FIT;
    }
    snprintf(key, sizeof key, "%s_tp", prefix);
    report_int(r, key, "layout that holds the model: tp", best.tp);
    snprintf(key, sizeof key, "%s_pp", prefix);
    report_int(r, key, "pp", best.pp);
    snprintf(key, sizeof key, "%s_dp", prefix);
    report_int(r, key, "dp", best.dp);
    snprintf(key, sizeof key, "%s_memory", prefix);
    report_num(r, key, "memory per GPU", U_BYTES, best.total);
    return 0;
}

/* ------------------------------------------------------------ compute */

static int run_compute(const train_flags *f, const cli_opt *opts, int nopts, const model_spec *m, const gpu_spec *g,
                       out_format format)
{
    double params = 0.0, tokens = 0.0;
    int rc;
    if ((rc = cli_count_flag(CMD, "--tokens", f->tokens_text, &tokens)) != 0)
        return rc;
    if (f->params_text && (rc = cli_count_flag(CMD, "--params", f->params_text, &params)) != 0)
        return rc;
    if (!f->params_text)
        params = train_matmul_params(m);
    dtype compute;
    double peak;
    if ((rc = cli_dtype_peak(CMD, g, "--dtype", f->dtype_text, &compute, &peak)) != 0)
        return rc;
    train_layout base;
    if ((rc = layout_from_flags(f, &base)) != 0)
        return rc;
    train_flop per = train_flop_per_token(params, m, f->seq, base.recompute);
    goodput_model gm = goodput_model_llama3();
    if (seen(opts, nopts, "--goodput"))
        gm = goodput_model_fixed(f->goodput);
    if (seen(opts, nopts, "--interruptions"))
        gm.interruptions_per_gpu_day = f->interruptions;
    if (seen(opts, nopts, "--hours-lost"))
        gm.hours_lost = f->hours_lost;
    train_run run = {per.model * tokens, peak, f->mfu, gm};

    report *r = report_new(CMD);
    report_section(r, "run");
    report_text(r, "model", "model", m ? m->key : "(--params only)");
    report_num(r, "params", "parameters that multiply N", U_PARAMS, params);
    report_num(r, "tokens", "training tokens D", U_TOKENS, tokens);
    report_int(r, "seq", "sequence length", f->seq);
    report_text(r, "gpu", "GPU", g->key);
    report_num(r, "peak", "dense peak per GPU", U_FLOPS, peak);
    report_num(r, "mfu", "model FLOPs utilisation", U_REAL, f->mfu);

    report_section(r, "compute");
    report_num(r, "flop_per_token_dense", "6 N per token", U_FLOP, per.dense);
    report_num(r, "flop_per_token_attention", "attention 12 L s d per token", U_FLOP, per.attention);
    report_num(r, "flop_model", "model FLOPs of the run (FLOP)", U_REAL, run.flop);
    report_num(r, "flop_hardware", "hardware FLOPs, recomputation too (FLOP)", U_REAL, per.hardware * tokens);
    report_num(r, "hfu", "hardware FLOPs utilisation at this MFU", U_REAL, f->mfu * per.hardware / per.model);
    report_num(r, "gpu_hours_training", "GPU-hours of training, no interruptions", U_REAL,
               train_gpu_seconds(&run) / 3600.0);

    rc = 0;
    if (seen(opts, nopts, "--days")) {
        cluster_plan c;
        int ok = train_cluster_for_deadline(&run, f->days * 86400.0, f->node_size, &c) == 0;
        report_section(r, "cluster for the deadline");
        report_num(r, "days", "deadline (days)", U_REAL, f->days);
        report_num(r, "gpus_exact", "GPUs the deadline asks for", U_REAL, c.gpus_exact);
        report_int(r, "gpus_needed", "GPUs, whole nodes", c.gpus);
        report_int(r, "nodes", "nodes", c.nodes);
        report_num(r, "goodput", "goodput at that size", U_REAL, c.goodput);
        report_num(r, "days_needed", "days on that cluster", U_REAL, c.seconds / 86400.0);
        report_num(r, "gpu_hours", "GPU-hours rented", U_REAL, c.gpu_hours);
        if (seen(opts, nopts, "--price"))
            report_num(r, "cost", "cost at --price (per GPU-hour)", U_REAL, c.gpu_hours * f->price);
        if (m && report_cluster_layout(r, "layout", m, g, &base, c.gpus, f->node_size) != 0)
            rc = EXIT_NO_FIT;
        if (!ok && !isfinite(c.seconds))
            report_note(r, "no cluster meets %g days: failures grow with the cluster, and at %d GPUs they leave "
                           "no time to train",
                        f->days, c.gpus);
        else if (!ok)
            report_note(r, "no cluster meets %g days: failures grow with the cluster; the best is %d GPUs in %.1f "
                           "days",
                        f->days, c.gpus, c.seconds / 86400.0);
        if (!ok) {
            rc = EXIT_NO_FIT;
        }
    }
    if (seen(opts, nopts, "--gpus")) {
        double s = train_seconds_on(&run, f->gpus);
        report_section(r, "on the given cluster");
        report_int(r, "gpus", "GPUs", f->gpus);
        report_num(r, "goodput_given", "goodput", U_REAL, goodput_at(&run.goodput, f->gpus));
        report_num(r, "days_on_gpus", "days", U_REAL, s / 86400.0);
        report_num(r, "gpu_hours_on_gpus", "GPU-hours", U_REAL, f->gpus * s / 3600.0);
        if (seen(opts, nopts, "--price"))
            report_num(r, "cost_on_gpus", "cost at --price (per GPU-hour)", U_REAL, f->gpus * s / 3600.0 * f->price);
        if (!isfinite(s)) {
            report_note(r, "at %d GPUs interruptions eat all the time: nothing trains", f->gpus);
            rc = EXIT_NO_FIT;
        }
        if (m && report_cluster_layout(r, "given_layout", m, g, &base, f->gpus, f->node_size) != 0)
            rc = EXIT_NO_FIT;
    }
    if (!m)
        report_note(r, "no --model: the attention term 12 L s d is left out and memory is not checked (both need "
                       "the model's shape)");
    if (!seen(opts, nopts, "--days") && !seen(opts, nopts, "--gpus"))
        report_note(r, "give --days for the cluster that meets a deadline, or --gpus for the days on a cluster");
    report_note(r, "peak is the dense %s rate of the %s; a datasheet's sparse figure is twice it", dtype_name(compute),
                g->key);
    int prc = report_print(r, format, stdout);
    report_free(r);
    return rc ? rc : prc;
}

/* ------------------------------------------------------------ memory */

static void report_parts(report *r, const train_memory *mem, const train_flags *f, int max_mb)
{
    char grads[64], optimizer[96];
    snprintf(grads, sizeof grads, "gradients (%s)", f->grad_dtype);
    snprintf(optimizer, sizeof optimizer, "optimizer: %smomentum, variance (fp32)",
             strcmp(f->master_dtype, "fp32") == 0 ? "master weights, " : "");
    report_section(r, "memory per GPU (first pipeline stage)");
    report_num(r, "params_per_gpu", "parameters on this GPU before ZeRO", U_PARAMS, mem->params);
    report_num(r, "weights", "weights (bf16)", U_BYTES, mem->weights);
    report_num(r, "grads", grads, U_BYTES, mem->grads);
    report_num(r, "optimizer", optimizer, U_BYTES, mem->optimizer);
    report_num(r, "act_per_layer", "activations per layer, one microbatch", U_BYTES, mem->act_per_layer);
    report_int(r, "layers_per_stage", "layers on this stage", mem->layers);
    report_int(r, "in_flight", "microbatches in flight", mem->in_flight);
    report_num(r, "act_working", "layer rebuilt by full recompute", U_BYTES, mem->act_working);
    report_num(r, "act_logits", "fp32 logits of the loss", U_BYTES, mem->act_logits);
    report_num(r, "activations", "activations", U_BYTES, mem->activations);
    report_num(r, "total", "total", U_BYTES, mem->total);
    report_num(r, "capacity", "usable GPU memory", U_BYTES, mem->capacity);
    report_int(r, "fits", "fits in usable memory (1 = yes)", mem->fits);
    report_int(r, "max_micro_batch", "largest microbatch that fits", max_mb);
}

static void report_settings(report *r, const model_spec *m, const gpu_spec *g, const train_layout *l,
                            const train_state_bytes *b)
{
    report_table *t = report_table_add(r, "settings", "every recompute setting at this layout");
    report_col(t, "setting", "setting", U_TEXT, 0);
    report_col(t, "act_per_layer", "per layer", U_BYTES, 0);
    report_col(t, "activations", "activations", U_BYTES, 0);
    report_col(t, "total", "total", U_BYTES, 0);
    report_col(t, "max_micro_batch", "max microbatch", U_INT, 0);
    for (int sp = 0; sp <= 1; sp++)
        for (int k = RECOMPUTE_NONE; k <= RECOMPUTE_FULL; k++) {
            train_layout v = *l;
            v.sp = sp;
            v.recompute = (recompute_kind)k;
            train_memory mem;
            char err[256], name[64];
            if (train_memory_plan(m, g, &v, b, &mem, err, sizeof err) != 0)
                continue;
            snprintf(name, sizeof name, "%s%s", sp ? "sp+" : "", recompute_name(v.recompute));
            report_cell_text(t, name);
            report_cell_num(t, mem.act_per_layer);
            report_cell_num(t, mem.activations);
            report_cell_num(t, mem.total);
            report_cell_int(t, train_max_micro_batch(m, g, &v, b, MICRO_BATCH_LIMIT));
        }
}

static int run_memory(const train_flags *f, const model_spec *m, const gpu_spec *g, out_format format)
{
    train_layout l;
    int frc = layout_from_flags(f, &l);
    if (frc != 0)
        return frc;
    if (f->search) {
        if (f->gpus < 1)
            return cli_fail(CMD, EXIT_USAGE, "--search needs --gpus N");
        l.tp = l.pp = 1; /* the search chooses them */
        l.dp = f->gpus;
    }
    char err[512];
    train_memory mem;
    if (train_layout_check(m, &l, err, sizeof err) != 0)
        return cli_fail(CMD, EXIT_USAGE, "%s", err);
    train_state_bytes b;
    if (train_state_adam(f->grad_dtype, f->master_dtype, &b, err, sizeof err) != 0)
        return cli_fail(CMD, EXIT_USAGE, "%s", err);

    report *r = report_new(CMD);
    report_section(r, "layout");
    report_text(r, "model", "model", m->key);
    report_text(r, "gpu", "GPU", g->key);
    report_int(r, "seq", "sequence length", l.seq);
    report_int(r, "micro_batch", "microbatch (sequences)", l.micro_batch);
    report_text(r, "activations_model", "activation model", activation_model_name(l.act));
    report_text(r, "schedule", "pipeline schedule", pipe_schedule_name(l.schedule));
    report_int(r, "zero", "ZeRO stage", l.zero);
    int rc = 0;
    if (f->search) {
        layout_fit fits[SEARCH_MAX];
        int n = train_layout_search(m, g, f->gpus, f->node_size, &l, &b, fits, SEARCH_MAX);
        report_int(r, "gpus", "GPUs", f->gpus);
        report_text(r, "recompute", "recompute", recompute_name(l.recompute));
        report_int(r, "sp", "sequence parallel", l.sp);
        report_int(r, "layouts_that_fit", "layouts that fit", n);
        report_table *t = report_table_add(r, "layouts", "layouts that fit, least model parallelism first");
        report_col(t, "tp", "tp", U_INT, 0);
        report_col(t, "pp", "pp", U_INT, 0);
        report_col(t, "dp", "dp", U_INT, 0);
        report_col(t, "total", "per GPU", U_BYTES, 0);
        report_col(t, "max_micro_batch", "max microbatch (to 64)", U_INT, 0);
        for (int i = 0; i < n && i < SEARCH_MAX; i++) {
            report_cell_int(t, fits[i].tp);
            report_cell_int(t, fits[i].pp);
            report_cell_int(t, fits[i].dp);
            report_cell_num(t, fits[i].total);
            report_cell_int(t, fits[i].max_micro_batch);
        }
        if (n == 0) {
            char levers[96];
            report_note(r, "no layout of %d GPUs fits %s on %s at microbatch %d; try %s", f->gpus, m->key, g->key,
                        l.micro_batch, untried_levers(&l, levers, sizeof levers));
            rc = EXIT_NO_FIT;
        }
    } else {
        train_memory_plan(m, g, &l, &b, &mem, err, sizeof err);
        int max_mb = train_max_micro_batch(m, g, &l, &b, MICRO_BATCH_LIMIT);
        report_int(r, "tp", "tensor parallel", l.tp);
        report_int(r, "pp", "pipeline parallel", l.pp);
        report_int(r, "dp", "data parallel", l.dp);
        report_int(r, "sp", "sequence parallel", l.sp);
        report_text(r, "recompute", "recompute", recompute_name(l.recompute));
        report_parts(r, &mem, f, max_mb);
        report_settings(r, m, g, &l, &b);
        if (!mem.fits) {
            rc = EXIT_NO_FIT;
            if (max_mb > 0) {
                report_note(r, "does not fit at microbatch %d: the largest that fits is %d", l.micro_batch, max_mb);
            } else {
                layout_fit best;
                int gpus = l.tp * l.pp * l.dp;
                train_layout one = l;
                one.micro_batch = 1;
                int n = train_layout_search(m, g, gpus, f->node_size, &one, &b, &best, 1);
                if (n > 0)
                    report_note(r, "not even microbatch 1 fits; on the same %d GPUs tp %d pp %d dp %d does (up to "
                                   "microbatch %d)",
                                gpus, best.tp, best.pp, best.dp, best.max_micro_batch);
                else {
                    char levers[96];
                    report_note(r, "not even microbatch 1 fits, and no tp x pp x dp of %d GPUs does; try %s", gpus,
                                untried_levers(&l, levers, sizeof levers));
                }
            }
        }
    }
    report_note(r, "mixed-precision Adam: %.0f + %.0f + %.0f bytes per parameter (weights, %s gradients, optimizer); "
                   "capacity is %.0f%% of what the driver reports, as everywhere in the book",
                b.weights, b.grads, b.optimizer, f->grad_dtype, 100 * memory_policy_default().usable_fraction);
    int prc = report_print(r, format, stdout);
    report_free(r);
    return rc ? rc : prc;
}

/* The most flags train takes. */
#define TRAIN_NOPTS_MAX (26 + DEVICE_NOPTS_MAX)

static int parse(int argc, char **argv, train_flags *f, cli_opt *opts, int *nopts, cli_common *common)
{
    *f = (train_flags){.device = device_flags_default(DEVICE_GPU, "h100"), .dtype_text = "bf16", .mfu = 0.4,
                       .goodput = 0.9, .node_size = 8, .seq = 8192, .micro_batch = 1, .tp = 1, .pp = 1, .dp = 1,
                       .recompute_text = "none", .act_text = "modern", .schedule_text = "1f1b",
                       .grad_dtype = "bf16", .master_dtype = "fp32"};
    const cli_opt compute[] = {
        {"--model", OPT_STRING, &f->model_key, "M", "model from the table (parameters and shape)", 0, 0},
        {"--params", OPT_STRING, &f->params_text, "N", "parameters that multiply, e.g. 7B (overrides the model's)", 0,
         0},
        {"--tokens", OPT_STRING, &f->tokens_text, "D", "training tokens, e.g. 1T or 300B: the compute question", 0, 0},
        {"--days", OPT_POS_REAL, &f->days, "T", "deadline in days: the cluster that meets it", 0, 0},
        {"--gpus", OPT_POS_INT, &f->gpus, "N", "a given cluster: days it takes; GPUs for --search", 0, 0},
    };
    const cli_opt rest[] = {
        {"--dtype", OPT_STRING, &f->dtype_text, "D", "compute dtype whose dense peak applies (default bf16)", 0, 0},
        {"--mfu", OPT_FRACTION, &f->mfu, "F", "model FLOPs utilisation (default 0.4)", 0, 0},
        {"--goodput", OPT_FRACTION, &f->goodput, "F", "fixed share of time that trains (default: Llama 3 failures)", 0,
         0},
        {"--interruptions", OPT_POS_REAL, &f->interruptions, "R",
         "interruptions per GPU-day (default Llama 3's, 466 / (54 x 16384))", 0, 0},
        {"--hours-lost", OPT_POS_REAL, &f->hours_lost, "H", "hours each interruption costs the job (default 0.278)", 0,
         0},
        {"--price", OPT_POS_REAL, &f->price, "P", "price per GPU-hour, for the cost", 0, 0},
        {"--node-size", OPT_POS_INT, &f->node_size, "N", "GPUs per node (default 8)", 0, 0},
        {"--seq", OPT_TOKENS, &f->seq, "S", "sequence length (default 8192)", 0, 0},
        {"--micro-batch", OPT_POS_INT, &f->micro_batch, "B", "sequences per microbatch (default 1)", 0, 0},
        {"--tp", OPT_POS_INT, &f->tp, "N", "tensor parallel degree (default 1)", 0, 0},
        {"--pp", OPT_POS_INT, &f->pp, "N", "pipeline parallel degree (default 1)", 0, 0},
        {"--dp", OPT_POS_INT, &f->dp, "N", "data parallel degree (default 1)", 0, 0},
        {"--sp", OPT_FLAG, &f->sp, NULL, "sequence parallelism over the tp group", 0, 0},
        {"--recompute", OPT_STRING, &f->recompute_text, "R", "none (default), selective or full", 0, 0},
        {"--zero", OPT_NONNEG_INT, &f->zero, "Z", "ZeRO stage 0-3 over --dp (default 0)", 0, 0},
        {"--activations", OPT_STRING, &f->act_text, "A", "modern (default) or korthikanti", 0, 0},
        {"--schedule", OPT_STRING, &f->schedule_text, "S", "pipeline schedule: 1f1b (default) or gpipe", 0, 0},
        {"--microbatches", OPT_POS_INT, &f->microbatches, "M", "microbatches per step (default --pp)", 0, 0},
        {"--grad-dtype", OPT_STRING, &f->grad_dtype, "D",
         "gradients kept and reduced in bf16 (default) or fp32 (Megatron-LM's default)", 0, 0},
        {"--master-dtype", OPT_STRING, &f->master_dtype, "D", "master weights in fp32 (default) or bf16 (no copy)", 0,
         0},
        {"--search", OPT_FLAG, &f->search, NULL, "list the tp x pp x dp layouts of --gpus that fit", 0, 0},
    };
    int n = CLI_NOPTS(compute);
    memcpy(opts, compute, sizeof compute);
    n += device_flag_opts(&f->device, DEVICE_GPU, opts + n);
    memcpy(opts + n, rest, sizeof rest);
    n += CLI_NOPTS(rest);
    *nopts = n;
    return cli_parse(&DOC, argc, argv, opts, n, common);
}

static int check(const train_flags *f, const cli_opt *opts, int nopts)
{
    if (seen(opts, nopts, "--goodput") && (seen(opts, nopts, "--interruptions") || seen(opts, nopts, "--hours-lost")))
        return cli_fail(CMD, EXIT_USAGE, "give either --goodput or --interruptions/--hours-lost, not both");
    if (!f->tokens_text && !f->model_key)
        return cli_fail(CMD, EXIT_USAGE, "give --tokens (the compute question) or --model (the memory question); "
                                         "see napkin train --help");
    if (f->tokens_text && !f->model_key && !f->params_text)
        return cli_fail(CMD, EXIT_USAGE, "--tokens needs --model or --params");
    if (!f->tokens_text && f->params_text)
        return cli_fail(CMD, EXIT_USAGE, "--params is for the compute question (with --tokens); the memory question "
                                         "needs a --model's shape");
    return 0;
}

int cmd_train(int argc, char **argv)
{
    train_flags f;
    cli_opt opts[TRAIN_NOPTS_MAX];
    int nopts;
    cli_common common;
    int rc = parse(argc, argv, &f, opts, &nopts, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if ((rc = check(&f, opts, nopts)) != 0)
        return rc;

    cli_specs specs;
    const gpu_spec *g;
    const model_spec *m = NULL;
    if ((rc = cli_specs_load(CMD, &common, &specs)) != 0)
        return rc;
    if ((rc = device_gpu_row(CMD, &specs, &f.device, &g)) != 0 ||
        (f.model_key && (rc = cli_find_model(CMD, &specs, "--model", f.model_key, &m)) != 0))
        goto done;
    rc = f.tokens_text ? run_compute(&f, opts, nopts, m, g, common.format) : run_memory(&f, m, g, common.format);
done:
    cli_specs_free(&specs);
    return rc;
}
