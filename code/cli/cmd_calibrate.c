/* napkin calibrate: fit the achieved rates of each op class to a set of
 * published kernel measurements and show them with their residuals. */
#include "cli_lookup.h"
#include "commands.h"
#include "published.h"
#include "published_alltoall.h"
#include "rate_table.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const cli_doc DOC = {
    "calibrate",
    "achieved rates of each op class fitted to published kernel measurements, with residuals",
    "--set DIR --backend B --gpu G [--name SOURCE:DETAIL] [--rows [--header]] [--format table|tsv|json]",
    "DIR holds a published set (code/specs/measured/<system>/<backend>/: gemm.tsv,\n"
    "attention_decode.tsv, attention_prefill.tsv, allreduce.tsv), measured on the\n"
    "GPU row G.  Each compute class gets t0 + (tc^q + tm^q)^(1/q) with tc = FLOP /\n"
    "(flop_frac x peak) and tm = bytes / (byte_frac x bandwidth), fitted by robust\n"
    "least squares on log time; each TP degree's all-reduce gets the faster of\n"
    "two lines, latency + bytes / bandwidth.  The residuals are |predicted /\n"
    "measured - 1| over the points fitted.  --rows prints the rows of\n"
    "code/specs/calibrations.tsv instead (make calibrations writes that file).",
};

int cmd_calibrate(int argc, char **argv)
{
    const char *set = NULL, *backend = NULL, *gpu = NULL, *name = NULL;
    int rows = 0, header = 0;
    cli_opt opts[] = {
        {"--set", OPT_STRING, &set, "DIR", "a published measured set", 1, 0},
        {"--backend", OPT_STRING, &backend, "B", "the engine it was measured with: trtllm, vllm or sglang", 1, 0},
        {"--gpu", OPT_STRING, &gpu, "G", "the GPU row it was measured on (napkin specs --gpus)", 1, 0},
        {"--name", OPT_STRING, &name, "NAME", "what to call the calibration, SOURCE:DETAIL (default: DIR)", 0, 0},
        {"--rows", OPT_FLAG, &rows, NULL, "print calibrations.tsv rows", 0, 0},
        {"--header", OPT_FLAG, &header, NULL, "with --rows: the header row first", 0, 0},
    };
    cli_common common;
    int rc = cli_parse(&DOC, argc, argv, opts, CLI_NOPTS(opts), &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if (name && (!strchr(name, ':') || strlen(name) >= RATE_NAME_MAX || strpbrk(name, " \t\n")))
        return cli_fail(DOC.name, EXIT_USAGE, "--name: a calibration is named SOURCE:DETAIL without spaces, shorter "
                                              "than %d characters (e.g. published:h100_sxm/trtllm)",
                        RATE_NAME_MAX);
    if (strcmp(backend, "trtllm") && strcmp(backend, "vllm") && strcmp(backend, "sglang"))
        return cli_fail(DOC.name, EXIT_USAGE, "--backend '%s': choose trtllm, vllm or sglang", backend);
    cli_specs specs;
    const gpu_spec *g;
    rate_model m;
    fit_summary sums[RC_COUNT], links[RATE_TP_SLOTS], a2a[A2A_KERNELS];
    char err[512];
    report *r = NULL;
    if ((rc = cli_specs_load(DOC.name, &common, &specs)) != 0)
        return rc;
    if ((rc = cli_find_gpu(DOC.name, &specs, "--gpu", gpu, &g)) != 0)
        goto done;
    if (published_fit(set, backend, g, 0, &m, sums, links, err, sizeof err) != 0 ||
        published_alltoall_fit(set, backend, 0, &m, a2a, err, sizeof err) != 0) {
        rc = cli_fail(DOC.name, EXIT_USAGE, "--set: %s", err);
        goto done;
    }
    snprintf(m.name, sizeof m.name, "%s", name ? name : set);
    if (rows) {
        rate_model_write(stdout, &m, sums, links, header);
        rate_model_write_alltoall(stdout, &m, a2a);
        rc = fflush(stdout) == 0 ? 0 : cli_fail(DOC.name, 3, "writing the rows failed");
        goto done;
    }
    r = report_new(DOC.name);
    report_text(r, "calibration", "calibration", m.name);
    report_text(r, "gpu", "measured on (GPU row)", g->key);
    report_text(r, "backend", "engine", backend);
    report_table *t =
        report_table_add(r, "classes", "Op classes (f_c, f_b: shares of peak and bandwidth; q: blend; f_i: one item's share "
                                         "of the bandwidth; t_long: a cache longer than one tile; |error| as fitted)");
    report_col(t, "class", "class", U_TEXT, 0);
    report_col(t, "t0", "t0", U_SECONDS, 0);
    report_col(t, "t_item", "t_item", U_SECONDS, 0);
    report_col(t, "flop_frac", "f_c", U_REAL, 0);
    report_col(t, "byte_frac", "f_b", U_REAL, 0);
    report_col(t, "blend", "q", U_REAL, 0);
    report_col(t, "item_frac", "f_i", U_REAL, 0);
    report_col(t, "t_long", "t_long", U_SECONDS, 0);
    report_col(t, "points", "points", U_INT, 0);
    report_col(t, "median_abs_err", "median", U_REAL, 0);
    report_col(t, "worst_abs_err", "worst", U_REAL, 0);
    for (int c = 0; c < RC_COUNT; c++) {
        if (!m.has_op[c])
            continue;
        report_cell_text(t, rate_class_name(c));
        report_cell_num(t, m.op[c].t0);
        report_cell_num(t, m.op[c].t_item > 0 ? m.op[c].t_item : NAN); /* "-": no work items */
        report_cell_num(t, m.op[c].flop_frac);
        report_cell_num(t, m.op[c].byte_frac);
        report_cell_num(t, m.op[c].blend);
        report_cell_num(t, m.op[c].item_frac > 0 ? m.op[c].item_frac : NAN); /* "-": no span */
        report_cell_num(t, m.op[c].t_long > 0 ? m.op[c].t_long : NAN);
        report_cell_int(t, sums[c].points);
        report_cell_num(t, sums[c].points ? sums[c].median_abs_err : NAN);
        report_cell_num(t, sums[c].points ? sums[c].worst_abs_err : NAN);
    }
    report_table *l = report_table_add(r, "allreduce", "All-reduce: the faster of latency + bytes / bandwidth, 1 or 2");
    report_col(l, "tp", "tp", U_INT, 0);
    report_col(l, "latency1", "latency 1", U_SECONDS, 0);
    report_col(l, "bandwidth1", "bandwidth 1", U_BANDWIDTH, 0);
    report_col(l, "latency2", "latency 2", U_SECONDS, 0);
    report_col(l, "bandwidth2", "bandwidth 2", U_BANDWIDTH, 0);
    report_col(l, "points", "points", U_INT, 0);
    report_col(l, "median_abs_err", "median", U_REAL, 0);
    report_col(l, "worst_abs_err", "worst", U_REAL, 0);
    for (int s = 0; s < RATE_TP_SLOTS; s++) {
        if (!m.has_allreduce[s])
            continue;
        report_cell_int(l, rate_slot_tp(s));
        report_cell_num(l, m.allreduce[s].latency1);
        report_cell_num(l, m.allreduce[s].bandwidth1);
        report_cell_num(l, m.allreduce[s].latency2);
        report_cell_num(l, m.allreduce[s].bandwidth2);
        report_cell_int(l, links[s].points);
        report_cell_num(l, links[s].median_abs_err);
        report_cell_num(l, links[s].worst_abs_err);
    }
    report_note(r, "elementwise: the bf16 GEMMs' fixed cost and byte share (no table measures a norm or an add)");
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
