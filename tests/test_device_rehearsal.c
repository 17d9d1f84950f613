/* napkin: no-asan */
/* The device run rehearsed on a machine without a GPU (tests/device/
 * rehearse.sh): stand-ins for nvidia-smi, nvcc and the kernel programs, a C
 * compiler that cannot compile the config reader (no jansson), short
 * deadlines.  It shows that kernels/device_run.sh builds the kernels
 * without jansson, starts the deadline after the build, leaves an archive
 * in OUTDIR after the build and after every program (each program, as it
 * starts, finds every earlier program's rows in it), keeps the rows of a
 * program stopped at the deadline and the finished versions' rows of a
 * program that crashes in a later version, returns every finished program's rows
 * when the whole call is killed, and names a missing nvcc or an absent GPU
 * in an archive of its own.  Needs only sh, make, cc, tar and setsid. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "shell_run.h"

Test(device_run, rehearsal_returns_every_finished_program, .timeout = 240)
{
    const char *src = getenv("NB_SRC"), *build = getenv("NB_BUILD");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/tests/device/rehearse.sh' '%s' '%s' 2>&1", src ? src : ".", src ? src : ".",
             build ? build : "build");
    static char out[1 << 16];
    int rc = shell_run(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "rehearsal exited %d:\n%s", rc, out);
    cr_assert(strstr(out, "rehearse: every check held") != NULL, "%s", out);
}
