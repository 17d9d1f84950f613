#include "cli_device.h"

#include "published.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

device_flags device_flags_default(void)
{
    device_flags f = {NULL, NULL, 0, NAN, NAN, NAN};
    return f;
}

void device_flag_opts(device_flags *f, cli_opt *o)
{
    const cli_opt opts[DEVICE_NOPTS] = {
        {"--gpu", OPT_STRING, &f->gpu, "G", "GPU key (napkin specs --gpus)", 0, 0},
        {"--efficiency", OPT_FRACTION, &f->efficiency, "F",
         "share of the datasheet's bandwidth and FLOP rate reached (default 1)", 0, 0},
        {"--bw-efficiency", OPT_FRACTION, &f->bw_efficiency, "F", "share of the bandwidth alone", 0, 0},
        {"--flops-efficiency", OPT_FRACTION, &f->flops_efficiency, "F", "share of the FLOP rate alone", 0, 0},
        {"--calibrate", OPT_STRING, &f->calibrate, "DIR|NAME",
         "a measured set (make measure): its ceilings instead of the datasheet's; or published:SYSTEM/BACKEND, "
         "the calibrated answer's rates (default: the GPU's published set)", 0, 0},
        {"--roofline", OPT_FLAG, &f->roofline, NULL, "the roofline alone, no calibrated answer", 0, 0},
    };
    memcpy(o, opts, sizeof opts);
}

int device_setup_resolve(const char *cmd, const cli_specs *specs, const device_flags *f, dtype compute,
                         device_setup *out)
{
    memset(out, 0, sizeof *out);
    out->bw_fraction = out->flops_fraction = 1;
    const gpu_spec *row = NULL;
    int rc;
    if (f->gpu && (rc = cli_find_gpu(cmd, specs, "--gpu", f->gpu, &row)) != 0)
        return rc;
    if (f->calibrate && (!isnan(f->efficiency) || !isnan(f->bw_efficiency) || !isnan(f->flops_efficiency)))
        return cli_fail(cmd, EXIT_USAGE, "give --calibrate or an efficiency, not both: the measured set already "
                                         "says what the device reaches");
    char err[512];
    if (cli_is_published(f->calibrate)) {
        if (!row)
            return cli_fail(cmd, EXIT_USAGE, "--gpu is required with --calibrate %s", f->calibrate);
        device_flags plain = *f;
        plain.calibrate = NULL;
        if ((rc = device_setup_resolve(cmd, specs, &plain, compute, out)) != 0)
            return rc;
        return cli_rates_resolve(cmd, &out->sheet, f->calibrate, f->roofline, &out->rates);
    }
    if (f->calibrate) {
        if (calibration_load(f->calibrate, &out->cal, err, sizeof err) != 0)
            return cli_fail(cmd, EXIT_USAGE, "--calibrate: %s", err);
        int cpu = strcmp(out->cal.kind, "cpu") == 0;
        /* a CPU set is a device of its own; a GPU set calibrates its --gpu row */
        if (calibrated_gpu(&out->cal, cpu ? NULL : row, compute, &out->timed, err, sizeof err) != 0)
            return cli_fail(cmd, EXIT_USAGE, "--calibrate %s: %s%s", f->calibrate, err,
                            cpu && row ? " (leave out --gpu)" : "");
        out->calibrated = 1;
        out->has_sheet = !cpu;
        out->sheet = cpu ? out->timed : *row;
        if ((rc = cli_rates_resolve(cmd, &out->timed, NULL, 1, &out->rates)) != 0 || f->roofline)
            return rc;
        /* the set's own GEMM sweep, fitted: the calibrated answer beside its ceilings' roofline */
        if (measured_set_fit(f->calibrate, &out->timed, 0, &out->rates.model, NULL, NULL, err, sizeof err) == 0) {
            out->rates.have = out->rates.asked = 1;
            out->rates.gpu.rates = &out->rates.model;
        }
        return 0;
    }
    if (!row)
        return cli_fail(cmd, EXIT_USAGE, "--gpu is required (or --calibrate DIR with a CPU set)");
    out->sheet = *row;
    out->has_sheet = 1;
    out->bw_fraction = !isnan(f->bw_efficiency) ? f->bw_efficiency : !isnan(f->efficiency) ? f->efficiency : 1;
    out->flops_fraction =
        !isnan(f->flops_efficiency) ? f->flops_efficiency : !isnan(f->efficiency) ? f->efficiency : 1;
    out->timed = gpu_derated(row, out->bw_fraction, out->flops_fraction);
    return cli_rates_resolve(cmd, row, NULL, f->roofline, &out->rates);
}

int device_model_resolve(const char *cmd, const cli_specs *specs, const char *model_key, const device_flags *f,
                         dtype compute, const model_spec **m, device_setup *d)
{
    double peak;
    int rc;
    if ((rc = cli_find_model(cmd, specs, "--model", model_key, m)) != 0 ||
        (rc = device_setup_resolve(cmd, specs, f, compute, d)) != 0 ||
        (rc = cli_gpu_peak(cmd, &d->timed, compute, &peak)) != 0)
        return rc;
    return 0;
}

void device_report(report *r, const device_setup *d)
{
    report_text(r, "device", "device", d->timed.name);
    if (d->calibrated) {
        report_text(r, "calibrated_from", "ceilings measured on", d->cal.device);
        report_text(r, "calibration_date", "measured", d->cal.date);
        report_text(r, "bandwidth_from", "bandwidth from", d->cal.bandwidth_from);
    } else {
        report_num(r, "bw_efficiency", "share of the datasheet bandwidth", U_REAL, d->bw_fraction);
        report_num(r, "flops_efficiency", "share of the datasheet FLOP rate", U_REAL, d->flops_fraction);
    }
    report_num(r, "timed_bandwidth", "bandwidth timed with", U_BANDWIDTH, d->timed.mem_bw);
    cli_rates_report(r, &d->rates);
}
