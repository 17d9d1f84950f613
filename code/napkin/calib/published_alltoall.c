#include "published_alltoall.h"
#include "published_internal.h"

#include "measured.h"
#include "moe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { C_IMPL, C_PHASE, C_DTYPE, C_EP, C_NODES, C_HIDDEN, C_TOPK, C_EXPERTS, C_TOKENS, C_TIME, C_COUNT };
static const char *const COLS[C_COUNT] = {"implementation", "phase", "dtype",  "ep",     "nodes",
                                          "hidden",         "topk",  "experts", "tokens", "time_s"};

double published_alltoall_value_bytes(const char *implementation, const char *phase, const char *dtype)
{
    if (strcmp(dtype, "bf16") == 0)
        return 2;
    if (strcmp(dtype, "fp8") == 0)
        return 1;
    if (strcmp(dtype, "nvfp4") == 0 || strcmp(dtype, "fp4") == 0)
        return 0.5;
    /* DeepEP's low_latency_dispatch casts to fp8 by default (use_fp8); its combine and the normal kernels move bf16 */
    if (strstr(implementation, "_ll") || strstr(implementation, "v2_generation"))
        return strcmp(phase, "dispatch") == 0 ? 1 : 2;
    return 2;
}

int published_alltoall_kernel(const char *backend, a2a_kernel k, const char **implementation, const char **dtype)
{
    const int prefill = k == A2A_PREFILL_DISPATCH || k == A2A_PREFILL_COMBINE;
    const int combine = k == A2A_DECODE_COMBINE || k == A2A_PREFILL_COMBINE;
    if (strcmp(backend, "trtllm") == 0) {
        *implementation = prefill ? "trtllm_deepep_ht" : "trtllm_deepep_ll";
        *dtype = !prefill && !combine ? "fp8" : "bf16";
    } else if (strcmp(backend, "sglang") == 0) {
        *implementation = prefill ? "deepep_normal" : "deepep_ll";
        *dtype = "default";
    } else if (strcmp(backend, "vllm") == 0) {
        *implementation = prefill ? "deepep_ht" : "deepep_ll";
        *dtype = "default";
    } else
        return -1;
    return 0;
}

static int load(const char *dir, measured_table *t, int *ci, char *err, size_t errlen)
{
    return published_load_columns(dir, "alltoall.tsv", COLS, C_COUNT, t, ci, err, errlen);
}

static int has_table(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/alltoall.tsv", dir);
    return access(path, R_OK) == 0;
}

/* The point of row r, or -1 for a size or time that is not a positive number. */
static int point_of(const measured_table *t, const int *ci, int r, a2a_point *p)
{
    const double ep = measured_num(t, r, ci[C_EP]), hidden = measured_num(t, r, ci[C_HIDDEN]);
    const double k = measured_num(t, r, ci[C_TOPK]), e = measured_num(t, r, ci[C_EXPERTS]);
    const double tokens = measured_num(t, r, ci[C_TOKENS]), time = measured_num(t, r, ci[C_TIME]);
    if (!(ep >= 1 && hidden > 0 && k >= 1 && e >= k && tokens > 0 && time > 0))
        return -1;
    double bpv = published_alltoall_value_bytes(measured_cell(t, r, ci[C_IMPL]), measured_cell(t, r, ci[C_PHASE]),
                                                measured_cell(t, r, ci[C_DTYPE]));
    *p = (a2a_point){tokens, moe_alltoall_bytes(tokens, (int)e, (int)k, (int)hidden, (int)ep, bpv), time};
    return isfinite(p->bytes) ? 0 : -1;
}

int published_alltoall_points(const char *dir, const char *implementation, const char *phase, const char *dtype,
                              a2a_point **pts, int *n, int *ep, char *err, size_t errlen)
{
    *pts = NULL;
    *n = 0;
    *ep = 0;
    measured_table t;
    int ci[C_COUNT];
    if (load(dir, &t, ci, err, errlen) != 0)
        return -1;
    for (int r = 0; r < t.nrows; r++) /* the largest group inside one node */
        if (strcmp(measured_cell(&t, r, ci[C_IMPL]), implementation) == 0 &&
            strcmp(measured_cell(&t, r, ci[C_PHASE]), phase) == 0 &&
            strcmp(measured_cell(&t, r, ci[C_DTYPE]), dtype) == 0 && measured_num(&t, r, ci[C_NODES]) == 1 &&
            measured_num(&t, r, ci[C_EP]) > *ep)
            *ep = (int)measured_num(&t, r, ci[C_EP]);
    a2a_point *p = malloc((size_t)(t.nrows > 0 ? t.nrows : 1) * sizeof *p);
    if (!p) {
        measured_table_free(&t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int k = 0;
    for (int r = 0; r < t.nrows; r++) {
        if (strcmp(measured_cell(&t, r, ci[C_IMPL]), implementation) != 0 ||
            strcmp(measured_cell(&t, r, ci[C_PHASE]), phase) != 0 ||
            strcmp(measured_cell(&t, r, ci[C_DTYPE]), dtype) != 0 || measured_num(&t, r, ci[C_NODES]) != 1 ||
            measured_num(&t, r, ci[C_EP]) != *ep)
            continue;
        if (point_of(&t, ci, r, &p[k]) != 0) {
            snprintf(err, errlen, "%s/alltoall.tsv: data row %d: a size or time that is not a positive number", dir,
                     r + 1);
            free(p);
            measured_table_free(&t);
            return -1;
        }
        k++;
    }
    measured_table_free(&t);
    *pts = p;
    *n = k;
    return 0;
}

/* Keep points i with i % 2 == half - 1 (half 1 or 2); half 0 keeps all. */
static int half_of(a2a_point *p, int n, int half)
{
    if (half == 0)
        return n;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (i % 2 == half - 1)
            p[k++] = p[i];
    return k;
}

int published_alltoall_fit(const char *dir, const char *backend, int every_other, rate_model *out,
                           fit_summary sums[A2A_KERNELS], char *err, size_t errlen)
{
    if (sums)
        memset(sums, 0, A2A_KERNELS * sizeof sums[0]);
    if (!has_table(dir))
        return 0;
    for (int k = 0; k < A2A_KERNELS; k++) {
        const char *impl, *dtype;
        if (published_alltoall_kernel(backend, (a2a_kernel)k, &impl, &dtype) != 0)
            return 0;
        const char *phase = k == A2A_DECODE_COMBINE || k == A2A_PREFILL_COMBINE ? "combine" : "dispatch";
        a2a_point *p;
        int n, ep;
        if (published_alltoall_points(dir, impl, phase, dtype, &p, &n, &ep, err, errlen) != 0)
            return -1;
        n = half_of(p, n, every_other);
        if (n < 3) {
            free(p);
            continue;
        }
        a2a_rate r = {0, 0, 0, ep};
        fit_summary s;
        int rc = fit_a2a_rate(p, n, &r, &s, err, errlen);
        free(p);
        if (rc != 0)
            return -1;
        out->alltoall[k] = r;
        out->has_alltoall[k] = 1;
        if (sums)
            sums[k] = s;
    }
    return 0;
}

/* Row r's group: implementation, phase, dtype, ep and nodes as one string. */
static void group_of(const measured_table *t, const int *ci, int r, char *key, size_t n)
{
    snprintf(key, n, "%s|%s|%s|%s|%s", measured_cell(t, r, ci[C_IMPL]), measured_cell(t, r, ci[C_PHASE]),
             measured_cell(t, r, ci[C_DTYPE]), measured_cell(t, r, ci[C_EP]), measured_cell(t, r, ci[C_NODES]));
}

//> published_alltoall_heldout
int published_alltoall_heldout(const char *dir, fit_summary *s, int *groups, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    *groups = 0;
    if (!has_table(dir))
        return 0;
    measured_table t;
    int ci[C_COUNT];
    if (load(dir, &t, ci, err, errlen) != 0)
        return -1;
    a2a_point *even = malloc((size_t)(t.nrows + 1) * sizeof *even), *odd = malloc((size_t)(t.nrows + 1) * sizeof *odd);
    double *e = malloc((size_t)(t.nrows + 1) * sizeof *e);
    char *done = calloc((size_t)t.nrows + 1, 1);
    int ne = 0, rc = 0;
    if (!even || !odd || !e || !done) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    for (int r0 = 0; rc == 0 && r0 < t.nrows; r0++) {
        if (done[r0])
            continue;
        char key[256], other[256];
        group_of(&t, ci, r0, key, sizeof key);
        int nev = 0, nodd = 0, i = 0;
        for (int r = r0; r < t.nrows; r++) { /* the group's rows in file order: even ones fit, odd ones judge */
            group_of(&t, ci, r, other, sizeof other);
            if (strcmp(key, other) != 0)
                continue;
            done[r] = 1;
            a2a_point p;
            if (point_of(&t, ci, r, &p) != 0) {
                snprintf(err, errlen, "%s/alltoall.tsv: data row %d: a size or time that is not a positive number",
                         dir, r + 1);
                rc = -1;
                break;
            }
            if (i++ % 2 == 0)
                even[nev++] = p;
            else
                odd[nodd++] = p;
        }
        if (rc != 0 || nev < 3 || nodd == 0)
            continue;
        a2a_rate line = {0, 0, 0, 0};
        if (fit_a2a_rate(even, nev, &line, NULL, err, errlen) != 0) {
            rc = -1;
            break;
        }
        for (int j = 0; j < nodd; j++)
            e[ne++] = a2a_rate_time(&line, odd[j].tokens, odd[j].bytes) / odd[j].time - 1;
        (*groups)++;
    }
    if (rc == 0)
        summarize_errors(e, ne, s);
    free(even);
    free(odd);
    free(e);
    free(done);
    measured_table_free(&t);
    return rc;
}
//< published_alltoall_heldout
