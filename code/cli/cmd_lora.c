/* napkin lora: many fine-tunes on one base.  What an adapter weighs (whole
 * and per GPU), tenants as full copies against one base, the KV capacity the
 * adapter slots take and the largest batch left, the host cache and the cost
 * of a miss, and the decode step with D distinct adapters against the base. */
#include "cli_rates.h"
#include "cli_replica.h"
#include "commands.h"
#include "lora.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cli_doc DOC = {
    "lora",
    "many fine-tunes on one base: adapter bytes, slots against the KV cache, step time with D distinct adapters",
    "--model M --gpu G [--tp N] [--rank R] [--max-rank R] [--targets q,k,v,o,...]\n"
    "                     [--adapters N] [--slots S] [--host-cache N] [--distinct D] [--batch B]\n"
    "                     [--context C] [--adapter-dtype D] [--launch-us U] [--no-comm]\n"
    "                     [--dtype D | --weights D --kv D --act D --compute D]\n"
    "                     [--usable F] [--activation-tokens T] [--sampled-tokens S] [--hbm BYTES]\n"
    "                     [--calibrate published:SYSTEM/BACKEND | --roofline] [--format table|tsv|json]",
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
    "set (h100, h200), or --calibrate NAME; --roofline gives the bound alone.  The\n"
    "adapter kernels' fixed cost stays --launch-us in both answers.",
};

static void report_calibrated(report *r, const cli_rates *cal, const lora_step_cost *c)
{
    report_section(r, "The same step at measured kernel rates (calibrated)");
    cli_rates_report(r, cal);
    if (!cal->have)
        return;
    report_num(r, "base_step_time_calibrated", "base step, calibrated", U_SECONDS, c->base.time);
    report_num(r, "adapter_time_ops_calibrated", "adapter ops, calibrated", U_SECONDS, c->time_ops);
    report_num(r, "step_time_calibrated", "step with adapters, calibrated", U_SECONDS, c->time);
    report_num(r, "step_ratio_calibrated", "step with adapters / base step, calibrated", U_REAL, c->ratio);
    report_num(r, "adapter_share_calibrated", "adapters' share of the step, calibrated", U_REAL, c->adapter_share);
    report_num(r, "tokens_per_s_calibrated", "aggregate tokens/s, calibrated", U_TOKENS_PER_S, c->tokens_per_s);
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

int cmd_lora(int argc, char **argv)
{
    replica_flags f = replica_flags_default();
    int rank = 16, max_rank = 0, adapters = 300, slots = 8, host_cache = -1, distinct = 0, batch = 64;
    int no_comm = 0, roofline = 0;
    const char *calibrate = NULL;
    const char *targets_s = "q,k,v,o", *adapter_dtype_s = "bf16", *launch_s_text = NULL;
    cli_opt opts[REPLICA_NOPTS + 14];
    replica_flag_opts(&f, opts);
    const cli_opt mine[] = {
        {"--rank", OPT_POS_INT, &rank, "R", "adapter rank (default 16)", 0, 0},
        {"--max-rank", OPT_POS_INT, &max_rank, "R", "rank each GPU slot is sized for (default --rank)", 0, 0},
        {"--targets", OPT_STRING, &targets_s, "LIST",
         "modules with adapters: q,k,v,o,gate,up,down, all, attention (default q,k,v,o)", 0, 0},
        {"--adapters", OPT_POS_INT, &adapters, "N", "fine-tunes served from the one base (default 300)", 0, 0},
        {"--slots", OPT_NONNEG_INT, &slots, "S", "GPU adapter slots (vLLM max_loras; default 8)", 0, 0},
        {"--host-cache", OPT_NONNEG_INT, &host_cache, "N",
         "adapters held in host memory (vLLM max_cpu_loras; default --adapters)", 0, 0},
        {"--distinct", OPT_POS_INT, &distinct, "D",
         "distinct adapters in the batch (default: the expectation under uniform popularity, within the slots)", 0, 0},
        {"--batch", OPT_POS_INT, &batch, "B", "sequences decoded together (default 64)", 0, 0},
        {"--adapter-dtype", OPT_STRING, &adapter_dtype_s, "D", "dtype of A and B (default bf16)", 0, 0},
        {"--launch-us", OPT_STRING, &launch_s_text, "U",
         "fixed cost of one adapter kernel in microseconds (default 2.5; 0 for a fused step)", 0, 0},
        {"--no-comm", OPT_FLAG, &no_comm, NULL, "leave the tensor-parallel collectives out of the base step", 0, 0},
        {"--calibrate", OPT_STRING, &calibrate, "NAME",
         "the calibrated answer's rates (default: the GPU's published set)", 0, 0},
        {"--roofline", OPT_FLAG, &roofline, NULL, "the roofline alone, no calibrated answer", 0, 0},
    };
    memcpy(opts + REPLICA_NOPTS, mine, sizeof mine);
    cli_common common;
    int rc = cli_parse(&DOC, argc, argv, opts, REPLICA_NOPTS + CLI_NOPTS(mine), &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;

    char err[512];
    lora_targets targets;
    if (lora_targets_parse(targets_s, &targets, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--targets: %s", err);
    dtype adapter_dtype;
    if ((rc = cli_dtype(DOC.name, "--adapter-dtype", adapter_dtype_s, &adapter_dtype)) != 0)
        return rc;
    double launch_us = LORA_LAUNCH_S_DEFAULT * 1e6;
    /* 0 is allowed (a fused or graphed step), which OPT_POS_REAL is not */
    if (launch_s_text && (rc = cli_real_in(DOC.name, "--launch-us", launch_s_text, 0, INFINITY, &launch_us)) != 0)
        return rc;
    if (max_rank == 0)
        max_rank = rank;
    if (max_rank < rank)
        return cli_fail(DOC.name, EXIT_USAGE, "--max-rank %d is below --rank %d: a slot must hold the adapter",
                        max_rank, rank);
    if (host_cache < 0)
        host_cache = adapters;
    if (distinct > batch)
        return cli_fail(DOC.name, EXIT_USAGE, "--distinct %d exceeds --batch %d: a batch holds at most one adapter "
                        "per sequence", distinct, batch);
    if (distinct > adapters)
        return cli_fail(DOC.name, EXIT_USAGE, "--distinct %d exceeds --adapters %d", distinct, adapters);

    cli_specs specs;
    if ((rc = cli_specs_load(DOC.name, &common, &specs)) != 0)
        return rc;
    replica_setup s;
    if ((rc = replica_setup_resolve(DOC.name, &specs, &f, &s)) != 0) {
        cli_specs_free(&specs);
        return rc;
    }
    lora_config c = {s.model, rank, targets, adapter_dtype, s.tp};
    lora_config slot_cfg = c;
    slot_cfg.rank = max_rank;
    lora_size size, slot_size;
    lora_tenancy ten;
    if (lora_adapter_size(&c, &size, err, sizeof err) != 0 ||
        lora_adapter_size(&slot_cfg, &slot_size, err, sizeof err) != 0 ||
        lora_tenancy_compare(&c, s.prec, adapters, &ten, err, sizeof err) != 0) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_USAGE, "%s%s", strstr(err, "rank") ? "--rank/--max-rank: " : "", err);
    }

    /* The memory limit: nothing is timed for a batch that does not fit. */
    fit_check fit, bare;
    if (lora_memory_fit(s.gpu, s.policy, s.prec, &slot_cfg, slots, batch, s.context, &fit, err, sizeof err) != 0 ||
        lora_memory_fit(s.gpu, s.policy, s.prec, &slot_cfg, 0, batch, s.context, &bare, err, sizeof err) != 0) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    }
    if (!fit.fits) {
        char why[320];
        fit_check_describe(&fit, batch, s.context, why, sizeof why);
        cli_specs_free(&specs);
        if (fit.max_batch < 1)
            return cli_fail(DOC.name, EXIT_NO_FIT, "--slots %d at rank %d: %s; fewer --slots, a lower --max-rank or a "
                            "larger --tp", slots, max_rank, why);
        return cli_fail(DOC.name, EXIT_NO_FIT,
                        "--batch %d does not fit beside %d adapter slots of %.1f MB per GPU: %s (without the slots: %d)",
                        batch, slots, slot_size.bytes_per_gpu / MB, why, bare.max_batch);
    }
    /* The step-time limit: D distinct adapters need D slots. */
    double expected_d = lora_expected_distinct_uniform(adapters, batch);
    if (distinct == 0) {
        distinct = (int)lround(expected_d);
        if (distinct < 1)
            distinct = 1;
        if (slots > 0 && distinct > slots)
            distinct = slots;
    }
    if (slots == 0) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_NO_FIT, "--slots 0: no adapter can run without a GPU slot; give --slots 1 or more");
    }
    if (distinct > slots) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_NO_FIT,
                        "--distinct %d does not fit %d adapter slots: a step holds at most %d distinct adapters "
                        "(the rest wait); the largest --distinct that fits is %d",
                        distinct, slots, slots, slots);
    }
    cli_rates cal;
    if ((rc = cli_rates_resolve(DOC.name, s.gpu, calibrate, roofline, &cal)) != 0) {
        cli_specs_free(&specs);
        return rc;
    }
    lora_step_shape shape = {batch, s.context, distinct, launch_us * 1e-6, no_comm};
    lora_step_cost step, padded, step_cal;
    memset(&step_cal, 0, sizeof step_cal);
    if (lora_step_cost_compute(s.gpu, s.prec, &c, &shape, &step, err, sizeof err) != 0 ||
        lora_step_cost_compute(s.gpu, s.prec, &slot_cfg, &shape, &padded, err, sizeof err) != 0 ||
        (cal.have && lora_step_cost_compute(&cal.gpu, s.prec, &c, &shape, &step_cal, err, sizeof err) != 0)) {
        cli_specs_free(&specs);
        return cli_fail(DOC.name, EXIT_USAGE, "%s%s", err, no_comm ? "" : " (or --no-comm)");
    }

    report *r = report_new(DOC.name);
    replica_report_inputs(r, &s);
    report_int(r, "batch", "batch (sequences)", batch);
    report_adapter(r, &c, &size, &ten);

    report_section(r, "The memory limit: adapter slots out of the KV cache (per GPU)");
    report_int(r, "slots", "GPU adapter slots", slots);
    report_int(r, "max_rank", "slot rank (largest allowed)", max_rank);
    report_num(r, "slot_bytes_per_gpu", "bytes per slot", U_BYTES, slot_size.bytes_per_gpu);
    report_num(r, "slots_bytes_per_gpu", "all slots", U_BYTES, fit.extra);
    report_num(r, "kv_budget_without_slots", "left for KV without slots", U_BYTES, bare.kv_budget);
    report_num(r, "kv_budget_bytes", "left for KV with the slots", U_BYTES, fit.kv_budget);
    report_num(r, "kv_tokens_lost", "KV capacity the slots take", U_TOKENS, fit.extra / fit.kv_per_token);
    report_int(r, "max_batch_without_slots", "largest batch without slots", bare.max_batch);
    report_int(r, "max_batch", "largest batch with the slots", fit.max_batch);

    report_section(r, "Host cache and load on miss");
    report_int(r, "host_cache", "adapters in host memory", host_cache);
    report_num(r, "host_cache_bytes", "host memory they take", U_BYTES, host_cache * size.bytes);
    report_num(r, "host_bw", "host-to-GPU bandwidth (PCIe, per direction)", U_BANDWIDTH, s.gpu->host_bw);
    report_num(r, "load_time", "load one adapter into a slot (each GPU its shard)", U_SECONDS,
               lora_load_time(s.gpu, &size));

    report_section(r, "The step-time limit: one decode step with D distinct adapters (per GPU)");
    report_num(r, "expected_distinct_uniform", "expected distinct adapters in the batch (uniform)", U_REAL,
               expected_d);
    report_int(r, "distinct", "distinct adapters D in this step", distinct);
    report_num(r, "base_step_time", "base step (no adapters)", U_SECONDS, step.base.time);
    report_num(r, "adapter_weight_bytes", "adapter weights read", U_BYTES, step.weight_bytes);
    report_num(r, "adapter_act_bytes", "adapter activations read and written", U_BYTES, step.act_bytes);
    report_num(r, "adapter_flop", "adapter FLOP", U_FLOP, step.flop);
    report_num(r, "adapter_intensity", "FLOP per adapter weight byte (about B/D)", U_INTENSITY, step.intensity);
    report_int(r, "launches", "adapter kernels (shrink + expand per target per layer)", step.launches);
    report_num(r, "launch_s", "fixed cost per kernel", U_SECONDS, shape.launch_s);
    report_num(r, "adapter_time_ops", "adapter ops (rooflines)", U_SECONDS, step.time_ops);
    report_num(r, "adapter_time_launch", "adapter kernels' fixed costs", U_SECONDS, step.time_launch);
    report_num(r, "step_time", "step with adapters", U_SECONDS, step.time);
    report_num(r, "step_ratio", "step with adapters / base step", U_REAL, step.ratio);
    report_num(r, "adapter_share", "adapters' share of the step", U_REAL, step.adapter_share);
    report_num(r, "tokens_per_s", "aggregate tokens/s", U_TOKENS_PER_S, step.tokens_per_s);
    report_num(r, "base_tokens_per_s", "aggregate tokens/s of the base alone", U_TOKENS_PER_S,
               step_tokens_per_second(&step.base));
    if (max_rank > rank)
        report_num(r, "padded_step_ratio", "step ratio when every adapter runs padded to the slot rank", U_REAL,
                   padded.ratio);

    report_table *t = report_table_add(r, "by_distinct", "Step time against distinct adapters (this batch)");
    report_col(t, "distinct", "D", U_INT, 0);
    report_col(t, "adapter_weight_bytes", "adapter bytes", U_BYTES, 0);
    report_col(t, "step_time", "step", U_SECONDS, 0);
    report_col(t, "step_ratio", "/ base", U_REAL, 0);
    report_col(t, "tokens_per_s", "tokens/s", U_TOKENS_PER_S, 0);
    int top = slots < batch ? slots : batch;
    for (int d = 1; d <= top; d = d < top && 2 * d > top ? top : 2 * d) {
        lora_step_cost row;
        lora_step_shape sh = shape;
        sh.distinct = d;
        if (lora_step_cost_compute(s.gpu, s.prec, &c, &sh, &row, err, sizeof err) != 0)
            break;
        report_cell_int(t, d);
        report_cell_num(t, row.weight_bytes);
        report_cell_num(t, row.time);
        report_cell_num(t, row.ratio);
        report_cell_num(t, row.tokens_per_s);
        if (d == top)
            break;
    }
    report_calibrated(r, &cal, &step_cal);
    if (!launch_s_text)
        report_note(r, "adapter kernels are charged %g us each (an assumption: --launch-us; kernels/launch.cu "
                    "measures your card)", launch_us);
    report_note(r, "capacity and links: %s", s.gpu->link_source);
    rc = report_print(r, common.format, stdout);
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
