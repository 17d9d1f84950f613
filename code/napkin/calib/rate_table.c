#include "rate_table.h"

#include "measured.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const char napkin_calibrations_tsv[];

static const char *const COLS[] = {"calibration", "gpu",        "class",      "tp",        "t0_s",     "t_item_s",
                                   "flop_frac",   "byte_frac",  "blend",      "item_frac", "t_long_s", "latency1_s",
                                   "bandwidth1",  "latency2_s", "bandwidth2", "points",    "median_abs_err",
                                   "worst_abs_err"};
#define NCOLS ((int)(sizeof COLS / sizeof COLS[0]))

void rate_model_write(FILE *out, const rate_model *r, const fit_summary sums[RC_COUNT],
                      const fit_summary link_sums[RATE_TP_SLOTS], int header)
{
    if (header)
        for (int i = 0; i < NCOLS; i++)
            fprintf(out, "%s%c", COLS[i], i + 1 < NCOLS ? '\t' : '\n');
    for (int c = 0; c < RC_COUNT; c++) {
        if (!r->has_op[c])
            continue;
        const op_rate *o = &r->op[c];
        fprintf(out, "%s\t%s\t%s\t-\t%.6e\t%.6e\t%.6f\t%.6f\t%.6f\t%.6f\t%.6e\t-\t-\t-\t-\t", r->name, r->gpu,
                rate_class_name(c), o->t0, o->t_item, o->flop_frac, o->byte_frac, o->blend, o->item_frac, o->t_long);
        if (sums && sums[c].points > 0)
            fprintf(out, "%d\t%.4f\t%.4f\n", sums[c].points, sums[c].median_abs_err, sums[c].worst_abs_err);
        else
            fprintf(out, "-\t-\t-\n");
    }
    for (int s = 0; s < RATE_TP_SLOTS; s++) {
        if (!r->has_allreduce[s])
            continue;
        const link_rate *l = &r->allreduce[s];
        fprintf(out, "%s\t%s\tallreduce\t%d\t-\t-\t-\t-\t-\t-\t-\t%.6e\t%.6e\t%.6e\t%.6e\t", r->name, r->gpu,
                rate_slot_tp(s),
                l->latency1, l->bandwidth1, l->latency2, l->bandwidth2);
        if (link_sums && link_sums[s].points > 0)
            fprintf(out, "%d\t%.4f\t%.4f\n", link_sums[s].points, link_sums[s].median_abs_err,
                    link_sums[s].worst_abs_err);
        else
            fprintf(out, "-\t-\t-\n");
    }
}

void rate_model_write_alltoall(FILE *out, const rate_model *r, const fit_summary sums[A2A_KERNELS])
{
    for (int k = 0; k < A2A_KERNELS; k++) {
        if (!r->has_alltoall[k])
            continue;
        const a2a_rate *a = &r->alltoall[k];
        fprintf(out, "%s\t%s\t%s\t%d\t%.6e\t%.6e\t-\t-\t-\t-\t-\t-\t%.6e\t-\t-\t", r->name, r->gpu,
                a2a_kernel_name((a2a_kernel)k), a->ep, a->latency, a->per_token, a->bandwidth);
        if (sums && sums[k].points > 0)
            fprintf(out, "%d\t%.4f\t%.4f\n", sums[k].points, sums[k].median_abs_err, sums[k].worst_abs_err);
        else
            fprintf(out, "-\t-\t-\n");
    }
}

/* An all-to-all line's row: ep in tp, latency in t0_s, per token in t_item_s, bandwidth in bandwidth1. */
static int parse_alltoall(const measured_table *t, const int *ci, int r, int k, rate_model *out)
{
    a2a_rate a = {measured_num(t, r, ci[4]), measured_num(t, r, ci[5]), measured_num(t, r, ci[12]),
                  (int)measured_num(t, r, ci[3])};
    if (!(a.latency > 0 && isfinite(a.latency)) || !(a.per_token >= 0 && isfinite(a.per_token)) ||
        !(a.bandwidth >= 0 && isfinite(a.bandwidth)) || !(measured_num(t, r, ci[3]) >= 2))
        return -1;
    out->alltoall[k] = a;
    out->has_alltoall[k] = 1;
    return 0;
}

static int positive(const measured_table *t, int row, int col, double *v)
{
    *v = measured_num(t, row, col);
    return *v > 0 && isfinite(*v) ? 0 : -1;
}

int rate_model_parse(const char *text, const char *filename, const char *name, rate_model *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    measured_table t;
    if (measured_table_parse(text, filename, &t, err, errlen) != 0)
        return -1;
    int ci[NCOLS];
    for (int i = 0; i < NCOLS; i++)
        if ((ci[i] = measured_col(&t, COLS[i])) < 0) {
            snprintf(err, errlen, "%s: no column '%s'", filename, COLS[i]);
            measured_table_free(&t);
            return -1;
        }
    int found = 0, rc = 0;
    for (int r = 0; r < t.nrows && rc == 0; r++) {
        if (strcmp(measured_cell(&t, r, ci[0]), name) != 0)
            continue;
        found = 1;
        snprintf(out->name, sizeof out->name, "%s", name);
        snprintf(out->gpu, sizeof out->gpu, "%s", measured_cell(&t, r, ci[1]));
        const char *cls = measured_cell(&t, r, ci[2]);
        if (strcmp(cls, "allreduce") == 0) {
            int slot = rate_tp_slot((int)measured_num(&t, r, ci[3]));
            link_rate l;
            if (slot < 0 || positive(&t, r, ci[11], &l.latency1) || positive(&t, r, ci[12], &l.bandwidth1) ||
                positive(&t, r, ci[13], &l.latency2) || positive(&t, r, ci[14], &l.bandwidth2)) {
                snprintf(err, errlen, "%s: data row %d: an all-reduce row needs tp 2, 4 or 8 and four positive "
                                      "link figures", filename, r + 1);
                rc = -1;
                break;
            }
            out->allreduce[slot] = l;
            out->has_allreduce[slot] = 1;
            continue;
        }
        int k = a2a_kernel_parse(cls);
        if (k >= 0) {
            if (parse_alltoall(&t, ci, r, k, out) != 0) {
                snprintf(err, errlen, "%s: data row %d: an all-to-all row needs an EP size of at least 2 in tp, a "
                                      "positive t0_s, and t_item_s and bandwidth1 not negative", filename, r + 1);
                rc = -1;
                break;
            }
            continue;
        }
        int c = rate_class_parse(cls);
        op_rate o;
        o.t_item = measured_num(&t, r, ci[5]);
        o.item_frac = measured_num(&t, r, ci[9]);
        o.t_long = measured_num(&t, r, ci[10]);
        if (c < 0 || positive(&t, r, ci[4], &o.t0) || !(o.t_item >= 0) || positive(&t, r, ci[6], &o.flop_frac) ||
            positive(&t, r, ci[7], &o.byte_frac) || positive(&t, r, ci[8], &o.blend) || o.blend < 1 ||
            !(o.item_frac >= 0 && o.item_frac < INFINITY) || !(o.t_long >= 0 && o.t_long < INFINITY)) {
            snprintf(err, errlen, "%s: data row %d: class '%s' needs a known class, positive t0_s, flop_frac, "
                                  "byte_frac, t_item_s, item_frac and t_long_s not negative and a blend of at least 1",
                     filename, r + 1, cls);
            rc = -1;
            break;
        }
        out->op[c] = o;
        out->has_op[c] = 1;
    }
    measured_table_free(&t);
    if (rc != 0)
        return -1;
    return found ? 0 : 1;
}

char *rate_model_names(char *buf, size_t n)
{
    buf[0] = 0;
    measured_table t;
    char err[256];
    if (measured_table_parse(napkin_calibrations_tsv, "calibrations.tsv", &t, err, sizeof err) != 0)
        return buf;
    int c = measured_col(&t, "calibration");
    size_t used = 0;
    const char *last = "";
    for (int r = 0; c >= 0 && r < t.nrows; r++) {
        const char *name = measured_cell(&t, r, c);
        if (strcmp(name, last) == 0)
            continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", name);
        if (w < 0 || (size_t)w >= n - used)
            break;
        used += (size_t)w;
        last = name;
    }
    measured_table_free(&t);
    return buf;
}

int rate_model_builtin(const char *name, rate_model *out, char *err, size_t errlen)
{
    int rc = rate_model_parse(napkin_calibrations_tsv, "calibrations.tsv", name, out, err, errlen);
    if (rc == 1) {
        char names[1024];
        snprintf(err, errlen, "no calibration '%s'; the published ones: %s", name,
                 rate_model_names(names, sizeof names));
        return -1;
    }
    return rc;
}

int rate_model_default(const char *gpu_key, rate_model *out)
{
    static const struct {
        const char *gpu, *name;
    } DEFAULTS[] = {{"h100", "published:h100_sxm/trtllm"}, {"h200", "published:h200_sxm/trtllm"}};
    char err[256];
    for (size_t i = 0; i < sizeof DEFAULTS / sizeof DEFAULTS[0]; i++)
        if (strcasecmp(gpu_key, DEFAULTS[i].gpu) == 0)
            return rate_model_builtin(DEFAULTS[i].name, out, err, sizeof err) == 0 ? 0 : -1;
    return -1;
}

gpu_spec gpu_builtin_calibrated(const char *key, const char *name, rate_model *storage)
{
    gpu_spec g = gpu_builtin(key);
    char err[1200];
    if (rate_model_builtin(name, storage, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    g.rates = storage;
    return g;
}
