/* napkin roofline: a GPU's two ceilings and where they meet. */
#include "cli_device.h"
#include "commands.h"
#include "roofline.h"

static const cli_doc DOC = {
    "roofline",
    "peak, bandwidth and ridge of a GPU; attainable FLOP/s at an intensity",
    "--gpu G [--dtype D] [--intensity X] [--format table|tsv|json]",
    "The ridge is peak / bandwidth: a kernel doing fewer FLOP per byte than the\n"
    "ridge is memory-bound, more is compute-bound.  A decode step's projections do\n"
    "about batch FLOP per weight byte in bf16, so the ridge is also the batch where\n"
    "decode stops being memory-bound.  Rates are dense; int4 has no tensor-core\n"
    "rate in the table (int4 weights are multiplied in bf16: use --dtype bf16).",
};

int cmd_roofline(int argc, char **argv)
{
    device_flags df = device_flags_default(DEVICE_GPU, NULL);
    const char *dtype_str = "bf16";
    double intensity = 0;
    cli_opt opts[DEVICE_NOPTS_MAX + 2];
    int n = device_flag_opts(&df, DEVICE_GPU, opts);
    opts[n++] = (cli_opt){"--dtype", OPT_STRING, &dtype_str, "D",
                          "compute dtype: bf16 (default), fp16, fp8, int8, fp32", 0, 0};
    const cli_opt *intensity_opt = &opts[n]; /* its seen mark: whether an intensity was asked about */
    opts[n++] = (cli_opt){"--intensity", OPT_POS_REAL, &intensity, "X",
                          "FLOP per byte of a kernel: attainable FLOP/s and its bound", 0, 0};
    cli_common common;
    int rc = cli_parse(&DOC, argc, argv, opts, n, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;

    cli_specs specs;
    const gpu_spec *g;
    dtype d;
    double peak;
    report *r = NULL;
    if ((rc = cli_specs_load(DOC.name, &common, &specs)) != 0)
        return rc;
    if ((rc = device_gpu_row(DOC.name, &specs, &df, &g)) != 0 ||
        (rc = cli_dtype_peak(DOC.name, g, "--dtype", dtype_str, &d, &peak)) != 0)
        goto done;

    r = report_new(DOC.name);
    report_section(r, g->name);
    report_text(r, "gpu", "GPU", g->key);
    report_text(r, "dtype", "dtype", dtype_name(d));
    report_num(r, "peak_flops", "dense peak", U_FLOPS, peak);
    report_num(r, "mem_bw", "HBM bandwidth", U_BANDWIDTH, g->mem_bw);
    report_num(r, "ridge", "ridge (peak / bandwidth)", U_INTENSITY, ridge_intensity(peak, g->mem_bw));
    if (intensity_opt->seen) {
        bound_kind b;
        /* Which ceiling binds a kernel of this intensity: the roofline time of
         * `intensity` FLOP against one byte says. */
        roofline_time(intensity, 1.0, peak, g->mem_bw, &b);
        report_section(r, "At the given intensity");
        report_num(r, "intensity", "intensity", U_INTENSITY, intensity);
        report_num(r, "attainable_flops", "attainable", U_FLOPS, attainable_flops(intensity, peak, g->mem_bw));
        report_text(r, "bound", "bound", bound_name(b));
    }
    report_note(r, "source: %s", g->source);
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
