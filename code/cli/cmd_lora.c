/* napkin lora: many fine-tunes on one base.  What an adapter weighs (whole
 * and per GPU), tenants as full copies against one base, the KV capacity the
 * adapter slots take and the largest batch left, the host cache and the cost
 * of a miss, and the decode step with D distinct adapters against the base. */
#include "cli_band.h"
#include "cli_replica.h"
#include "commands.h"
#include "lora.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Beside each calibrated row (cli_band.h): why it has no measured error band. */
static const char NO_RUN_LIKE_IT[] = "no measured run like this one (the serving runs serve no adapters)";

static const cli_doc DOC = {
    "lora",
    "many fine-tunes on one base: adapter bytes, slots against the KV cache, step time with D distinct adapters",
    "--model M --gpu G [--tp N] [--rank R] [--max-rank R] [--targets q,k,v,o,...]\n"
    "                     [--adapters N] [--slots S] [--host-cache N] [--distinct D] [--batch B]\n"
    "                     [--context C] [--adapter-dtype D] [--launch-us U] [--no-comm]\n"
    "                     [--dtype D | --weights D --kv D --act D --compute D]\n"
    "                     [--usable F] [--activation-tokens T] [--sampled-tokens S] [--hbm BYTES]\n"
    "                     [--calibrate DIR|NAME | --roofline] [--format table|tsv|json]",
    "An adapter on a module (in -> out) at rank r is r (in + out) parameters, with the\n"
    "model's own shapes (k and v are hidden -> kv_heads x head_dim).  Under tensor\n"
    "parallelism B is split for column-parallel modules (q, k, v, gate, up) and A for\n"
    "row-parallel ones (o, down).  The engine pre-allocates --slots GPU slots sized for\n"
    "--max-rank (default --rank; smaller adapters are zero-padded); they come out of the\n"
    "memory the KV cache would use.  A decode step with --distinct D adapters among\n"
    "--batch B sequences adds, per targeted module and layer, a gathered shrink and\n"
    "expand that read each distinct adapter once (roofline time each) plus --launch-us\n"
    "per kernel.  Exit 1 when the batch does not fit beside the slots, or D exceeds\n"
    "the slots (the message names the largest that fits); exit 2 for a bad flag.\n"
    "Beside the roofline, the step is priced again at the achieved rates fitted to\n"
    "published kernel measurements (napkin calibrate): by default the GPU's published\n"
    "set (h100, h200), or --calibrate NAME; --calibrate DIR times both answers on a\n"
    "measured set's ceilings (a CPU set is a device of its own: no --gpu);\n"
    "--roofline gives the bound alone.  The adapter kernels' fixed cost stays\n"
    "--launch-us in both answers.",
};

static void report_calibrated(report *r, const device_setup *d, const lora_step_cost *c)
{
    if (!device_report_calibrated(r, d, "the same step", NULL))
        return;
    report_num(r, "base_step_time_calibrated", "base step, calibrated", U_SECONDS, c->base.time);
    cli_band_none(r, "base_step_time_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "adapter_time_ops_calibrated", "adapter ops, calibrated", U_SECONDS, c->time_ops);
    cli_band_none(r, "adapter_time_ops_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "step_time_calibrated", "step with adapters, calibrated", U_SECONDS, c->time);
    cli_band_none(r, "step_time_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "step_ratio_calibrated", "step with adapters / base step, calibrated", U_REAL, c->ratio);
    cli_band_none(r, "step_ratio_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "adapter_share_calibrated", "adapters' share of the step, calibrated", U_REAL, c->adapter_share);
    cli_band_none(r, "adapter_share_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "tokens_per_s_calibrated", "aggregate tokens/s, calibrated", U_TOKENS_PER_S, c->tokens_per_s);
    cli_band_none(r, "tokens_per_s_calibrated", NO_RUN_LIKE_IT);
}

static void report_adapter(report *r, const lora_config *c, const lora_size *s, const lora_tenancy *t)
{
    char targets[64];
    report_section(r, "One adapter");
    report_text(r, "targets", "target modules", lora_targets_format(c->targets, targets, sizeof targets));
    report_int(r, "rank", "rank r", c->rank);
    report_text(r, "adapter_dtype", "adapter dtype", dtype_name(c->adapter_dtype));
    report_num(r, "adapter_params", "parameters", U_PARAMS, s->params);
    report_num(r, "adapter_bytes", "bytes", U_BYTES, s->bytes);
    report_num(r, "adapter_params_per_gpu", "parameters per GPU", U_PARAMS, s->params_per_gpu);
    report_num(r, "adapter_bytes_per_gpu", "bytes per GPU", U_BYTES, s->bytes_per_gpu);
    report_num(r, "base_params", "base model parameters", U_PARAMS, s->base_params);
    report_num(r, "base_fraction", "fraction of the base", U_REAL, s->base_fraction);

    report_section(r, "Tenants: full copies against one base with adapters");
    report_int(r, "tenants", "tenants (fine-tunes)", t->tenants);
    report_int(r, "copies_deployments", "deployments as full copies", t->copies_deployments);
    report_int(r, "copies_gpus", "GPUs as full copies", t->copies_gpus);
    report_num(r, "copies_weight_bytes", "weights as full copies", U_BYTES, t->copies_weight_bytes);
    report_int(r, "adapters_deployments", "deployments with adapters", t->adapters_deployments);
    report_int(r, "adapters_gpus", "GPUs with adapters", t->adapters_gpus);
    report_num(r, "adapters_weight_bytes", "base + every adapter", U_BYTES, t->adapters_weight_bytes);
    report_num(r, "gpu_ratio", "GPUs, copies / adapters", U_REAL, t->gpu_ratio);
}

typedef struct {
    replica_flags replica;
    int rank, max_rank, adapters, slots, host_cache, distinct, batch, no_comm;
    const char *targets_s, *adapter_dtype_s, *launch_s_text;
    /* from the strings, by check() */
    lora_targets targets;
    dtype adapter_dtype;
    double launch_us;
} lora_flags;

static int parse(int argc, char **argv, lora_flags *f, cli_common *common)
{
    *f = (lora_flags){.replica = replica_flags_default(DEVICE_PRICING | DEVICE_MEMORY), .rank = 16, .adapters = 300,
                      .slots = 8, .host_cache = -1, .batch = 64, .targets_s = "q,k,v,o", .adapter_dtype_s = "bf16"};
    cli_opt opts[REPLICA_NOPTS_MAX + 11 + DEVICE_NOPTS_MAX];
    int n = replica_flag_opts(&f->replica, opts);
    const cli_opt mine[] = {
        {"--rank", OPT_POS_INT, &f->rank, "R", "adapter rank (default 16)", 0, 0},
        {"--max-rank", OPT_POS_INT, &f->max_rank, "R", "rank each GPU slot is sized for (default --rank)", 0, 0},
        {"--targets", OPT_STRING, &f->targets_s, "LIST",
         "modules with adapters: q,k,v,o,gate,up,down, all, attention (default q,k,v,o)", 0, 0},
        {"--adapters", OPT_POS_INT, &f->adapters, "N", "fine-tunes served from the one base (default 300)", 0, 0},
        {"--slots", OPT_NONNEG_INT, &f->slots, "S", "GPU adapter slots (vLLM max_loras; default 8)", 0, 0},
        {"--host-cache", OPT_NONNEG_INT, &f->host_cache, "N",
         "adapters held in host memory (vLLM max_cpu_loras; default --adapters)", 0, 0},
        {"--distinct", OPT_POS_INT, &f->distinct, "D",
         "distinct adapters in the batch (default: the expectation under uniform popularity, within the slots)", 0, 0},
        {"--batch", OPT_POS_INT, &f->batch, "B", "sequences decoded together (default 64)", 0, 0},
        {"--adapter-dtype", OPT_STRING, &f->adapter_dtype_s, "D", "dtype of A and B (default bf16)", 0, 0},
        {"--launch-us", OPT_STRING, &f->launch_s_text, "U",
         "fixed cost of one adapter kernel in microseconds (default 2.5; 0 for a fused step)", 0, 0},
        {"--no-comm", OPT_FLAG, &f->no_comm, NULL, "leave the tensor-parallel collectives out of the base step", 0, 0},
    };
    memcpy(opts + n, mine, sizeof mine);
    n += CLI_NOPTS(mine);
    n += device_flag_opts(&f->replica.device, DEVICE_CALIBRATE | DEVICE_ROOFLINE, opts + n);
    return cli_parse(&DOC, argc, argv, opts, n, common);
}

static int check(lora_flags *f)
{
    char err[512];
    int rc;
    if (lora_targets_parse(f->targets_s, &f->targets, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--targets: %s", err);
    if ((rc = cli_dtype(DOC.name, "--adapter-dtype", f->adapter_dtype_s, &f->adapter_dtype)) != 0)
        return rc;
    f->launch_us = LORA_LAUNCH_S_DEFAULT * 1e6;
    /* 0 is allowed (a fused or graphed step), which OPT_POS_REAL is not */
    if (f->launch_s_text &&
        (rc = cli_real_in(DOC.name, "--launch-us", f->launch_s_text, 0, INFINITY, &f->launch_us)) != 0)
        return rc;
    if (f->max_rank == 0)
        f->max_rank = f->rank;
    if (f->max_rank < f->rank)
        return cli_fail(DOC.name, EXIT_USAGE, "--max-rank %d is below --rank %d: a slot must hold the adapter",
                        f->max_rank, f->rank);
    if (f->host_cache < 0)
        f->host_cache = f->adapters;
    if (f->distinct > f->batch)
        return cli_fail(DOC.name, EXIT_USAGE, "--distinct %d exceeds --batch %d: a batch holds at most one adapter "
                        "per sequence", f->distinct, f->batch);
    if (f->distinct > f->adapters)
        return cli_fail(DOC.name, EXIT_USAGE, "--distinct %d exceeds --adapters %d", f->distinct, f->adapters);
    return 0;
}

/* The adapter (at its rank and at the slots' rank), the tenants, and the memory with and without the slots. */
typedef struct {
    lora_config c, slot_cfg;
    lora_size size, slot_size;
    lora_tenancy ten;
    fit_check fit, bare;
} lora_memory;

/* The memory limit: nothing is timed for a batch that does not fit. */
static int check_memory(const lora_flags *f, const replica_setup *s, lora_memory *m)
{
    m->c = (lora_config){s->model, f->rank, f->targets, f->adapter_dtype, s->tp};
    m->slot_cfg = m->c;
    m->slot_cfg.rank = f->max_rank;
    char err[512];
    if (lora_adapter_size(&m->c, &m->size, err, sizeof err) != 0 ||
        lora_adapter_size(&m->slot_cfg, &m->slot_size, err, sizeof err) != 0 ||
        lora_tenancy_compare(&m->c, s->prec, f->adapters, &m->ten, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s%s", strstr(err, "rank") ? "--rank/--max-rank: " : "", err);
    if (lora_memory_fit(s->gpu, s->policy, s->prec, &m->slot_cfg, f->slots, f->batch, s->context, &m->fit, err,
                        sizeof err) != 0 ||
        lora_memory_fit(s->gpu, s->policy, s->prec, &m->slot_cfg, 0, f->batch, s->context, &m->bare, err,
                        sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    if (m->fit.fits)
        return 0;
    char why[320];
    fit_check_describe(&m->fit, f->batch, s->context, why, sizeof why);
    if (m->fit.max_batch < 1)
        return cli_fail(DOC.name, EXIT_NO_FIT, "--slots %d at rank %d: %s; fewer --slots, a lower --max-rank or a "
                        "larger --tp", f->slots, f->max_rank, why);
    return cli_fail(DOC.name, EXIT_NO_FIT,
                    "--batch %d does not fit beside %d adapter slots of %.1f MB per GPU: %s (without the slots: %d)",
                    f->batch, f->slots, m->slot_size.bytes_per_gpu / MB, why, m->bare.max_batch);
}

/* The step-time limit: D distinct adapters need D slots.  The default D is
 * the uniform expectation, held to the slots. */
static int choose_distinct(const lora_flags *f, double expected_d, int *distinct)
{
    *distinct = f->distinct;
    if (*distinct == 0) {
        *distinct = (int)lround(expected_d);
        if (*distinct < 1)
            *distinct = 1;
        if (f->slots > 0 && *distinct > f->slots)
            *distinct = f->slots;
    }
    if (f->slots == 0)
        return cli_fail(DOC.name, EXIT_NO_FIT, "--slots 0: no adapter can run without a GPU slot; give --slots 1 or more");
    if (*distinct > f->slots)
        return cli_fail(DOC.name, EXIT_NO_FIT,
                        "--distinct %d does not fit %d adapter slots: a step holds at most %d distinct adapters "
                        "(the rest wait); the largest --distinct that fits is %d",
                        *distinct, f->slots, f->slots, f->slots);
    return 0;
}

/* The step with D distinct adapters: at their rank, padded to the slots' rank, and calibrated. */
typedef struct {
    double expected_d;
    int distinct;
    lora_step_shape shape;
    lora_step_cost step, padded, step_cal;
} lora_answer;

static int compute(const lora_flags *f, const replica_setup *s, const device_setup *d, const lora_memory *m,
                   lora_answer *a)
{
    int rc;
    a->expected_d = lora_expected_distinct_uniform(f->adapters, f->batch);
    if ((rc = choose_distinct(f, a->expected_d, &a->distinct)) != 0)
        return rc;
    a->shape = (lora_step_shape){f->batch, s->context, a->distinct, f->launch_us * 1e-6, f->no_comm};
    memset(&a->step_cal, 0, sizeof a->step_cal);
    rated_device cal = device_rated(d);
    char err[512];
    if (lora_step_cost_compute(s->gpu, s->prec, &m->c, &a->shape, &a->step, err, sizeof err) != 0 ||
        lora_step_cost_compute(s->gpu, s->prec, &m->slot_cfg, &a->shape, &a->padded, err, sizeof err) != 0 ||
        (cal.have && lora_step_cost_compute(&cal.gpu, s->prec, &m->c, &a->shape, &a->step_cal, err, sizeof err) != 0))
        return cli_fail(DOC.name, EXIT_USAGE, "%s%s", err, f->no_comm ? "" : " (or --no-comm)");
    return 0;
}

static void report_slots(report *r, const lora_flags *f, const lora_memory *m)
{
    report_section(r, "The memory limit: adapter slots out of the KV cache (per GPU)");
    report_int(r, "slots", "GPU adapter slots", f->slots);
    report_int(r, "max_rank", "slot rank (largest allowed)", f->max_rank);
    report_num(r, "slot_bytes_per_gpu", "bytes per slot", U_BYTES, m->slot_size.bytes_per_gpu);
    report_num(r, "slots_bytes_per_gpu", "all slots", U_BYTES, m->fit.extra);
    report_num(r, "kv_budget_without_slots", "left for KV without slots", U_BYTES, m->bare.kv_budget);
    report_num(r, "kv_budget_bytes", "left for KV with the slots", U_BYTES, m->fit.kv_budget);
    report_num(r, "kv_tokens_lost", "KV capacity the slots take", U_TOKENS, m->fit.extra / m->fit.kv_per_token);
    report_int(r, "max_batch_without_slots", "largest batch without slots", m->bare.max_batch);
    report_int(r, "max_batch", "largest batch with the slots", m->fit.max_batch);
}

static void report_host(report *r, const lora_flags *f, const replica_setup *s, const lora_memory *m)
{
    report_section(r, "Host cache and load on miss");
    report_int(r, "host_cache", "adapters in host memory", f->host_cache);
    report_num(r, "host_cache_bytes", "host memory they take", U_BYTES, f->host_cache * m->size.bytes);
    report_num(r, "host_bw", "host-to-GPU bandwidth (PCIe, per direction)", U_BANDWIDTH, s->gpu->host_bw);
    report_num(r, "load_time", "load one adapter into a slot (each GPU its shard)", U_SECONDS,
               lora_load_time(s->gpu, &m->size));
}

static void report_step(report *r, const device_setup *d, const lora_flags *f, const lora_answer *a)
{
    const lora_step_cost *step = &a->step;
    device_report_first(r, d, 1, "the step-time limit, one decode step with D distinct adapters on one GPU");
    report_num(r, "expected_distinct_uniform", "expected distinct adapters in the batch (uniform)", U_REAL,
               a->expected_d);
    report_int(r, "distinct", "distinct adapters D in this step", a->distinct);
    report_num(r, "base_step_time", "base step (no adapters)", U_SECONDS, step->base.time);
    report_num(r, "adapter_weight_bytes", "adapter weights read", U_BYTES, step->weight_bytes);
    report_num(r, "adapter_act_bytes", "adapter activations read and written", U_BYTES, step->act_bytes);
    report_num(r, "adapter_flop", "adapter FLOP", U_FLOP, step->flop);
    report_num(r, "adapter_intensity", "FLOP per adapter weight byte (about B/D)", U_INTENSITY, step->intensity);
    report_int(r, "launches", "adapter kernels (shrink + expand per target per layer)", step->launches);
    report_num(r, "launch_s", "fixed cost per kernel", U_SECONDS, a->shape.launch_s);
    report_num(r, "adapter_time_ops", "adapter ops (rooflines)", U_SECONDS, step->time_ops);
    report_num(r, "adapter_time_launch", "adapter kernels' fixed costs", U_SECONDS, step->time_launch);
    report_num(r, "step_time", "step with adapters", U_SECONDS, step->time);
    report_num(r, "step_ratio", "step with adapters / base step", U_REAL, step->ratio);
    report_num(r, "adapter_share", "adapters' share of the step", U_REAL, step->adapter_share);
    report_num(r, "tokens_per_s", "aggregate tokens/s", U_TOKENS_PER_S, step->tokens_per_s);
    report_num(r, "base_tokens_per_s", "aggregate tokens/s of the base alone", U_TOKENS_PER_S,
               step_tokens_per_second(&step->base));
    if (f->max_rank > f->rank)
        report_num(r, "padded_step_ratio", "step ratio when every adapter runs padded to the slot rank", U_REAL,
                   a->padded.ratio);
}

/* Step time against D, doubling up to the slots (or the batch). */
static void report_by_distinct(report *r, const lora_flags *f, const replica_setup *s, const lora_memory *m,
                               const lora_answer *a)
{
    report_table *t = report_table_add(r, "by_distinct", "Step time against distinct adapters (this batch)");
    report_col(t, "distinct", "D", U_INT, 0);
    report_col(t, "adapter_weight_bytes", "adapter bytes", U_BYTES, 0);
    report_col(t, "step_time", "step", U_SECONDS, 0);
    report_col(t, "step_ratio", "/ base", U_REAL, 0);
    report_col(t, "tokens_per_s", "tokens/s", U_TOKENS_PER_S, 0);
    int top = f->slots < f->batch ? f->slots : f->batch;
    char err[512];
    for (int d = 1; d <= top; d = d < top && 2 * d > top ? top : 2 * d) {
        lora_step_cost row;
        lora_step_shape sh = a->shape;
        sh.distinct = d;
        if (lora_step_cost_compute(s->gpu, s->prec, &m->c, &sh, &row, err, sizeof err) != 0)
            break;
        report_cell_int(t, d);
        report_cell_num(t, row.weight_bytes);
        report_cell_num(t, row.time);
        report_cell_num(t, row.ratio);
        report_cell_num(t, row.tokens_per_s);
        if (d == top)
            break;
    }
}

int cmd_lora(int argc, char **argv)
{
    lora_flags f;
    cli_common common;
    int rc = parse(argc, argv, &f, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if ((rc = check(&f)) != 0)
        return rc;
    cli_specs specs;
    device_setup d;
    replica_setup s;
    lora_memory m;
    lora_answer a;
    report *r = NULL;
    if ((rc = cli_specs_load(DOC.name, &common, &specs)) != 0)
        return rc;
    if ((rc = replica_setup_resolve(DOC.name, &specs, &f.replica, &d, &s)) != 0 ||
        (rc = check_memory(&f, &s, &m)) != 0 || (rc = compute(&f, &s, &d, &m, &a)) != 0)
        goto done;

    r = report_new(DOC.name);
    replica_report_inputs(r, &s);
    device_report_measured(r, &d);
    report_int(r, "batch", "batch (sequences)", f.batch);
    report_adapter(r, &m.c, &m.size, &m.ten);
    report_slots(r, &f, &m);
    report_host(r, &f, &s, &m);
    report_step(r, &d, &f, &a);
    report_by_distinct(r, &f, &s, &m, &a);
    report_calibrated(r, &d, &a.step_cal);
    if (!f.launch_s_text)
        report_note(r, "adapter kernels are charged %g us each (an assumption: --launch-us; kernels/launch.cu "
                    "measures your card)", f.launch_us);
    report_note(r, "capacity and links: %s", s.gpu->link_source);
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
