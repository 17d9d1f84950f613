#include "cli_replica.h"

#include "expert_parallel.h"
#include "pipeline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

replica_flags replica_flags_default(unsigned device_takes)
{
    replica_flags f = {NULL, device_flags_default(device_takes, NULL), NULL, NULL, NULL, NULL, NULL, NULL, 1, 4096, 1,
                       -1, -1, NULL, "", ""};
    memory_policy p = memory_policy_default();
    snprintf(f.activation_help, sizeof f.activation_help,
             "tokens per step the activation reserve is sized for (default %d)", p.activation_tokens);
    snprintf(f.sampled_help, sizeof f.sampled_help,
             "positions per step that get fp32 logits in the reserve (default %d)", p.sampled_tokens);
    return f;
}

int replica_flag_opts(replica_flags *f, cli_opt *o)
{
    int n = 0;
    o[n++] = (cli_opt){"--model", OPT_STRING, &f->model, "M", "model key (napkin specs --models)", 1, 0};
    n += device_flag_opts(&f->device, DEVICE_GPU, o + n);
    const cli_opt shape[] = {
        {"--tp", OPT_POS_INT, &f->tp, "N", "tensor-parallel degree: GPUs per replica (default 1)", 0, 0},
        {"--context", OPT_TOKENS, &f->context, "C", "tokens in each sequence's KV cache (default 4096)", 0, 0},
        {"--pp", OPT_POS_INT, &f->pp, "N", "pipeline stages, each of --tp GPUs (default 1)", 0, 0},
        {"--dtype", OPT_STRING, &f->dtype, "D", "weights, KV, activations and compute (default bf16)", 0, 0},
        {"--weights", OPT_STRING, &f->weights, "Q", WEIGHTS_FLAG_HELP, 0, 0},
        {"--moe-weights", OPT_STRING, &f->moe_weights, "Q", MOE_WEIGHTS_FLAG_HELP, 0, 0},
        {"--kv", OPT_STRING, &f->kv, "D", "KV cache dtype, overriding --dtype", 0, 0},
        {"--act", OPT_STRING, &f->act, "D", "activation dtype, overriding --dtype", 0, 0},
    };
    memcpy(o + n, shape, sizeof shape);
    n += CLI_NOPTS(shape);
    n += device_flag_opts(&f->device, DEVICE_USABLE, o + n);
    o[n++] = (cli_opt){"--activation-tokens", OPT_NONNEG_INT, &f->activation_tokens, "T", f->activation_help, 0, 0};
    o[n++] = (cli_opt){"--sampled-tokens", OPT_NONNEG_INT, &f->sampled_tokens, "S", f->sampled_help, 0, 0};
    n += device_flag_opts(&f->device, DEVICE_HBM, o + n);
    o[n++] = (cli_opt){"--compute", OPT_STRING, &f->compute, "D",
                       "tensor-core dtype, overriding --dtype (int4 computes in bf16)", 0, 0};
    return n;
}

/* With a split layout each GPU holds its share of the experts
 * (layout_weight_bytes_per_gpu): replica_memory_plan's budget, less the
 * rest.  Returns 0, or -1 with the message in err. */
static int hold_expert_share(replica_setup *out, char *err, size_t errlen)
{
    const parallel_layout *l = &out->layout;
    double held = layout_weight_bytes_per_gpu_at(out->model, out->prec, l);
    out->mem.kv_budget += out->mem.weights - held;
    out->mem.weights = held;
    if (out->mem.kv_budget > 0)
        return 0;
    snprintf(err, errlen, "the weights (%.1f GB per GPU at tp %d, moe-tp %d, moe-ep %d) and the activation reserve "
             "exceed the usable memory", held / 1e9, l->tp, l->moe_tp, l->moe_ep);
    return -1;
}

int replica_setup_resolve(const char *cmd, const cli_specs *specs, const replica_flags *f, device_setup *device,
                          replica_setup *out)
{
    memset(out, 0, sizeof *out);
    int rc;
    if ((rc = cli_find_model(cmd, specs, "--model", f->model, &out->model)) != 0 ||
        (rc = cli_precision(cmd, f->dtype, f->weights, f->moe_weights, f->kv, f->act, f->compute, &out->prec)) != 0 ||
        (rc = device_setup_resolve(cmd, specs, &f->device, out->prec.compute, device)) != 0 ||
        (rc = cli_precision_check(cmd, out->model, &device->timed, &out->prec, f->moe_weights)) != 0)
        return rc;
    out->gpu = &device->timed;
    out->tp = f->tp;
    out->context = f->context;
    out->pp = f->pp;
    out->full = out->model;
    out->policy = device_policy(&f->device, f->activation_tokens, f->sampled_tokens);

    char err[512];
    step_shape probe = decode_shape(1, f->context, f->tp, out->prec);
    if (step_shape_check(out->model, &probe, err, sizeof err) != 0)
        return cli_fail(cmd, EXIT_USAGE, "--tp %d: %s", f->tp, err);
    if (pipeline_stage_model(out->full, f->pp, &out->stage, err, sizeof err) != 0)
        return cli_fail(cmd, EXIT_USAGE, "--pp %d: %s", f->pp, err);
    out->model = &out->stage; /* memory and steps are one stage's */
    out->layout = (parallel_layout){f->tp, 1, f->tp, 1};
    if (f->layout && (rc = ep_flags_parallel(cmd, f->layout, out->full, f->tp, &out->layout)) != 0)
        return rc;
    out->ep = out->layout.moe_ep;
    const int split = layout_is_split(&out->layout);
    if (split && f->pp > 1)
        return cli_fail(cmd, EXIT_USAGE, "--pp %d with expert parallelism or --attention-dp is not modelled: give one "
                        "or the other", f->pp);
    int planned = replica_memory_plan(out->model, out->gpu, out->prec, f->tp, out->policy, &out->mem, err, sizeof err);
    if (split)
        planned = hold_expert_share(out, err, sizeof err);
    if (planned != 0)
        return cli_fail(cmd, EXIT_NO_FIT, "%s (--tp %d now)", err, f->tp);
    return 0;
}

void replica_report_inputs(report *r, const replica_setup *s)
{
    char title[160];
    if (s->pp > 1)
        snprintf(title, sizeof title, "%s on %s x %d x %d (tp x pp)", s->full->name, s->gpu->name, s->tp, s->pp);
    else
        snprintf(title, sizeof title, "%s on %s x %d", s->full->name, s->gpu->name, s->tp);
    report_section(r, title);
    report_text(r, "model", "model", s->full->key);
    report_text(r, "gpu", "GPU", s->gpu->key);
    report_int(r, "tp", "tensor-parallel degree", s->tp);
    report_int(r, "pp", "pipeline stages", s->pp);
    report_int(r, "context", "context (tokens)", s->context);
    report_text(r, "weights_dtype", "weights dtype", dtype_name(s->prec.weights));
    precision_report_formats(r, s->full, &s->prec);
    report_text(r, "kv_dtype", "KV dtype", dtype_name(s->prec.kv));
    report_text(r, "act_dtype", "activation dtype", dtype_name(s->prec.act));
    report_num(r, "usable_fraction", "usable share of HBM", U_REAL, s->policy.usable_fraction);
    report_int(r, "activation_tokens", "activation reserve for (tokens)", s->policy.activation_tokens);
    report_int(r, "sampled_tokens", "of which get logits", s->policy.sampled_tokens);
    report_note(r, "model: %s", s->full->source);
    if (s->pp > 1)
        report_note(r, "memory and the step are one pipeline stage's: %d of the %d layers and one vocabulary matrix",
                    s->stage.layers, s->full->layers);
    report_note(r, "GPU: %s", s->gpu->source);
}

void replica_report_memory(report *r, const replica_setup *s)
{
    const model_spec *m = s->full;
    param_count pc = model_params(m);
    report_section(r, "Memory per GPU");
    report_num(r, "params_total", "parameters, total", U_PARAMS, pc.total);
    report_num(r, "params_active", "parameters used per token (embedding counted)", U_PARAMS, pc.active);
    report_num(r, "params_active_nonembedding", "parameters used per token, embedding aside", U_PARAMS,
               pc.active_nonembedding);
    if (m->mtp_layers > 0) { /* released beside the model, not served here */
        report_num(r, "params_mtp", "multi-token-prediction module, as released (not served)", U_PARAMS, pc.mtp);
        report_num(r, "params_active_with_mtp", "used per training token, embedding aside, MTP included", U_PARAMS,
                   pc.active_nonembedding + pc.mtp_active);
    }
    report_num(r, "hbm_bytes", s->policy.capacity > 0 ? "memory (--hbm)" : "memory the driver reports", U_BYTES,
               s->mem.hbm);
    report_num(r, "hbm_datasheet_bytes", "memory on the datasheet", U_BYTES, s->gpu->mem_bytes_datasheet);
    report_num(r, "usable_bytes", "usable", U_BYTES, s->mem.usable);
    report_num(r, "weight_bytes_per_gpu", "weights", U_BYTES, s->mem.weights);
    report_num(r, "activation_bytes", "activation reserve", U_BYTES, s->mem.activations);
    report_num(r, "kv_budget_bytes", "left for KV", U_BYTES, s->mem.kv_budget);
    report_num(r, "kv_bytes_per_token", "KV per token, whole model", U_BYTES, kv_bytes_per_token(m, s->prec.kv));
    report_num(r, "kv_bytes_per_token_per_gpu", "KV per token, this GPU", U_BYTES, s->mem.kv_per_token);
    report_num(r, "kv_bytes_per_sequence", "KV per sequence, whole model", U_BYTES,
               kv_bytes_per_sequence(m, s->prec.kv, s->context));
    report_num(r, "kv_token_capacity", "KV capacity", U_TOKENS, kv_token_capacity(&s->mem));
    report_int(r, "max_batch", "largest batch at this context", max_batch_for_memory(&s->mem, s->context));
    if (s->tp > m->kv_heads && m->kv_lora_rank == 0)
        report_note(r, "note: tp %d exceeds the %d KV heads of %s, so each GPU holds a replicated KV head.", s->tp,
                    m->kv_heads, m->key);
}
