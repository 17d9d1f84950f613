/* Chapter 1: the ridge of every GPU in the table, per compute dtype.
 * Records ch01_ridge_<gpu>_<dtype> (FLOP per byte) and the datasheet
 * inputs the prose quotes for H100 and H200. */
#include "ceilings.h"
#include "notebook.h"
#include "roofline.h"
#include "specs.h"
#include "units.h"

#include <stdio.h>

/* Value names are [a-z0-9_]: keep letters and digits of a table key. */
static void value_key(const char *key, char *out, size_t n)
{
    size_t j = 0;
    for (const char *p = key; *p && j + 1 < n; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
            out[j++] = *p;
    out[j] = '\0';
}

int main(void)
{
    gpu_table t;
    char err[512];
    if (gpu_table_builtin(&t, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const dtype kinds[] = {DT_BF16, DT_FP8, DT_INT8};
    for (int i = 0; i < t.n; i++) {
        const gpu_spec *g = &t.rows[i];
        char k[SPEC_KEY_MAX], name[96];
        value_key(g->key, k, sizeof k);
        for (size_t d = 0; d < sizeof kinds / sizeof kinds[0]; d++) {
            double peak = gpu_peak_flops(g, kinds[d]);
            snprintf(name, sizeof name, "ch01_ridge_%s_%s", k, dtype_name(kinds[d]));
            if (peak > 0)
                nb_value(name, "%.0f", ridge_intensity(peak, g->mem_bw));
            else
                nb_value(name, "%s", "none");
        }
        snprintf(name, sizeof name, "ch01_bf16_tflops_%s", k);
        nb_value(name, "%.1f", gpu_peak_flops(g, DT_BF16) / TERA);
        snprintf(name, sizeof name, "ch01_hbm_tbs_%s", k);
        nb_value(name, "%.3g", g->mem_bw / TB);
        snprintf(name, sizeof name, "ch01_bf16_sparse_tflops_%s", k);
        nb_value(name, "%.0f", 2 * gpu_peak_flops(g, DT_BF16) / TERA); /* the datasheet's 2:4-sparse figure */
        snprintf(name, sizeof name, "ch01_hbm_gb_%s", k);
        nb_value(name, "%.1f", g->mem_bytes / GB);
        published_ceilings pc;
        if (published_ceilings_for(g->key, &pc) == 0) {
            snprintf(name, sizeof name, "ch01_read_pct_%s", k);
            nb_value(name, "%.0f", 100 * pc.read_bw / g->mem_bw);
            snprintf(name, sizeof name, "ch01_copy_pct_%s", k);
            nb_value(name, "%.0f", 100 * pc.copy_bw / g->mem_bw);
        }
    }
    gpu_table_free(&t);
    return 0;
}
