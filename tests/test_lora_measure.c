/* napkin: no-asan */
/* The batched-adapter measurements: the CPU twin (code/measure/lora_bgmv) at
 * its --quick size validates itself, writes the shared TSV format with
 * provenance and counts bytes and FLOP as the library does; the CUDA kernel
 * skips cleanly (exit 77) where no GPU answers.  Both run as separate
 * programs, so this suite stays out of the sanitizer run. */
#include "measured.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch_dir.h"
#include "shell_run.h"

TestSuite(lora_measure, .init = scratch_suite_make, .fini = scratch_suite_remove, .timeout = 120);

Test(lora_measure, twin_quick_validates_and_counts)
{
    char bin[512], cmd[1024], out[8192], path[512], err[256];
    const char *b = built_program("bin/measure", "lora_bgmv", bin, sizeof bin);
    snprintf(cmd, sizeof cmd, "%s --quick --out %s/lora_bgmv.tsv", b, scratch_dir);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "validated") != NULL, "%s", out);
    measured_table t;
    snprintf(path, sizeof path, "%s/lora_bgmv.tsv", scratch_dir);
    cr_assert_eq(measured_table_load(path, &t, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(measured_meta(&t, "measurement"), "lora_bgmv");
    cr_assert_str_eq(measured_meta(&t, "kind"), "cpu");
    cr_assert_not_null(measured_meta(&t, "date"));
    cr_assert(atof(measured_meta(&t, "read_ceiling_b_s")) > 0);
    /* --quick: batch 16, so D = 1, 2, 4, 8, 16 */
    cr_assert_eq(t.nrows, 5);
    int dc = measured_col(&t, "distinct"), wc = measured_col(&t, "adapter_bytes"), fc = measured_col(&t, "flop");
    int tc = measured_col(&t, "time_s"), lo = measured_col(&t, "min_s"), hi = measured_col(&t, "max_s");
    cr_assert(dc >= 0 && wc >= 0 && fc >= 0 && tc >= 0 && lo >= 0 && hi >= 0);
    for (int r = 0; r < t.nrows; r++) {
        double d = measured_num(&t, r, dc);
        cr_assert_float_eq(d, pow(2, r), 0);
        /* D adapters x 2 layers x rank 16 x (4096 + 4096) x 2 bytes = D x 524,288 */
        cr_assert_float_eq(measured_num(&t, r, wc), d * 524288.0, 0.5);
        /* 2 layers x (shrink + expand) x 2 x 16 tokens x 4096 x 16 = 8,388,608 whatever D */
        cr_assert_float_eq(measured_num(&t, r, fc), 8388608.0, 0.5);
        cr_assert_leq(measured_num(&t, r, lo), measured_num(&t, r, tc));
        cr_assert_geq(measured_num(&t, r, hi), measured_num(&t, r, tc));
    }
    measured_table_free(&t);
}

Test(lora_measure, twin_bad_flag_exits_2)
{
    char bin[512], cmd[1024], out[4096];
    const char *b = built_program("bin/measure", "lora_bgmv", bin, sizeof bin);
    snprintf(cmd, sizeof cmd, "%s --bogus", b);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "'--bogus'") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "%s --rank 12", b); /* not a multiple of 8 */
    cr_assert_eq(shell_run(cmd, out, sizeof out), 2, "%s", out);
}

Test(lora_measure, kernel_skips_without_gpu)
{
    char bin[512], cmd[1024], out[4096];
    const char *k = built_program("kernels", "lora_bgmv", bin, sizeof bin);
    if (shell_run("nvidia-smi -L", out, sizeof out) == 0)
        cr_skip_test("a GPU answers here: kernels/run_all.sh measures instead");
    snprintf(cmd, sizeof cmd, "%s --quick", k);
    int rc = shell_run(cmd, out, sizeof out);
    cr_assert_eq(rc, 77, "exited %d: %s", rc, out);
    cr_assert(strncmp(out, "SKIP: ", 6) == 0, "%s", out);
    snprintf(cmd, sizeof cmd, "%s --bogus", k);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 2, "%s", out);
}
