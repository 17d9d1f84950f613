/* Chapter 6: the batched adapter operator measured on a CPU (the committed
 * set of code/measure/lora_bgmv, untouched), beside the roofline of each op
 * from the two ceilings measured in the same run.
 *
 * Writes 06-cpu.tsv (D, median, min, max, predicted, in ms) and the values
 * the chapter quotes, including the device and date for the caption. */
#include "measured.h"
#include "notebook.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Measured on the build machine with the default flags, committed as the twin wrote it. */
#define CPU_SET "figures/measured/cpu-amd-epyc-2c/lora_bgmv.tsv"

static int col(const measured_table *t, const char *name)
{
    int c = measured_col(t, name);
    if (c < 0) {
        fprintf(stderr, "cpu_measured: %s: no column '%s'\n", CPU_SET, name);
        exit(1);
    }
    return c;
}

static const char *meta(const measured_table *t, const char *key)
{
    const char *v = measured_meta(t, key);
    if (!v) {
        fprintf(stderr, "cpu_measured: %s: no '%s' in the provenance\n", CPU_SET, key);
        exit(1);
    }
    return v;
}

int main(void)
{
    measured_table t;
    char err[256];
    if (measured_table_load(CPU_SET, &t, err, sizeof err) != 0) {
        fprintf(stderr, "cpu_measured: %s\n", err);
        return 1;
    }
    int dc = col(&t, "distinct"), tc = col(&t, "time_s"), lc = col(&t, "min_s"), hc = col(&t, "max_s");
    int pc = col(&t, "predicted_s"), fc = col(&t, "flop"), wc = col(&t, "adapter_bytes"), bc = col(&t, "batch");
    if (t.nrows < 2) {
        fprintf(stderr, "cpu_measured: %s: fewer than two rows\n", CPU_SET);
        return 1;
    }
    FILE *f = nb_data_open("06-cpu.tsv");
    fprintf(f, "distinct\tmedian_ms\tmin_ms\tmax_ms\tpredicted_ms\n");
    for (int r = 0; r < t.nrows; r++)
        fprintf(f, "%g\t%.4f\t%.4f\t%.4f\t%.4f\n", measured_num(&t, r, dc), 1e3 * measured_num(&t, r, tc),
                1e3 * measured_num(&t, r, lc), 1e3 * measured_num(&t, r, hc), 1e3 * measured_num(&t, r, pc));
    fclose(f);

    int last = t.nrows - 1;
    double read = atof(meta(&t, "read_ceiling_b_s")), compute = atof(meta(&t, "compute_ceiling_flop_s"));
    char date[16];
    snprintf(date, sizeof date, "%.10s", meta(&t, "date"));
    nb_value("ch06_cpu_device", "%s", meta(&t, "device"));
    nb_value("ch06_cpu_cores", "%s", meta(&t, "cores"));
    nb_value("ch06_cpu_date", "%s", date);
    nb_value("ch06_cpu_read_gb_s", "%.1f", read / GB);
    nb_value("ch06_cpu_compute_gflops", "%.1f", compute / 1e9);
    nb_value("ch06_cpu_ridge", "%.2f", compute / read);
    nb_value("ch06_cpu_batch", "%.0f", measured_num(&t, 0, bc));
    nb_value("ch06_cpu_dmax", "%.0f", measured_num(&t, last, dc));
    nb_value("ch06_cpu_d1_ms", "%.1f", 1e3 * measured_num(&t, 0, tc));
    nb_value("ch06_cpu_dmax_ms", "%.1f", 1e3 * measured_num(&t, last, tc));
    nb_value("ch06_cpu_rise_pct", "%.0f", 100 * (measured_num(&t, last, tc) / measured_num(&t, 0, tc) - 1));
    nb_value("ch06_cpu_pred_d1_ms", "%.1f", 1e3 * measured_num(&t, 0, pc));
    nb_value("ch06_cpu_pred_dmax_ms", "%.1f", 1e3 * measured_num(&t, last, pc));
    nb_value("ch06_cpu_gap_d1_pct", "%.0f", 100 * (measured_num(&t, 0, tc) / measured_num(&t, 0, pc) - 1));
    nb_value("ch06_cpu_gap_dmax_pct", "%.0f",
             100 * (measured_num(&t, last, tc) / measured_num(&t, last, pc) - 1));
    /* FLOP per adapter byte at the largest D: B / D in bf16 */
    nb_value("ch06_cpu_intensity_dmax", "%.1f", measured_num(&t, last, fc) / measured_num(&t, last, wc));
    measured_table_free(&t);
    return 0;
}
