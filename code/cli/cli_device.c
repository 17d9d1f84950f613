#include "cli_device.h"

#include "measured_set.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The one table of device flags: each flag's name, kind, value and help,
 * and the bit a command takes it by.  A help of NULL is composed per
 * command (it names a default) and kept in device_flags. */
static const struct {
    unsigned bit;
    const char *name;
    opt_kind kind;
    size_t dest; /* offset in device_flags */
    const char *metavar, *help;
} DEVICE_TABLE[] = {
    {DEVICE_GPU, "--gpu", OPT_STRING, offsetof(device_flags, gpu), "G", NULL},
    {DEVICE_EFFICIENCY, "--efficiency", OPT_FRACTION, offsetof(device_flags, efficiency), "F",
     "share of the datasheet's bandwidth and FLOP rate reached (default 1)"},
    {DEVICE_EFFICIENCY, "--bw-efficiency", OPT_FRACTION, offsetof(device_flags, bw_efficiency), "F",
     "share of the bandwidth alone"},
    {DEVICE_EFFICIENCY, "--flops-efficiency", OPT_FRACTION, offsetof(device_flags, flops_efficiency), "F",
     "share of the FLOP rate alone"},
    {DEVICE_CALIBRATE, "--calibrate", OPT_STRING, offsetof(device_flags, calibrate), "DIR|NAME",
     "a measured set (make measure): its ceilings instead of the datasheet's; or published:SYSTEM/BACKEND, "
     "the calibrated answer's rates (default: the GPU's published set)"},
    {DEVICE_ROOFLINE, "--roofline", OPT_FLAG, offsetof(device_flags, roofline), NULL,
     "the roofline alone, no calibrated answer"},
    {DEVICE_USABLE, "--usable", OPT_FRACTION, offsetof(device_flags, usable), "F", NULL},
    {DEVICE_HBM, "--hbm", OPT_POS_REAL, offsetof(device_flags, hbm), "BYTES",
     "memory of one GPU in bytes (default: what the driver reports, napkin specs)"},
};
#define DEVICE_TABLE_ROWS (sizeof DEVICE_TABLE / sizeof DEVICE_TABLE[0])
_Static_assert(DEVICE_TABLE_ROWS <= DEVICE_NOPTS_MAX, "DEVICE_NOPTS_MAX must hold the whole table");

device_flags device_flags_default(unsigned takes, const char *default_gpu)
{
    device_flags f = {NULL, NULL, 0, NAN, NAN, NAN, NAN, 0, takes, default_gpu, "", ""};
    if (default_gpu)
        snprintf(f.gpu_help, sizeof f.gpu_help, "GPU key (napkin specs --gpus; default %s)", default_gpu);
    else
        snprintf(f.gpu_help, sizeof f.gpu_help, "GPU key (napkin specs --gpus)");
    snprintf(f.usable_help, sizeof f.usable_help, "share of GPU memory the server may use (default %g)",
             memory_policy_default().usable_fraction);
    return f;
}

int device_flag_opts(device_flags *f, unsigned which, cli_opt *opts)
{
    int n = 0;
    for (size_t i = 0; i < DEVICE_TABLE_ROWS; i++) {
        unsigned bit = DEVICE_TABLE[i].bit;
        if (!(which & f->takes & bit))
            continue;
        const char *help = DEVICE_TABLE[i].help ? DEVICE_TABLE[i].help
                           : bit == DEVICE_GPU  ? f->gpu_help
                                                : f->usable_help;
        /* a CPU set or a default stands in for --gpu; without either it is required */
        int required = bit == DEVICE_GPU && !f->default_gpu && !(f->takes & DEVICE_CALIBRATE);
        opts[n++] = (cli_opt){DEVICE_TABLE[i].name, DEVICE_TABLE[i].kind, (char *)f + DEVICE_TABLE[i].dest,
                              DEVICE_TABLE[i].metavar, help, required, 0};
    }
    return n;
}

/* The checks that need no tables: --hbm a GPU's memory, and not both
 * --calibrate and an efficiency. */
static int check_flags(const char *cmd, const device_flags *f)
{
    if (cli_hbm_check(cmd, f->hbm) != 0)
        return EXIT_USAGE;
    if (f->calibrate && (!isnan(f->efficiency) || !isnan(f->bw_efficiency) || !isnan(f->flops_efficiency)))
        return cli_fail(cmd, EXIT_USAGE, "give --calibrate or an efficiency, not both: the measured set already "
                                         "says what the device reaches");
    return 0;
}

int device_gpu_row(const char *cmd, const cli_specs *specs, const device_flags *f, const gpu_spec **out)
{
    return cli_find_gpu(cmd, specs, "--gpu", f->gpu ? f->gpu : f->default_gpu, out);
}

memory_policy device_policy(const device_flags *f, int activation_tokens, int sampled_tokens)
{
    return cli_policy(f->usable, activation_tokens, sampled_tokens, f->hbm);
}

/* --calibrate published:SYSTEM/BACKEND: the datasheet times the first
 * answer, the named rates the second. */
static int on_published_rates(const char *cmd, const device_flags *f, const gpu_spec *row, device_setup *out)
{
    if (!row)
        return cli_fail(cmd, EXIT_USAGE, "--gpu is required with --calibrate %s", f->calibrate);
    out->sheet = out->timed = *row;
    out->has_sheet = 1;
    return cli_rates_resolve(cmd, row->key, f->calibrate, f->roofline, &out->rates);
}

/* --calibrate DIR (loaded into out->cal): the set's ceilings time the first
 * answer; its own GEMM sweep, fitted, the second.  A CPU set is a device of
 * its own; a GPU set calibrates its --gpu row. */
static int on_measured_set(const char *cmd, const device_flags *f, const gpu_spec *row, dtype compute,
                           device_setup *out)
{
    char err[512];
    int cpu = strcmp(out->cal.kind, "cpu") == 0;
    if (calibrated_gpu(&out->cal, cpu ? NULL : row, compute, &out->timed, err, sizeof err) != 0)
        return cli_fail(cmd, EXIT_USAGE, "--calibrate %s: %s%s", f->calibrate, err,
                        cpu && f->gpu ? " (leave out --gpu)" : "");
    out->calibrated = 1;
    out->has_sheet = !cpu;
    out->sheet = cpu ? out->timed : *row;
    if (f->roofline)
        return 0;
    /* the calibrated answer beside its ceilings' roofline; a set that does not fit leaves the roofline alone */
    if (measured_set_fit(f->calibrate, &out->timed, 0, &out->rates.model, NULL, NULL, err, sizeof err) == 0)
        out->rates.have = out->rates.asked = 1;
    return 0;
}

/* No set: the datasheet, derated by the efficiencies; the GPU's published
 * rates (if it has any) for the second answer. */
static int on_datasheet(const char *cmd, const device_flags *f, const gpu_spec *row, device_setup *out)
{
    if (!row)
        return cli_fail(cmd, EXIT_USAGE, "--gpu is required (or --calibrate DIR with a CPU set)");
    out->sheet = *row;
    out->has_sheet = 1;
    out->bw_fraction = !isnan(f->bw_efficiency) ? f->bw_efficiency : !isnan(f->efficiency) ? f->efficiency : 1;
    out->flops_fraction =
        !isnan(f->flops_efficiency) ? f->flops_efficiency : !isnan(f->efficiency) ? f->efficiency : 1;
    out->timed = gpu_derated(row, out->bw_fraction, out->flops_fraction);
    return cli_rates_resolve(cmd, row->key, NULL, f->roofline, &out->rates);
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
    if ((rc = check_flags(cmd, f)) != 0)
        return rc;
    int measured = f->calibrate && !cli_is_published(f->calibrate);
    char err[512];
    if (measured && calibration_load(f->calibrate, &out->cal, err, sizeof err) != 0)
        return cli_fail(cmd, EXIT_USAGE, "--calibrate: %s", err);
    /* the default GPU stands in for --gpu, except beside a CPU set (a device of its own) */
    int cpu_set = measured && strcmp(out->cal.kind, "cpu") == 0;
    if (!row && f->default_gpu && !cpu_set && (rc = cli_find_gpu(cmd, specs, "--gpu", f->default_gpu, &row)) != 0)
        return rc;
    if (cli_is_published(f->calibrate))
        return on_published_rates(cmd, f, row, out);
    if (measured)
        return on_measured_set(cmd, f, row, compute, out);
    return on_datasheet(cmd, f, row, out);
}

/* The key of the row the achieved rates are applied to. */
static const char *rated_key(const device_setup *d)
{
    return d->calibrated ? d->timed.key : d->sheet.key;
}

rated_device device_rated(const device_setup *d)
{
    rated_device c = {d->rates.have, d->calibrated ? d->timed : d->sheet};
    c.gpu.rates = d->rates.have ? &d->rates.model : NULL;
    return c;
}

void device_report_measured(report *r, const device_setup *d)
{
    if (!d->calibrated)
        return;
    report_text(r, "calibrated_from", "ceilings measured on", d->cal.device);
    report_text(r, "calibration_date", "measured", d->cal.date);
    report_text(r, "bandwidth_from", "bandwidth from", d->cal.bandwidth_from);
    report_num(r, "timed_bandwidth", "bandwidth timed with", U_BANDWIDTH, d->timed.mem_bw);
}

void device_report(report *r, const device_setup *d)
{
    report_text(r, "device", "device", d->timed.name);
    if (d->calibrated) {
        device_report_measured(r, d);
    } else {
        report_num(r, "bw_efficiency", "share of the datasheet bandwidth", U_REAL, d->bw_fraction);
        report_num(r, "flops_efficiency", "share of the datasheet FLOP rate", U_REAL, d->flops_fraction);
        report_num(r, "timed_bandwidth", "bandwidth timed with", U_BANDWIDTH, d->timed.mem_bw);
    }
    cli_rates_report(r, &d->rates, rated_key(d));
}

const char *device_first_kind(const device_setup *d, double efficiency)
{
    return d->calibrated || (d->bw_fraction == 1 && d->flops_fraction == 1 && efficiency == 1) ? "Bound" : "Estimate";
}

void device_report_first(report *r, const device_setup *d, double efficiency, const char *what)
{
    const char *kind = device_first_kind(d, efficiency);
    char title[256];
    if (d->calibrated)
        snprintf(title, sizeof title, "%s: %s (ceilings measured on %s)", kind, what, d->cal.device);
    else
        snprintf(title, sizeof title, "%s: %s (datasheet rates%s)", kind, what,
                 kind[0] == 'E' ? " at the given efficiencies" : "");
    report_section(r, title);
}

void device_report_again(report *r, const device_setup *d, double efficiency, const char *what)
{
    char title[256];
    snprintf(title, sizeof title, "%s: %s", device_first_kind(d, efficiency), what);
    report_section(r, title);
}

int device_report_calibrated_section(report *r, const device_setup *d, const char *what, const char *aside)
{
    char title[256];
    if (d->rates.have)
        snprintf(title, sizeof title, "Estimate: %s at measured kernel rates (calibrated%s%s)", what,
                 aside ? ", " : "", aside ? aside : "");
    else
        snprintf(title, sizeof title, "No estimate: the bound alone");
    report_section(r, title);
    return d->rates.have;
}

int device_report_calibrated(report *r, const device_setup *d, const char *what, const char *aside)
{
    device_report_calibrated_section(r, d, what, aside);
    cli_rates_report(r, &d->rates, rated_key(d));
    return d->rates.have;
}
