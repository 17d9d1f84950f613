/* napkin decode: the whole chain for one decode step of a batch, from the
 * memory that decides the batch to the tokens per second the step allows. */
#include "cli_band.h"
#include "cli_ep.h"
#include "cli_mtp.h"
#include "cli_replica.h"
#include "commands.h"
#include "pipeline.h"
#include "roofline.h"

#include <math.h>
#include <string.h>

static const cli_doc DOC = {
    "decode",
    "one decode step op by op: memory, intensity, step time, tokens per second",
    "--model M --gpu G [--tp N] [--batch B] [--context C]\n"
    "                     [--dtype D | --weights Q --moe-weights Q --kv D --act D --compute D]\n"
    "                     [--usable F] [--activation-tokens T] [--sampled-tokens S] [--hbm BYTES]\n"
    "                     [--no-comm] [--pp N [--microbatches M]] [--routing-skew S]\n"
    "                     [--ep N [--gpus-per-node N] [--net-gb-s B] [--imbalance F]]\n"
    "                     [--mtp N --mtp-accept A]\n"
    "                     [--attention-dp D] [--moe-tp M] [--moe-ep E]\n"
    "                     [--calibrate DIR|NAME | --roofline] [--format table|tsv|json]",
    "One GPU of a tensor-parallel group runs every op of the step; each op takes\n"
    "its roofline time, max(FLOP / peak, bytes / bandwidth), and the step time is\n"
    "their sum plus the tensor-parallel collectives at tp > 1: two all-reduces of\n"
    "the residual stream per layer, one for the embedding and a gather of the\n"
    "logits, each latency + 2(tp-1)/tp x bytes / link bandwidth for a ring\n"
    "all-reduce (--no-comm leaves them out: the pure roofline).  The op table shows one occurrence\n"
    "of each op; x is how many times it occurs per step (once per layer, or once).\n"
    "Aggregate tokens/s = batch / step time; per user = 1 / step time.\n"
    "Beside the roofline, a calibrated answer prices each op with the achieved\n"
    "rates fitted to published kernel measurements (napkin calibrate): by default\n"
    "the GPU's published TensorRT-LLM set (h100, h200), or --calibrate NAME;\n"
    "--calibrate DIR times both answers on a measured set's ceilings (a CPU\n"
    "set is a device of its own: no --gpu); --roofline gives the bound alone.\n"
    "A mixture reads the experts its batch touches: E(1 - (1 - k/E)^tokens) under\n"
    "uniform routing, fewer under --routing-skew S (a Zipf(S) router).\n"
    "--ep N spreads the routed experts over N GPUs (N a multiple of --tp): the\n"
    "attention runs in N/tp replicas of --tp GPUs, each decoding --batch\n"
    "sequences; each GPU dispatches batch/tp tokens to the GPUs of their top-k\n"
    "experts and combines the outputs back (the all-to-all of napkin ep, NVLink\n"
    "inside --gpus-per-node, --net-gb-s across), and the step waits for the\n"
    "busiest GPU: --imbalance F times the mean, or the hottest GPU of the skewed\n"
    "router.  Tokens/s are one attention replica's; the group's are N/tp times.\n"
    "--mtp N --mtp-accept A (a model with an MTP module: DeepSeek-V3/R1): the\n"
    "module drafts N tokens a step, one module pass each, the model verifies\n"
    "N + 1 tokens a sequence in one step, and a step yields 1 + A + ... + A^N\n"
    "tokens (chapter 10's capped geometric process): time per output token =\n"
    "(verify step + N passes) / that; the module's weights and KV are resident.\n"
    "The layout as the measured runs state it: --attention-dp D ranks of --tp\n"
    "GPUs, each decoding --batch sequences (the replica spans tp x D GPUs), the\n"
    "routed experts split --moe-tp M x --moe-ep E (M x E = tp x D; --ep is\n"
    "--moe-ep, and alone means D = E/tp, M = 1).  With moe-ep 1 over D ranks the\n"
    "tokens are gathered and the partial sums reduce-scattered over the replica.\n"
    "A batch whose KV cache does not fit is an error (exit status 1) that names\n"
    "the largest batch that does; so is a model whose weights do not fit (try a\n"
    "larger --tp).  Exit status 2 for a bad flag, value or choice.",
};

/* The batch must fit before the step is worth timing. */
static int check_batch_fits(const replica_setup *s, int batch, int mtp)
{
    resident_model rm = {s->model, s->prec, s->tp};
    fit_check f;
    char err[256];
    if (memory_fit(s->gpu, s->policy, &rm, 1, 0, batch, s->context, &f, err, sizeof err) != 0 ||
        (mtp && mtp_fit_adjust(&rm, batch, s->context, &f, err, sizeof err) != 0) ||
        (layout_is_split(&s->layout) &&
         layout_fit_adjust(s->model, s->prec, &s->layout, batch, s->context, &f, err, sizeof err) != 0))
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    if (f.fits)
        return 0;
    int max_batch = f.max_batch;
    char budget[32], per_token[32];
    fmt_bytes(f.kv_budget, budget, sizeof budget);
    fmt_bytes(f.kv_per_token, per_token, sizeof per_token);
    if (max_batch == 0)
        return cli_fail(DOC.name, EXIT_NO_FIT,
                        "--batch %d does not fit: not one sequence of %d tokens fits the %s left for KV per GPU "
                        "(%s per token); try a shorter --context, a larger --tp or --kv fp8",
                        batch, s->context, budget, per_token);
    return cli_fail(DOC.name, EXIT_NO_FIT,
                    "--batch %d does not fit: the %s left for KV per GPU (%s per token) holds %d sequences "
                    "of %d tokens, so the largest batch that fits is %d (or try a larger --tp, --kv fp8, "
                    "a shorter --context)",
                    batch, budget, per_token, max_batch, s->context, max_batch);
}

static void report_ops(report *r, const model_spec *m, const gpu_spec *g, const rated_device *cal,
                       const step_shape *shape, const parallel_layout *pl, const ep_layout *ep, double peak)
{
    op_cost ops[DECODER_MAX_OPS];
    char err[256];
    int n = layout_decoder_step_ops(m, g, shape, pl, ep, ops, DECODER_MAX_OPS, err, sizeof err);
    report_table *t = report_table_add(r, "ops", "Ops of one step on one GPU (one occurrence each; x = per step)");
    report_col(t, "op", "op", U_TEXT, 0);
    report_col(t, "count", "x", U_INT, 0);
    report_col(t, "flop", "FLOP", U_FLOP, 0);
    report_col(t, "weight_bytes", "weights", U_BYTES, 0);
    report_col(t, "kv_bytes", "KV", U_BYTES, 0);
    report_col(t, "act_bytes", "activations", U_BYTES, 0);
    report_col(t, "comm_bytes", "link", U_BYTES, 0);
    report_col(t, "intensity", "intensity", U_INTENSITY, 0);
    report_col(t, "time", "roofline", U_SECONDS, 0);
    report_col(t, "bound", "set by", U_TEXT, 0);
    if (cal->have)
        report_col(t, "time_calibrated", "estimate", U_SECONDS, 0);
    for (int i = 0; i < n; i++) {
        const op_cost *op = &ops[i];
        bound_kind b = BOUND_MEMORY;
        double time = price_op(op, g, peak, shape->tp, &b);
        report_cell_text(t, op->name);
        report_cell_int(t, op_repeats(m, op));
        report_cell_num(t, op->flop);
        report_cell_num(t, op->weight_bytes);
        report_cell_num(t, op->kv_bytes);
        report_cell_num(t, op->act_bytes);
        report_cell_num(t, op->comm_bytes);
        report_cell_num(t, op_is_comm(op) ? NAN : arithmetic_intensity(op->flop, op_bytes(op)));
        report_cell_num(t, time);
        report_cell_text(t, op_is_comm(op) ? "link" : bound_name(b));
        if (cal->have)
            report_cell_num(t, price_op(op, &cal->gpu, peak, shape->tp, NULL));
    }
}

static void report_step(report *r, const device_setup *d, const gpu_spec *g, const step_shape *shape,
                        const step_cost *c, double peak)
{
    device_report_first(r, d, 1, "one decode step, per GPU");
    report_num(r, "step_flop", "FLOP", U_FLOP, c->flop);
    report_num(r, "step_weight_bytes", "weight bytes read", U_BYTES, c->weight_bytes);
    report_num(r, "step_kv_bytes", "KV bytes read and written", U_BYTES, c->kv_bytes);
    report_num(r, "step_act_bytes", "activation bytes", U_BYTES, c->act_bytes);
    report_num(r, "step_bytes", "bytes moved", U_BYTES, c->bytes);
    report_num(r, "step_intensity", "intensity of the step", U_INTENSITY, c->intensity);
    report_num(r, "peak_flops", "dense peak", U_FLOPS, peak);
    report_num(r, "mem_bw", "HBM bandwidth", U_BANDWIDTH, g->mem_bw);
    report_num(r, "ridge", "ridge (peak / bandwidth)", U_INTENSITY, ridge_intensity(peak, g->mem_bw));
    report_num(r, "time_memory", "memory time (bytes / bandwidth)", U_SECONDS, c->time_memory);
    report_num(r, "time_compute", "compute time (FLOP / peak)", U_SECONDS, c->time_compute);
    report_num(r, "comm_bytes", "collective bytes (messages)", U_BYTES, c->comm_bytes);
    report_num(r, "time_comm", shape->skip_comm ? "communication (left out: --no-comm)"
                                                : "communication (TP collectives and EP all-to-alls)",
               U_SECONDS, c->time_comm);
    report_num(r, "comm_share", "communication share of the step", U_REAL, c->time_comm / c->time);
    report_num(r, "step_time", "step time (op rooflines + collectives)", U_SECONDS, c->time);
    report_text(r, "bound", "set by", bound_name(c->bound));
    report_num(r, "tokens_per_s", "aggregate tokens/s", U_TOKENS_PER_S, step_tokens_per_second(c));
    report_num(r, "tokens_per_s_per_user", "tokens/s per user", U_TOKENS_PER_S,
               step_user_tokens_per_second(c, shape));
}

typedef struct {
    replica_flags replica;
    ep_flags ep;
    mtp_flags mtp;
    int batch, no_comm, microbatches;
} decode_flags;

static int parse(int argc, char **argv, decode_flags *f, cli_common *common)
{
    f->replica = replica_flags_default(DEVICE_PRICING | DEVICE_MEMORY);
    f->ep = ep_flags_default();
    f->mtp = mtp_flags_default();
    f->batch = 1;
    f->no_comm = f->microbatches = 0;
    cli_opt opts[REPLICA_NOPTS_MAX + 3 + DEVICE_NOPTS_MAX + EP_NOPTS + MTP_NOPTS];
    int n = replica_flag_opts(&f->replica, opts);
    const cli_opt mine[] = {
        {"--batch", OPT_POS_INT, &f->batch, "B", "sequences decoded together (default 1)", 0, 0},
        {"--no-comm", OPT_FLAG, &f->no_comm, NULL, "leave the tensor-parallel collectives out (the pure roofline)", 0,
         0},
        {"--microbatches", OPT_POS_INT, &f->microbatches, "M",
         "with --pp: microbatches the batch is split into (default min(batch, pp))", 0, 0},
    };
    memcpy(opts + n, mine, sizeof mine);
    n += CLI_NOPTS(mine);
    n += device_flag_opts(&f->replica.device, DEVICE_CALIBRATE | DEVICE_ROOFLINE, opts + n);
    ep_flag_opts(&f->ep, opts + n);
    n += EP_NOPTS;
    mtp_flag_opts(&f->mtp, opts + n);
    n += MTP_NOPTS;
    return cli_parse(&DOC, argc, argv, opts, n, common);
}

static int check(const decode_flags *f)
{
    if ((f->ep.ep > 1 || f->ep.moe_ep > 1 || f->ep.attention_dp > 1) && f->no_comm)
        return cli_fail(DOC.name, EXIT_USAGE, "--no-comm with --ep: the all-to-alls are the point of expert "
                                              "parallelism; leave --no-comm out");
    if (f->microbatches && f->replica.pp <= 1)
        return cli_fail(DOC.name, EXIT_USAGE, "--microbatches needs --pp above 1");
    if (f->mtp.steps && (f->ep.ep > 1 || f->replica.pp > 1))
        return cli_fail(DOC.name, EXIT_USAGE, "--mtp with --ep or --pp is not modelled yet: give one or the other");
    return 0;
}

/* What the step is priced on: the replica, its device and expert layout. */
typedef struct {
    cli_specs specs;
    device_setup device;
    replica_setup s;
    ep_layout epl;
    double peak;
    int mtp_steps; /* 0: no multi-token prediction */
    double mtp_accept;
} decode_setup;

static int resolve(const cli_common *common, decode_flags *f, decode_setup *u)
{
    int rc;
    if ((rc = cli_specs_load(DOC.name, common, &u->specs)) != 0)
        return rc;
    f->replica.layout = &f->ep;
    parallel_layout pl;
    if ((rc = replica_setup_resolve(DOC.name, &u->specs, &f->replica, &u->device, &u->s)) != 0 ||
        (rc = ep_flags_layout(DOC.name, &f->ep, u->s.full, u->s.gpu, u->s.tp, u->s.prec, &u->epl, &pl)) != 0 ||
        (rc = cli_gpu_peak(DOC.name, u->s.gpu, u->s.prec.compute, &u->peak)) != 0 ||
        (rc = mtp_flags_resolve(DOC.name, &f->mtp, u->s.full, &u->mtp_steps, &u->mtp_accept)) != 0)
        return rc;
    return check_batch_fits(&u->s, f->batch, u->mtp_steps > 0);
}

/* The step on g: one GPU of the tensor-parallel group, or of the split layout. */
static int price_step(const decode_setup *u, const gpu_spec *g, const step_shape *shape, step_cost *c, char *err,
                      size_t errlen)
{
    return layout_is_split(&u->s.layout)
               ? layout_decoder_step_cost(u->s.model, g, shape, &u->s.layout, &u->epl, c, err, errlen)
               : decoder_step_cost(u->s.model, g, shape, c, err, errlen);
}

/* The step both ways, and the pipeline's cycle with --pp. */
typedef struct {
    step_shape shape;
    rated_device cal;
    step_cost cost, cost_cal;
    pipeline_cost pc;
    int microbatches;
    mtp_round mtp, mtp_cal; /* with --mtp */
} decode_answer;

static int compute(const decode_flags *f, const decode_setup *u, decode_answer *a)
{
    const replica_setup *s = &u->s;
    a->shape = decode_shape(f->batch, s->context, s->tp, s->prec);
    a->shape.skip_comm = f->no_comm;
    a->shape.routing_skew = u->epl.routing_skew;
    a->cal = device_rated(&u->device);
    char err[512];
    if (price_step(u, s->gpu, &a->shape, &a->cost, err, sizeof err) != 0 ||
        (a->cal.have && price_step(u, &a->cal.gpu, &a->shape, &a->cost_cal, err, sizeof err) != 0))
        return cli_fail(DOC.name, EXIT_USAGE, "%s (or --no-comm)", err);
    if (u->mtp_steps &&
        (mtp_round_cost(s->model, s->gpu, &a->shape, u->mtp_steps, u->mtp_accept, &a->mtp, err, sizeof err) != 0 ||
         (a->cal.have && mtp_round_cost(s->model, &a->cal.gpu, &a->shape, u->mtp_steps, u->mtp_accept, &a->mtp_cal,
                                        err, sizeof err) != 0)))
        return cli_fail(DOC.name, EXIT_USAGE, "--mtp %d: %s", u->mtp_steps, err);
    if (s->pp <= 1)
        return 0;
    a->microbatches = f->microbatches ? f->microbatches : (f->batch < s->pp ? f->batch : s->pp);
    if (pipeline_step_cost(s->full, s->gpu, &a->shape, s->pp, a->microbatches, &a->pc, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    return 0;
}

/* The step at measured kernel rates, each row with the band of held-out
 * measured runs like it (cli_band.h): a decode step of a batch of B is the
 * TPOT of runs keeping B requests in flight, judged against the
 * output-heavy ones. */
static void report_calibrated(report *r, const device_setup *d, const decode_answer *a, const model_spec *m,
                              int batch)
{
    if (!device_report_calibrated(r, d, "the same step", NULL))
        return;
    cli_band b;
    cli_band_open(&b, d, m, batch, 0, 0);
    report_num(r, "step_time_calibrated", "step time, calibrated", U_SECONDS, a->cost_cal.time);
    cli_band_row(r, &b, "step_time_calibrated", BAND_TPOT, 0);
    report_num(r, "time_comm_calibrated", "communication, calibrated", U_SECONDS, a->cost_cal.time_comm);
    cli_band_none(r, "time_comm_calibrated", "no measured run times it (the runs measure whole steps)");
    report_num(r, "tokens_per_s_calibrated", "aggregate tokens/s, calibrated", U_TOKENS_PER_S,
               step_tokens_per_second(&a->cost_cal));
    cli_band_row(r, &b, "tokens_per_s_calibrated", BAND_TPOT, 1);
    report_num(r, "tokens_per_s_per_user_calibrated", "tokens/s per user, calibrated", U_TOKENS_PER_S,
               step_user_tokens_per_second(&a->cost_cal, &a->shape));
    cli_band_row(r, &b, "tokens_per_s_per_user_calibrated", BAND_TPOT, 1);
    report_num(r, "calibrated_over_roofline", "calibrated / roofline step time", U_REAL,
               a->cost_cal.time / a->cost.time);
    cli_band_row(r, &b, "calibrated_over_roofline", BAND_TPOT, 0);
    cli_band_close(&b);
}

static void report_pipeline(report *r, const device_setup *d, const decode_answer *a, int batch)
{
    const pipeline_cost *pc = &a->pc;
    device_report_again(r, d, 1, "the pipeline (the step above is one stage's, for the whole batch at once)");
    report_int(r, "microbatches", "microbatches", a->microbatches);
    report_num(r, "stage_time", "one microbatch through the slowest stage", U_SECONDS, pc->stage_time);
    report_num(r, "p2p_bytes", "activations handed to the next stage", U_BYTES, pc->p2p_bytes);
    report_num(r, "p2p_time", "one hand-off", U_SECONDS, pc->p2p_time);
    report_num(r, "cycle_time", "every sequence advanced once (steady state)", U_SECONDS, pc->cycle_time);
    report_num(r, "flush_time", "one flush of all microbatches", U_SECONDS, pc->flush_time);
    report_num(r, "bubble", "idle share of a flush", U_REAL, pc->bubble);
    report_num(r, "pipeline_tokens_per_s", "aggregate tokens/s", U_TOKENS_PER_S, batch / pc->cycle_time);
    report_num(r, "pipeline_tokens_per_s_per_user", "tokens/s per user", U_TOKENS_PER_S, 1 / pc->cycle_time);
}

/* The round with --mtp, against the plain step, both ways. */
static void report_mtp(report *r, const decode_setup *u, const decode_answer *a, int batch)
{
    if (!u->mtp_steps)
        return;
    mtp_report(r, &a->mtp, u->mtp_steps, u->mtp_accept, a->cost.time, "", "");
    report_num(r, "tokens_per_s_mtp", "aggregate tokens/s with MTP", U_TOKENS_PER_S, batch / a->mtp.per_token);
    mtp_report_memory(r, u->s.model, u->s.prec, u->s.tp);
    if (!a->cal.have)
        return;
    mtp_report(r, &a->mtp_cal, u->mtp_steps, u->mtp_accept, a->cost_cal.time, "_calibrated", ", calibrated");
    report_num(r, "tokens_per_s_mtp_calibrated", "aggregate tokens/s with MTP, calibrated", U_TOKENS_PER_S,
               batch / a->mtp_cal.per_token);
}

/* The expert-parallel group, or a skewed router's experts without one. */
static void report_experts(report *r, const decode_setup *u, const decode_answer *a, int batch)
{
    const replica_setup *s = &u->s;
    const ep_layout *epl = &u->epl;
    const parallel_layout *pl = &s->layout;
    if (layout_is_split(pl)) {
        const double ranks = pl->attention_dp, gpus = layout_gpus(pl);
        layout_report(r, pl, batch);
        if (epl->ep > 1)
            ep_report(r, s->model, s->gpu, epl, s->tp, (double)batch / s->tp);
        report_num(r, "group_tokens_per_s", "tokens/s, the whole replica (every attention rank)", U_TOKENS_PER_S,
                   step_tokens_per_second(&a->cost) * ranks);
        report_num(r, "tokens_per_s_per_gpu", "tokens/s per GPU of the replica", U_TOKENS_PER_S,
                   step_tokens_per_second(&a->cost) * ranks / gpus);
        if (a->cal.have) {
            report_num(r, "group_tokens_per_s_calibrated", "tokens/s, the whole replica, calibrated", U_TOKENS_PER_S,
                       step_tokens_per_second(&a->cost_cal) * ranks);
            cli_band_none(r, "group_tokens_per_s_calibrated",
                          "no measured run like this one (the serving runs use no expert parallelism)");
            report_num(r, "tokens_per_s_per_gpu_calibrated", "tokens/s per GPU of the replica, calibrated",
                       U_TOKENS_PER_S, step_tokens_per_second(&a->cost_cal) * ranks / gpus);
        }
    } else if (epl->routing_skew > 0) {
        report_section(r, "The router");
        report_num(r, "routing_skew", "Zipf exponent of the router", U_REAL, epl->routing_skew);
        report_num(r, "experts_touched", "experts the batch touches per MoE layer", U_REAL,
                   moe_step_experts_touched(s->model, &a->shape, batch));
        report_num(r, "experts_touched_uniform", "under uniform routing", U_REAL, moe_experts_touched(s->model, batch));
    }
}

static void report_answer(report *r, const decode_flags *f, const decode_setup *u, const decode_answer *a)
{
    const replica_setup *s = &u->s;
    replica_report_inputs(r, s);
    report_int(r, "batch", "batch (sequences)", f->batch);
    report_text(r, "compute_dtype", "compute dtype", dtype_name(s->prec.compute));
    device_report_measured(r, &u->device);
    replica_report_memory(r, s);
    report_step(r, &u->device, s->gpu, &a->shape, &a->cost, u->peak);
    report_calibrated(r, &u->device, a, u->s.full, f->batch);
    if (s->pp > 1)
        report_pipeline(r, &u->device, a, f->batch);
    report_experts(r, u, a, f->batch);
    report_mtp(r, u, a, f->batch);
    report_ops(r, s->model, s->gpu, &a->cal, &a->shape, &s->layout, &u->epl, u->peak);
    /* The arithmetic holds at any context; the model does not. */
    if (s->model->max_position > 0 && s->context > s->model->max_position)
        report_note(r, "warning: context %d exceeds %s's maximum position, %d tokens (max_position_embeddings): "
                       "the model was not trained for it", s->context, s->model->key, s->model->max_position);
}

int cmd_decode(int argc, char **argv)
{
    decode_flags f;
    cli_common common;
    int rc = parse(argc, argv, &f, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if ((rc = check(&f)) != 0)
        return rc;
    decode_setup u = {0};
    decode_answer a;
    report *r = NULL;
    if ((rc = resolve(&common, &f, &u)) != 0 || (rc = compute(&f, &u, &a)) != 0)
        goto done;
    r = report_new(DOC.name);
    report_answer(r, &f, &u, &a);
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    cli_specs_free(&u.specs);
    return rc;
}
