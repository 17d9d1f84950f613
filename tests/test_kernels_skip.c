/* napkin: no-asan */
/* The device gate of every CUDA kernel: on a machine where no GPU answers
 * (CI, or a CUDA toolkit without a driver), each kernel binary prints
 * "SKIP: <reason>" and exits 77, and a bad flag exits 2 before any device
 * call.  Skipped where the kernels are not built (no nvcc) or where a GPU
 * does answer (there kernels/run_all.sh is the test). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const kernels[] = {"bandwidth", "gemm_sweep", "gemv", "decode_attention", "launch"};

static int run(const char *cmd, char *out, size_t n)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t got = fread(out, 1, n - 1, p);
    out[got] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void kernel_path(const char *name, char *buf, size_t n)
{
    const char *b = getenv("NB_BUILD");
    snprintf(buf, n, "%s/kernels/%s", b ? b : "build", name);
    if (access(buf, X_OK) != 0)
        cr_skip_test("%s not built (make kernels needs nvcc)", buf);
    if (system("nvidia-smi -L >/dev/null 2>&1") == 0)
        cr_skip_test("a GPU answers here: kernels/run_all.sh measures instead");
}

Test(kernels, no_device_prints_skip_and_exits_77, .timeout = 60)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        char bin[512], cmd[1100], out[4096];
        kernel_path(kernels[i], bin, sizeof bin);
        snprintf(cmd, sizeof cmd, "%s --out /tmp 2>&1", bin);
        int rc = run(cmd, out, sizeof out);
        cr_assert_eq(rc, 77, "%s exited %d: %s", kernels[i], rc, out);
        cr_assert(strncmp(out, "SKIP: ", 6) == 0, "%s printed: %s", kernels[i], out);
    }
}

Test(kernels, bad_flag_exits_2, .timeout = 60)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        char bin[512], cmd[1100], out[4096];
        kernel_path(kernels[i], bin, sizeof bin);
        snprintf(cmd, sizeof cmd, "%s --bogus 2>&1", bin);
        cr_assert_eq(run(cmd, out, sizeof out), 2, "%s: %s", kernels[i], out);
        cr_assert(strstr(out, "'--bogus'") != NULL, "%s: %s", kernels[i], out);
    }
}
