/* napkin: no-asan */
/* kernels/step_graph.cu on a machine where no GPU answers: "SKIP: <reason>"
 * and exit 77; a bad flag exits 2 before any device call.  Skipped where the
 * kernel is not built (no nvcc) or where a GPU answers (there the kernel
 * measures instead). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell_run.h"

static void binary(char *buf, size_t n)
{
    built_program("kernels", "step_graph", buf, n);
    if (system("nvidia-smi -L >/dev/null 2>&1") == 0)
        cr_skip_test("a GPU answers here: step_graph measures instead");
}

Test(step_graph, no_device_skips_with_77, .timeout = 60)
{
    char bin[512], cmd[1100], out[4096];
    binary(bin, sizeof bin);
    snprintf(cmd, sizeof cmd, "%s --out /tmp 2>&1", bin);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 77, "%s", out);
    cr_assert(strncmp(out, "SKIP: ", 6) == 0, "%s", out);
}

Test(step_graph, bad_flag_exits_2, .timeout = 60)
{
    char bin[512], cmd[1100], out[4096];
    binary(bin, sizeof bin);
    snprintf(cmd, sizeof cmd, "%s --bogus 2>&1", bin);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "'--bogus'") != NULL, "%s", out);
}
