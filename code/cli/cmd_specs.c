/* napkin specs: what the calculator knows, with where each row comes from. */
#include "cli_lookup.h"
#include "commands.h"
#include "memory.h"
#include "roofline.h"

#include <math.h>

static const cli_doc DOC = {
    "specs",
    "the GPU and model tables the calculator knows, with their sources",
    "[--gpus | --models] [--format table|tsv|json]",
    "GPU FLOP rates are dense (datasheets quote 2:4-sparse figures at twice these);\n"
    "'-' (tsv: nan, json: null) marks a rate the part does not have.  The ridge is\n"
    "the bf16 peak over the HBM bandwidth.  Parameters and KV bytes per token come\n"
    "from the library's transformer and memory models (KV uses the KV heads, GQA).\n"
    "With --format tsv the GPU table and the model table are two blocks separated\n"
    "by an empty line, each with its own header.",
};

/* A rate the GPU lacks is shown as "-", not as 0 FLOP/s. */
static void cell_rate(report_table *t, const gpu_spec *g, dtype d)
{
    double peak = gpu_peak_flops(g, d);
    report_cell_num(t, peak > 0 ? peak : NAN);
}

static void gpu_rows(report *r, const gpu_table *gt)
{
    report_table *t = report_table_add(r, "gpus", "GPUs (dense rates)");
    report_col(t, "key", "key", U_TEXT, 0);
    report_col(t, "name", "name", U_TEXT, 0);
    report_col(t, "bf16_flops", "bf16", U_FLOPS, 0);
    report_col(t, "fp8_flops", "fp8", U_FLOPS, 0);
    report_col(t, "fp4_flops", "fp4", U_FLOPS, 0);
    report_col(t, "int8_ops", "int8 (OP/s)", U_FLOPS, 0);
    report_col(t, "mem_bw", "HBM bandwidth", U_BANDWIDTH, 0);
    report_col(t, "mem_datasheet_bytes", "memory (datasheet)", U_BYTES, 0);
    report_col(t, "mem_bytes", "memory (driver)", U_BYTES, 0);
    report_col(t, "link_bw", "link", U_BANDWIDTH, 0);
    report_col(t, "node_gpus", "GPUs on the link", U_INT, 0);
    report_col(t, "allreduce_latency", "all-reduce", U_SECONDS, 0);
    report_col(t, "host_bw", "PCIe", U_BANDWIDTH, 0);
    report_col(t, "ridge_bf16", "bf16 ridge", U_INTENSITY, 0);
    report_col(t, "source", "GPU sources", U_TEXT, COL_NOTE);
    report_col(t, "link_source", "memory and link sources", U_TEXT, COL_NOTE);
    for (int i = 0; i < gt->n; i++) {
        const gpu_spec *g = &gt->rows[i];
        double bf16 = gpu_peak_flops(g, DT_BF16);
        report_cell_text(t, g->key);
        report_cell_text(t, g->name);
        cell_rate(t, g, DT_BF16);
        cell_rate(t, g, DT_FP8);
        cell_rate(t, g, DT_FP4);
        cell_rate(t, g, DT_INT8);
        report_cell_num(t, g->mem_bw);
        report_cell_num(t, g->mem_bytes_datasheet);
        report_cell_num(t, g->mem_bytes);
        report_cell_num(t, g->link_bw > 0 ? g->link_bw : NAN);
        report_cell_int(t, gpu_node_gpus(g));
        report_cell_num(t, g->allreduce_latency > 0 ? g->allreduce_latency : NAN);
        report_cell_num(t, g->host_bw > 0 ? g->host_bw : NAN);
        report_cell_num(t, bf16 > 0 ? ridge_intensity(bf16, g->mem_bw) : NAN);
        report_cell_text(t, g->source);
        report_cell_text(t, g->link_source);
    }
}

static void model_rows(report *r, const model_table *mt)
{
    report_table *t = report_table_add(r, "models", "Models");
    report_col(t, "key", "key", U_TEXT, 0);
    report_col(t, "name", "name", U_TEXT, 0);
    report_col(t, "layers", "layers", U_INT, 0);
    report_col(t, "hidden", "hidden", U_INT, 0);
    report_col(t, "heads", "heads", U_INT, 0);
    report_col(t, "kv_heads", "kv", U_INT, 0);
    report_col(t, "head_dim", "hdim", U_INT, 0);
    report_col(t, "ffn", "ffn", U_INT, 0);
    report_col(t, "vocab", "vocab", U_INT, 0);
    report_col(t, "experts", "exp", U_INT, 0);
    report_col(t, "experts_active", "top-k", U_INT, 0);
    report_col(t, "params_total", "params", U_PARAMS, 0);
    report_col(t, "params_active", "active", U_PARAMS, 0);
    report_col(t, "kv_bytes_per_token_bf16", "KV/token bf16", U_BYTES, 0);
    report_col(t, "source", "model sources", U_TEXT, COL_NOTE);
    for (int i = 0; i < mt->n; i++) {
        const model_spec *m = &mt->rows[i];
        param_count p = model_params(m);
        report_cell_text(t, m->key);
        report_cell_text(t, m->name);
        report_cell_int(t, m->layers);
        report_cell_int(t, m->hidden);
        report_cell_int(t, m->heads);
        report_cell_int(t, m->kv_heads);
        report_cell_int(t, m->head_dim);
        report_cell_int(t, m->ffn);
        report_cell_int(t, m->vocab);
        report_cell_int(t, m->experts);
        report_cell_int(t, m->experts_active);
        report_cell_num(t, p.total);
        report_cell_num(t, p.active);
        report_cell_num(t, kv_bytes_per_token(m, DT_BF16));
        report_cell_text(t, m->source);
    }
}

int cmd_specs(int argc, char **argv)
{
    int gpus = 0, models = 0;
    cli_opt opts[] = {
        {"--gpus", OPT_FLAG, &gpus, NULL, "only the GPU table", 0, 0},
        {"--models", OPT_FLAG, &models, NULL, "only the model table", 0, 0},
    };
    cli_common common;
    int rc = cli_parse(&DOC, argc, argv, opts, CLI_NOPTS(opts), &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if (!gpus && !models)
        gpus = models = 1;

    cli_specs specs;
    if ((rc = cli_specs_load(DOC.name, &common, &specs)) != 0)
        return rc;
    report *r = report_new(DOC.name);
    if (gpus)
        gpu_rows(r, &specs.gpus);
    if (models)
        model_rows(r, &specs.models);
    rc = report_print(r, common.format, stdout);
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
