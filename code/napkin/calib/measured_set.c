/* A reader's measured set fitted; see measured_set.h. */
#include "measured_set.h"

#include "published_internal.h"
#include "transformer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int measured_set_fit(const char *dir, const gpu_spec *device, int half, rate_model *out, fit_summary *sum,
                     fit_summary *held, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", dir);
    static const char *const names[] = {"m", "n", "k", "time_s"};
    measured_table t;
    int ci[4];
    if (published_load_columns(dir, "gemm.tsv", names, 4, &t, ci, err, errlen) != 0)
        return -1;
    const char *dt_s = measured_meta(&t, "dtype");
    dtype dt = dt_s && strncmp(dt_s, "fp32", 4) == 0 ? DT_FP32 : DT_BF16;
    int shape = measured_col(&t, "shape");
    rate_point *p = malloc((size_t)(t.nrows > 0 ? t.nrows : 1) * sizeof *p);
    rate_point *q = malloc((size_t)(t.nrows > 0 ? t.nrows : 1) * sizeof *q);
    if (!p || !q) {
        free(p);
        free(q);
        measured_table_free(&t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = 0, nq = 0, k = 0;
    for (int r = 0; r < t.nrows; r++) {
        if (shape >= 0 && strncmp(measured_cell(&t, r, shape), "gemv", 4) == 0)
            continue;
        double m = measured_num(&t, r, ci[0]), nn = measured_num(&t, r, ci[1]), kk = measured_num(&t, r, ci[2]);
        double time = measured_num(&t, r, ci[3]);
        if (!(m > 0 && nn > 0 && kk > 0 && time > 0)) {
            snprintf(err, errlen, "%s/gemm.tsv: data row %d: m, n, k and time_s must be positive numbers", dir, r + 1);
            free(p);
            free(q);
            measured_table_free(&t);
            return -1;
        }
        op_cost op = gemm_op_cost(m, kk, nn, dt, dt, dt);
        rate_point pt = {op.flop, op_bytes(&op), gpu_peak_flops(device, dt), device->mem_bw, time, 0, 0, 0};
        if (half == 0 || k % 2 == half - 1)
            p[n++] = pt;
        else
            q[nq++] = pt;
        k++;
    }
    measured_table_free(&t);
    op_rate r = {.t0 = 1e-5, .flop_frac = 0.8, .byte_frac = 0.8, .blend = 2};
    fit_summary s;
    if (fit_op_rate(p, n, &r, &s, err, errlen) != 0) {
        free(p);
        free(q);
        return -1;
    }
    if (sum)
        *sum = s;
    if (held)
        op_rate_errors(&r, q, nq, held);
    free(p);
    free(q);
    snprintf(out->gpu, sizeof out->gpu, "%s", device->key);
    out->op[RC_GEMM_BF16] = r;
    out->has_op[RC_GEMM_BF16] = 1;
    published_elementwise_from_gemm(out);
    return 0;
}
