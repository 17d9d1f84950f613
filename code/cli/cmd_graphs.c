/* napkin graphs: what CUDA graphs save a decode step at an operating point.
 * Kernels per step from the op list, the host's launch time eagerly and as a
 * graph replay, the step's wall time both ways, the padding a capture list
 * costs, the memory the graphs take from the KV budget, and the batch where
 * the saving falls below a threshold. */
#include "cli_band.h"
#include "cli_replica.h"
#include "commands.h"
#include "graphs.h"

#include <math.h>
#include <string.h>

/* Beside each calibrated row (cli_band.h): why it has no measured error band. */
static const char NO_RUN_LIKE_IT[] = "no measured run like this one (the serving runs do not separate graph and eager steps)";

static const cli_doc DOC = {
    "graphs",
    "CUDA graphs: kernels per step, launch time against GPU time, share saved, padding, graph memory",
    "--model M --gpu G [--tp N] [--batch B] [--context C] [--new-tokens N]\n"
    "                     [--launch-us U] [--graph-launch-us U] [--node-us U] [--step-host-us U]\n"
    "                     [--fusion F]\n"
    "                     [--capture-sizes vllm|1,2,4,8,...] [--capture-max N] [--graph-mib MIB]\n"
    "                     [--threshold F] [--dtype D ...] [--usable F] [--hbm BYTES] [--no-comm]\n"
    "                     [--calibrate DIR|NAME | --roofline] [--format table|tsv|json]",
    "Kernels per step: one per op of the step's op list (napkin decode), per-layer ops\n"
    "once per layer, the tensor-parallel collectives one each; flash attention is one\n"
    "kernel; --fusion folds residual adds into norms (norm-residual), SiLU(gate)*up into\n"
    "the gate/up GEMM (gate-act), or both (all).  Host time eagerly: kernels x launch;\n"
    "as a graph: one graph launch + kernels x node.  The host enqueues a whole step\n"
    "ahead of the GPU and no further (the next step needs this one's tokens), so a step\n"
    "takes --step-host-us (host work graphs do not remove) + max(GPU time, launch time);\n"
    "share saved = 1 - graph step / eager step.  Graphs\n"
    "change the host's cost, not the kernels': the GPU time is the same both ways.\n"
    "A graph replays a captured size: the batch's tokens are padded up to the next size\n"
    "of the capture list (vllm: [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16),\n"
    "max = --capture-max), the dummy rows running every op but attention; a step larger\n"
    "than every size runs eagerly.  The graphs hold --graph-mib each, taken from the KV\n"
    "budget.  The threshold batch is the first batch whose saving (a graph at exactly\n"
    "that batch) falls below --threshold, searched up to the largest batch that fits.\n"
    "Exit status 1 when the batch does not fit (naming the largest that does), 2 for a\n"
    "bad flag, value or choice.\n"
    "Beside the roofline, the GPU time is priced again at the achieved rates fitted to\n"
    "published kernel measurements (napkin calibrate), each kernel's fixed cost on the\n"
    "GPU included, and the host's launches set against it: by default the GPU's\n"
    "published set (h100, h200), or --calibrate NAME; --calibrate DIR times both\n"
    "answers on a measured set's ceilings (a CPU set is a device of its own: no\n"
    "--gpu); --roofline gives the bound alone.",
};

typedef struct {
    int batch, new_tokens, capture_max, no_comm;
    double launch_us, graph_launch_us, node_us, graph_mib, threshold;
    const char *fusion, *capture;
    double step_host_us;
} graph_flags;

/* The graph memory must fit beside the weights, and the batch's KV beside both. */
static int check_fit(const replica_setup *s, const graph_flags *f, double graph_bytes, fit_check *fit)
{
    resident_model rm = {s->model, s->prec, s->tp};
    char err[256];
    if (memory_fit(s->gpu, s->policy, &rm, 1, graph_bytes, f->batch, s->context + f->new_tokens, fit, err,
                   sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
    if (fit->fits)
        return 0;
    char why[256], graphs[32];
    fit_check_describe(fit, f->batch, s->context + f->new_tokens, why, sizeof why);
    fmt_bytes(graph_bytes, graphs, sizeof graphs);
    return cli_fail(DOC.name, EXIT_NO_FIT, "--batch %d does not fit beside %s of captured graphs: %s", f->batch,
                    graphs, why);
}

/* Share saved at powers of two up to the largest batch that fits. */
static int report_sweep(report *r, const replica_setup *s, const step_shape *base, int fusion,
                        const launch_costs *lc, const capture_list *c, int max_batch)
{
    report_table *t = report_table_add(r, "by_batch", "Share saved by batch (padded to the capture list)");
    report_col(t, "batch", "batch", U_INT, 0);
    report_col(t, "padded", "padded", U_INT, 0);
    report_col(t, "gpu_time", "GPU", U_SECONDS, 0);
    report_col(t, "step_eager", "eager step", U_SECONDS, 0);
    report_col(t, "step_graph", "graph step", U_SECONDS, 0);
    report_col(t, "saved", "saved", U_REAL, 0);
    char err[256];
    for (int b = 1; b <= max_batch; b *= 2) {
        step_shape sb = *base;
        sb.batch = b;
        graph_step g;
        if (graph_step_cost(s->model, s->gpu, &sb, fusion, lc, c, &g, err, sizeof err) != 0)
            return cli_fail(DOC.name, EXIT_USAGE, "%s", err);
        report_cell_int(t, b);
        report_cell_int(t, g.padded_tokens);
        report_cell_num(t, g.gpu);
        report_cell_num(t, g.step_eager);
        report_cell_num(t, g.step_graph);
        report_cell_num(t, g.saved);
        if (b > max_batch / 2)
            break;
    }
    return 0;
}

static void report_result(report *r, const device_setup *d, const graph_step *g, const capture_list *c, const graph_flags *f,
                          double graph_bytes, const fit_check *fit, int threshold_batch, int search_max)
{
    report_section(r, "Kernels per decode step");
    report_text(r, "fusion", "fusion", f->fusion ? f->fusion : "none");
    report_int(r, "kernels_per_layer", "kernels per layer", g->kernels.per_layer);
    report_int(r, "kernels_once", "kernels once per step", g->kernels.once);
    report_int(r, "comm_kernels", "of which TP collectives", g->kernels.comm);
    report_int(r, "kernels", "kernels per step", g->kernels.total);

    device_report_first(r, d, 1, "host against GPU, one step");
    report_num(r, "launch_s", "launch, per kernel (eager)", U_SECONDS, f->launch_us * 1e-6);
    report_num(r, "graph_launch_s", "graph launch", U_SECONDS, f->graph_launch_us * 1e-6);
    report_num(r, "node_s", "replay, per node", U_SECONDS, f->node_us * 1e-6);
    report_num(r, "step_host_s", "host work per step, both ways", U_SECONDS, f->step_host_us * 1e-6);
    report_num(r, "gpu_time", "GPU time (op rooflines + collectives)", U_SECONDS, g->gpu);
    report_num(r, "host_eager", "host time, eager", U_SECONDS, g->host_eager);
    report_num(r, "host_graph", "host time, graph", U_SECONDS, g->host_graph);
    report_num(r, "step_eager", "step, eager", U_SECONDS, g->step_eager);
    report_text(r, "eager_bound", "eager step set by", g->host_eager > g->gpu ? "host" : "GPU");
    report_num(r, "step_graph", "step, graph (padded)", U_SECONDS, g->step_graph);
    report_num(r, "saved", "share saved, 1 - graph / eager", U_REAL, g->saved);

    device_report_again(r, d, 1, "capture sizes");
    report_int(r, "captured_graphs", "graphs captured", c->n);
    report_int(r, "largest_capture", "largest captured size (tokens)", c->sizes[c->n - 1]);
    report_int(r, "tokens", "tokens in the step", g->tokens);
    report_num(r, "padded_tokens", "padded to (tokens)", U_INT, g->padded_tokens > 0 ? g->padded_tokens : NAN);
    report_num(r, "gpu_padded", "GPU time, padded", U_SECONDS, g->gpu_padded);
    report_num(r, "pad_waste", "padding waste (padded / real GPU time - 1)", U_REAL, g->pad_waste);
    report_num(r, "graph_memory", "memory held by the graphs", U_BYTES, graph_bytes);
    report_num(r, "kv_budget", "left for KV, graphs taken out", U_BYTES, fit->kv_budget);
    report_int(r, "max_batch", "largest batch that fits", fit->max_batch);

    device_report_again(r, d, 1, "where graphs stop paying");
    report_num(r, "threshold", "threshold", U_REAL, f->threshold);
    char below[96];
    snprintf(below, sizeof below, "first batch where graphs save less than %g%%", 100 * f->threshold);
    report_num(r, "threshold_batch", below, U_INT, threshold_batch > 0 ? threshold_batch : NAN);
    report_int(r, "threshold_search_max", "searched up to batch", search_max);
    if (g->padded_tokens == 0)
        report_note(r, "%d tokens exceed the largest captured size (%d): the step runs eagerly", g->tokens,
                    c->sizes[c->n - 1]);
    if (threshold_batch == 0)
        report_note(r, "the saving stays at or above %g up to batch %d, the largest that fits", f->threshold,
                    search_max);
    report_note(r, "queue depth: the host enqueues one whole step ahead of the GPU, never more (the next step "
                   "needs this one's tokens): step = host work per step + max(GPU, launches)");
}

/* The same step with the GPU time at measured kernel rates: the host's cost is unchanged. */
static void report_calibrated(report *r, const device_setup *d, const graph_step *g, int threshold_batch)
{
    if (!device_report_calibrated(r, d, "the same step", NULL))
        return;
    report_num(r, "gpu_time_calibrated", "GPU time, calibrated", U_SECONDS, g->gpu);
    cli_band_none(r, "gpu_time_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "step_eager_calibrated", "step, eager, calibrated", U_SECONDS, g->step_eager);
    cli_band_none(r, "step_eager_calibrated", NO_RUN_LIKE_IT);
    report_text(r, "eager_bound_calibrated", "eager step set by, calibrated", g->host_eager > g->gpu ? "host" : "GPU");
    cli_band_none(r, "eager_bound_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "step_graph_calibrated", "step, graph (padded), calibrated", U_SECONDS, g->step_graph);
    cli_band_none(r, "step_graph_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "saved_calibrated", "share saved, calibrated", U_REAL, g->saved);
    cli_band_none(r, "saved_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "threshold_batch_calibrated", "first batch saving less, calibrated", U_INT,
               threshold_batch > 0 ? threshold_batch : NAN);
    cli_band_none(r, "threshold_batch_calibrated", NO_RUN_LIKE_IT);
}

typedef struct {
    replica_flags replica;
    graph_flags graph;
    const char *step_host_text;
} graphs_flags;

static int parse(int argc, char **argv, graphs_flags *a, cli_common *common)
{
    a->replica = replica_flags_default(DEVICE_PRICING | DEVICE_MEMORY);
    a->graph = (graph_flags){1, 1, 512, 0, 4, 4, 1, GRAPH_BYTES_DEFAULT / (1024.0 * 1024.0), 0.05, NULL, NULL, 0};
    a->step_host_text = NULL;
    graph_flags *f = &a->graph;
    cli_opt opts[REPLICA_NOPTS_MAX + 12 + DEVICE_NOPTS_MAX];
    int n = replica_flag_opts(&a->replica, opts);
    const cli_opt mine[] = {
        {"--batch", OPT_POS_INT, &f->batch, "B", "sequences decoded together (default 1)", 0, 0},
        {"--new-tokens", OPT_POS_INT, &f->new_tokens, "N",
         "tokens per sequence per step: 1 to decode, 1 + k to verify k drafts (default 1)", 0, 0},
        {"--launch-us", OPT_POS_REAL, &f->launch_us, "U", "host microseconds per eager kernel launch (default 4)", 0,
         0},
        {"--graph-launch-us", OPT_POS_REAL, &f->graph_launch_us, "U", "host microseconds per graph launch (default 4)",
         0, 0},
        {"--node-us", OPT_POS_REAL, &f->node_us, "U", "host microseconds per replayed node (default 1)", 0, 0},
        {"--step-host-us", OPT_STRING, &a->step_host_text, "U",
         "host microseconds per step that graphs do not remove: scheduling, sampling (default 0)", 0, 0},
        {"--fusion", OPT_STRING, &f->fusion, "F", "none, norm-residual, gate-act or all (default none)", 0, 0},
        {"--capture-sizes", OPT_STRING, &f->capture, "LIST", "vllm (default) or sizes like 1,2,4,8", 0, 0},
        {"--capture-max", OPT_POS_INT, &f->capture_max, "N", "largest size of the vllm list (default 512)", 0, 0},
        {"--graph-mib", OPT_POS_REAL, &f->graph_mib, "MIB",
         "memory per captured graph in MiB (default 26, vLLM PR #22897 for an 8B model)", 0, 0},
        {"--threshold", OPT_FRACTION, &f->threshold, "F", "saving below which graphs stop paying (default 0.05)", 0, 0},
        {"--no-comm", OPT_FLAG, &f->no_comm, NULL, "leave the tensor-parallel collectives out (time and kernels)", 0,
         0},
    };
    memcpy(opts + n, mine, sizeof mine);
    n += CLI_NOPTS(mine);
    n += device_flag_opts(&a->replica.device, DEVICE_CALIBRATE | DEVICE_ROOFLINE, opts + n);
    return cli_parse(&DOC, argc, argv, opts, n, common);
}

/* The flags that need no table, turned into the launch costs and the capture list. */
typedef struct {
    int fusion;
    capture_list capture;
    launch_costs lc;
    double graph_bytes;
} graph_plan;

static int check(graphs_flags *a, graph_plan *p)
{
    graph_flags *f = &a->graph;
    int rc;
    /* 0 is allowed (the default: no host work beyond the launches), which OPT_POS_REAL is not */
    if (a->step_host_text &&
        (rc = cli_real_in(DOC.name, "--step-host-us", a->step_host_text, 0, 1e9, &f->step_host_us)) != 0)
        return rc;
    p->fusion = FUSE_NONE;
    if (f->fusion && fusion_parse(f->fusion, &p->fusion) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--fusion: unknown setting '%s' (choices: %s)", f->fusion,
                        fusion_choices());
    if (f->threshold >= 1)
        return cli_fail(DOC.name, EXIT_USAGE, "--threshold: %g is not below 1 (a share saved, e.g. 0.05)", f->threshold);
    char err[512];
    if (!f->capture || strcmp(f->capture, "vllm") == 0)
        capture_list_vllm(f->capture_max, &p->capture);
    else if (capture_list_parse(f->capture, &p->capture, err, sizeof err) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--capture-sizes: %s", err);
    p->lc = (launch_costs){f->launch_us * 1e-6, f->graph_launch_us * 1e-6, f->node_us * 1e-6, f->step_host_us * 1e-6};
    p->graph_bytes = capture_memory_bytes(&p->capture, f->graph_mib * 1024 * 1024);
    return 0;
}

/* The step on both devices, and the batch where the saving falls below the threshold on each. */
typedef struct {
    step_shape shape;
    graph_step g, g_cal;
    int threshold_batch, threshold_batch_cal;
} graphs_answer;

static int compute(const graph_flags *f, const graph_plan *p, const replica_setup *s, const device_setup *d,
                   const fit_check *fit, graphs_answer *a)
{
    a->shape = decode_shape(f->batch, s->context, s->tp, s->prec);
    a->shape.new_tokens = f->new_tokens;
    a->shape.skip_comm = f->no_comm;
    memset(&a->g_cal, 0, sizeof a->g_cal);
    a->threshold_batch = a->threshold_batch_cal = 0;
    rated_device cal = device_rated(d);
    char err[512];
    if (graph_step_cost(s->model, s->gpu, &a->shape, p->fusion, &p->lc, &p->capture, &a->g, err, sizeof err) != 0 ||
        graph_threshold_batch(s->model, s->gpu, &a->shape, p->fusion, &p->lc, f->threshold, fit->max_batch,
                              &a->threshold_batch, err, sizeof err) != 0 ||
        (cal.have &&
         (graph_step_cost(s->model, &cal.gpu, &a->shape, p->fusion, &p->lc, &p->capture, &a->g_cal, err,
                          sizeof err) != 0 ||
          graph_threshold_batch(s->model, &cal.gpu, &a->shape, p->fusion, &p->lc, f->threshold, fit->max_batch,
                                &a->threshold_batch_cal, err, sizeof err) != 0)))
        return cli_fail(DOC.name, EXIT_USAGE, "%s%s", err, f->no_comm ? "" : " (or --no-comm)");
    return 0;
}

int cmd_graphs(int argc, char **argv)
{
    graphs_flags flags;
    graph_plan plan;
    cli_common common;
    int rc = parse(argc, argv, &flags, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if ((rc = check(&flags, &plan)) != 0)
        return rc;
    const graph_flags *f = &flags.graph;
    cli_specs specs;
    device_setup d;
    replica_setup s;
    fit_check fit;
    double peak;
    graphs_answer a;
    report *r = NULL;
    if ((rc = cli_specs_load(DOC.name, &common, &specs)) != 0)
        return rc;
    if ((rc = replica_setup_resolve(DOC.name, &specs, &flags.replica, &d, &s)) != 0 ||
        (rc = cli_gpu_peak(DOC.name, s.gpu, s.prec.compute, &peak)) != 0 ||
        (rc = check_fit(&s, f, plan.graph_bytes, &fit)) != 0 || (rc = compute(f, &plan, &s, &d, &fit, &a)) != 0)
        goto done;

    r = report_new(DOC.name);
    replica_report_inputs(r, &s);
    device_report_measured(r, &d);
    report_int(r, "batch", "batch (sequences)", f->batch);
    report_int(r, "new_tokens", "tokens per sequence per step", f->new_tokens);
    report_result(r, &d, &a.g, &plan.capture, f, plan.graph_bytes, &fit, a.threshold_batch, fit.max_batch);
    report_calibrated(r, &d, &a.g_cal, a.threshold_batch_cal);
    if ((rc = report_sweep(r, &s, &a.shape, plan.fusion, &plan.lc, &plan.capture, fit.max_batch)) == 0)
        rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
