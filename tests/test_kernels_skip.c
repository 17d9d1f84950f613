/* napkin: no-asan */
/* The device gate of every CUDA kernel: on a machine where no GPU answers
 * (CI, or a CUDA toolkit without a driver), each kernel binary prints
 * "SKIP: <reason>" and exits 77, and a bad flag exits 2 before any device
 * call.  Then the runner's dry run: kernels/run_all.sh --dry-run builds,
 * runs every binary and packs the same single archive a GPU run packs, with
 * a NOT MEASURED line per program, the provenance (revision from
 * NB_REVISION, quick flag, nvcc), and relative paths taken from the caller's
 * directory; programs that were not built are named; a spent deadline
 * stops every program with its reason.  Skipped where the kernels are not
 * built (no nvcc) or where a GPU does answer (there kernels/run_all.sh is
 * the test). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch_dir.h"
#include "shell_run.h"

static const char *const kernels[] = {"bandwidth", "gemm_sweep", "gemv", "decode_attention", "launch"};

static void kernel_path(const char *name, char *buf, size_t n)
{
    built_program("kernels", name, buf, n);
    if (system("nvidia-smi -L >/dev/null 2>&1") == 0)
        cr_skip_test("a GPU answers here: kernels/run_all.sh measures instead");
}

Test(kernels, no_device_prints_skip_and_exits_77, .timeout = 60)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        char bin[512], cmd[1100], out[4096];
        kernel_path(kernels[i], bin, sizeof bin);
        snprintf(cmd, sizeof cmd, "%s --out /tmp 2>&1", bin);
        int rc = shell_run(cmd, out, sizeof out);
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
        cr_assert_eq(shell_run(cmd, out, sizeof out), 2, "%s: %s", kernels[i], out);
        cr_assert(strstr(out, "'--bogus'") != NULL, "%s: %s", kernels[i], out);
    }
}

Test(kernels, a_version_that_does_not_exist_exits_2, .timeout = 60)
{
    char bin[512], cmd[1100], out[4096];
    kernel_path("gemv", bin, sizeof bin);
    /* gemv has versions 1 to 6 */
    snprintf(cmd, sizeof cmd, "%s 7 2>&1", bin);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "no version 7") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "%s 6 --out /tmp 2>&1", bin);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 77, "version 6 is accepted, then the gate skips: %s", out);
}

/* ------------------------------------------------------------ the runner's dry run */
/* each test of the runner gets a fresh directory to run it from */
TestSuite(run_all, .init = scratch_suite_make, .fini = scratch_suite_remove);

/* The runner and the build directory as absolute paths. */
static void runner_paths(char *runner, size_t rn, char *build, size_t bn)
{
    char bin[512];
    kernel_path("gemv", bin, sizeof bin);
    const char *src = getenv("NB_SRC"), *b = getenv("NB_BUILD");
    char cwd[512];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(runner, rn, "%.512s/kernels/run_all.sh", src ? src : cwd);
    if (b && b[0] == '/')
        snprintf(build, bn, "%.512s", b);
    else
        snprintf(build, bn, "%.256s/%.256s", cwd, b ? b : "build");
}

static int file_has(const char *path, const char *needle)
{
    static char text[1 << 16];
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    return strstr(text, needle) != NULL;
}

static const char *const layout[] = {
    "set/MANIFEST.txt",      "set/provenance.txt",     "set/targets.txt",       "set/build.log",
    "set/nvidia-smi-before.txt", "set/nvidia-smi-after.txt", "set/clocks.tsv", "set/logs/bandwidth.log",
    "set/logs/launch.log",   "set/logs/gemm_sweep.log", "set/logs/gemv.log",     "set/logs/decode_attention.log",
};

Test(run_all, dry_run_packs_one_archive_with_the_full_layout, .timeout = 300)
{
    char runner[1024], build[1024], cmd[4096], out[8192], path[1200];
    runner_paths(runner, sizeof runner, build, sizeof build);
    /* a relative OUTDIR, from a directory that is not the repository's */
    snprintf(cmd, sizeof cmd, "cd '%s' && NB_REVISION=rev-under-test '%s' --dry-run rel/out '%s' 2>&1", scratch_dir,
             runner, build);
    int rc = shell_run(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "dry run exited %d: %s", rc, out);
    snprintf(path, sizeof path, "%s/rel/out/kernels-set.tar.gz", scratch_dir);
    cr_assert_eq(access(path, R_OK), 0, "no archive at %s: %s", path, out);
    /* the archive holds the layout */
    char list[8192];
    snprintf(cmd, sizeof cmd, "tar -tzf '%s'", path);
    cr_assert_eq(shell_run(cmd, list, sizeof list), 0);
    for (size_t i = 0; i < sizeof layout / sizeof layout[0]; i++)
        cr_assert(strstr(list, layout[i]) != NULL, "archive lacks %s:\n%s", layout[i], list);
    /* unpacked, it says what happened */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/x' && tar -xzf '%s' -C '%s/x'", scratch_dir, path, scratch_dir);
    cr_assert_eq(shell_run(cmd, list, sizeof list), 0);
    snprintf(path, sizeof path, "%s/x/set/targets.txt", scratch_dir);
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        char line[128];
        snprintf(line, sizeof line, "NOT MEASURED: %s: SKIP: ", kernels[i]);
        cr_assert(file_has(path, line), "targets.txt lacks '%s'", line);
    }
    snprintf(path, sizeof path, "%s/x/set/provenance.txt", scratch_dir);
    cr_assert(file_has(path, "revision: rev-under-test"));
    cr_assert(file_has(path, "dry_run: yes"));
    cr_assert(file_has(path, "quick: no"));
    cr_assert(file_has(path, "nvcc: "));
    cr_assert(file_has(path, "not_built: none"));
    snprintf(path, sizeof path, "%s/x/set/clocks.tsv", scratch_dir);
    cr_assert(file_has(path, "\ndecode_attention\t"), "no clocks row after decode_attention");
}

Test(run_all, names_programs_that_were_not_built, .timeout = 120)
{
    char runner[1024], build[1024], cmd[4096], out[8192], path[1200];
    runner_paths(runner, sizeof runner, build, sizeof build);
    /* a build folder holding every kernel but gemv */
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/b/kernels' && for k in bandwidth launch gemm_sweep decode_attention; do "
             "cp '%s/kernels/'$k '%s/b/kernels/' || exit 1; done",
             scratch_dir, build, scratch_dir);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' --dry-run --no-build --quick out b 2>&1", scratch_dir, runner);
    int rc = shell_run(cmd, out, sizeof out);
    cr_assert_eq(rc, 1, "a missing program must fail the dry run (exit %d): %s", rc, out);
    snprintf(path, sizeof path, "%s/out/set/targets.txt", scratch_dir);
    cr_assert(file_has(path, "NOT MEASURED: gemv: not built"));
    cr_assert(file_has(path, "NOT MEASURED: quick-bandwidth: SKIP: "), "the others still ran");
    snprintf(path, sizeof path, "%s/out/set/provenance.txt", scratch_dir);
    cr_assert(file_has(path, "not_built: gemv"));
    cr_assert(file_has(path, "quick: yes"));
    snprintf(path, sizeof path, "%s/out/kernels-set.tar.gz", scratch_dir);
    cr_assert_eq(access(path, R_OK), 0, "the archive is written even so");
}

Test(run_all, a_spent_deadline_stops_every_program_with_a_reason, .timeout = 120)
{
    char runner[1024], build[1024], cmd[4096], out[8192], path[1200];
    runner_paths(runner, sizeof runner, build, sizeof build);
    snprintf(cmd, sizeof cmd, "cd '%s' && NB_DEADLINE_S=0 '%s' --dry-run --no-build out '%s' 2>&1", scratch_dir, runner,
             build);
    int rc = shell_run(cmd, out, sizeof out);
    cr_assert_neq(rc, 0, "%s", out);
    snprintf(path, sizeof path, "%s/out/set/targets.txt", scratch_dir);
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        char line[160];
        snprintf(line, sizeof line, "NOT MEASURED: %s: the global deadline was reached", kernels[i]);
        cr_assert(file_has(path, line), "targets.txt lacks '%s'", line);
    }
}

Test(run_all, bad_flag_exits_2, .timeout = 30)
{
    char runner[1024], build[1024], cmd[2200], out[4096];
    runner_paths(runner, sizeof runner, build, sizeof build);
    snprintf(cmd, sizeof cmd, "'%s' --bogus /tmp/x 2>&1", runner);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "'--bogus'") != NULL, "%s", out);
}

Test(kernels, sass_has_16_byte_loads_and_no_local_memory, .timeout = 120)
{
    /* kernels/check_sass.sh reads the sm_90 machine code: exit 77 where no
     * cuobjdump is installed (it ships with the CUDA toolkit's full
     * install, not with every nvcc). */
    char bin[512], cmd[1400], out[16384];
    kernel_path("gemv", bin, sizeof bin);
    const char *src = getenv("NB_SRC"), *b = getenv("NB_BUILD");
    snprintf(cmd, sizeof cmd, "'%s/kernels/check_sass.sh' '%s' 2>&1", src ? src : ".", b ? b : "build");
    int rc = shell_run(cmd, out, sizeof out);
    if (rc == 77)
        cr_skip_test("no cuobjdump here: %s", out);
    cr_assert_eq(rc, 0, "%s", out);
}
