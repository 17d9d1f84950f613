#include "calibrate.h"

#include "measured.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void copy_meta(const measured_table *t, const char *key, char *dst, size_t n)
{
    const char *v = measured_meta(t, key);
    snprintf(dst, n, "%s", v ? v : "");
}

static double meta_num(const measured_table *t, const char *key)
{
    const char *v = measured_meta(t, key);
    double x;
    return v && parse_plain_number(v, &x) == 0 ? x : NAN;
}

int calibration_load(const char *dir, calibration *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char path[4096];
    measured_table g;
    snprintf(path, sizeof path, "%s/gemm.tsv", dir);
    if (measured_table_load(path, &g, err, errlen) != 0)
        return -1;
    copy_meta(&g, "device", out->device, sizeof out->device);
    copy_meta(&g, "kind", out->kind, sizeof out->kind);
    copy_meta(&g, "date", out->date, sizeof out->date);
    out->peak_flops = meta_num(&g, "peak_flops_measured");
    out->bandwidth = meta_num(&g, "bandwidth_measured");
    out->mem_bytes = meta_num(&g, "mem_bytes");
    if (!(out->mem_bytes > 0))
        out->mem_bytes = 0;
    snprintf(out->bandwidth_from, sizeof out->bandwidth_from, "gemm.tsv bandwidth_measured");
    measured_table_free(&g);
    if (!(out->peak_flops > 0)) {
        snprintf(err, errlen, "%s: no peak_flops_measured in its provenance", path);
        return -1;
    }
    if (!(out->bandwidth > 0)) { /* the stream set's read row */
        measured_table st;
        snprintf(path, sizeof path, "%s/stream.tsv", dir);
        if (measured_table_load(path, &st, err, errlen) != 0)
            return -1;
        int kc = measured_col(&st, "kernel"), bc = measured_col(&st, "gb_s");
        int row = kc >= 0 ? measured_find_row(&st, kc, "read") : -1;
        out->bandwidth = row >= 0 && bc >= 0 ? measured_num(&st, row, bc) * 1e9 : NAN;
        measured_table_free(&st);
        snprintf(out->bandwidth_from, sizeof out->bandwidth_from, "stream.tsv read");
        if (!(out->bandwidth > 0)) {
            snprintf(err, errlen, "%s: no read row with a gb_s figure", path);
            return -1;
        }
    }
    if (!out->kind[0])
        snprintf(out->kind, sizeof out->kind, "gpu");
    return 0;
}

int calibrated_gpu(const calibration *c, const gpu_spec *base, dtype measured_dtype, gpu_spec *out, char *err,
                   size_t errlen)
{
    if (strcmp(c->kind, "cpu") == 0) {
        if (base) {
            snprintf(err, errlen, "the measured set is a CPU's (%s): time it on its own, without a GPU row",
                     c->device);
            return -1;
        }
        gpu_spec d;
        memset(&d, 0, sizeof d);
        snprintf(d.key, sizeof d.key, "measured");
        snprintf(d.name, sizeof d.name, "%.*s", (int)sizeof d.name - 1, c->device);
        for (int i = 0; i < DT_COUNT; i++)
            d.flops[i] = c->peak_flops; /* one measured rate stands for every dtype */
        d.mem_bw = c->bandwidth;
        if (!(c->mem_bytes > 0)) {
            snprintf(err, errlen, "the CPU set (%s) does not say how much memory the machine has", c->device);
            return -1;
        }
        d.mem_bytes = d.mem_bytes_datasheet = c->mem_bytes; /* the host's memory holds weights and KV */
        snprintf(d.source, sizeof d.source, "measured set (%s, %s)", c->device, c->date);
        *out = d;
        return 0;
    }
    if (!base) {
        snprintf(err, errlen, "the measured set is a GPU's (%s): give the GPU row it calibrates (--gpu)", c->device);
        return -1;
    }
    double sheet = gpu_peak_flops(base, measured_dtype);
    if (!(sheet > 0)) {
        snprintf(err, errlen, "%s has no %s rate to scale", base->key, dtype_name(measured_dtype));
        return -1;
    }
    gpu_spec d = *base;
    double scale = c->peak_flops / sheet;
    for (int i = 0; i < DT_COUNT; i++)
        d.flops[i] *= scale;
    d.mem_bw = c->bandwidth;
    *out = d;
    return 0;
}
