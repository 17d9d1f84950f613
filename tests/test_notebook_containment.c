/* Notebook cells cannot escape the build (tools/notebook.lua through
 * tools/run_bounded.sh and tools/nb_contain.c): a cell that floods its
 * output is stopped at NB_OUTPUT_MAX with a message and leaves no file; a
 * timed-out cell leaves no file; a cell whose child calls setsid() and
 * forks again leaves no process running; a cell or program that writes a
 * file past NB_FILE_MAX is stopped there, with a message naming it.  Fixtures are in
 * tests/filter/chapters/; the line numbers in messages are the fences'. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include_flags.h"
#include "test_text.h"

static char *scratch, *out_path, *err_path;

/* A scratch build directory, the environment the Makefile would give. */
static void setup(const char *name)
{
    static char *build;
    if (!build)
        build = fmt("%s", need_env("NB_BUILD"));
    const char *src = need_env("NB_SRC");
    const char *contain = getenv("NB_CONTAIN");
    cr_assert(contain && access(contain, X_OK) == 0, "NB_CONTAIN (the built tools/nb_contain.c) is not set");
    /* NB_SCRATCH: a root of its own for each build of this suite (make runs
     * the plain and the sanitized one side by side); the build by default. */
    const char *root = getenv("NB_SCRATCH");
    scratch = fmt("%s/test-notebook-containment/%s", root && *root ? root : build, name);
    cr_assert_eq(system(fmt("rm -rf '%s' && mkdir -p '%s'", scratch, scratch)), 0);
    setenv("NB_BUILD", scratch, 1);
    const char *cc = getenv("NB_CC");
    setenv("NB_CC", cc && *cc ? cc : "cc", 1);
    setenv("NB_CFLAGS", fmt("%s -D_POSIX_C_SOURCE=200809L -std=c11 -O1", napkin_include_flags(src)), 1);
    setenv("NB_LIB", fmt("%s/lib/libnapkin.a", build), 1);
    setenv("NB_LDLIBS", "-lm -lpthread", 1);
    setenv("NB_BIN", fmt("%s/tests/filter/bin", src), 1);
    setenv("NB_VALUE_FILES", "", 1);
    setenv("NB_TIMEOUT", "30", 1);
    out_path = fmt("%s/out.md", scratch);
    err_path = fmt("%s/err.txt", scratch);
}

static int filter(const char *fixture, char **out, char **err)
{
    const char *src = need_env("NB_SRC");
    int rc = system(fmt("cd '%s/tests/filter' && pandoc -f markdown -t markdown --wrap=none "
                        "--lua-filter '%s/tools/notebook.lua' '%s' > '%s' 2> '%s'",
                        src, src, fixture, out_path, err_path));
    *out = slurp(out_path);
    *err = slurp(err_path);
    cr_assert(*out && *err);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Files under the scratch build's cells/ directory, and their bytes. */
static int cell_files(long *bytes)
{
    *bytes = 0;
    DIR *d = opendir(fmt("%s/cells", scratch));
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        struct stat st;
        if (stat(fmt("%s/cells/%s", scratch, e->d_name), &st) == 0)
            *bytes += (long)st.st_size;
        n++;
    }
    closedir(d);
    return n;
}

/* Gone, or at most a zombie waiting for its reaper, within a second. */
static int alive(int pid)
{
    for (int i = 0; i < 50; i++) {
        char stat[256] = "";
        FILE *f = fopen(fmt("/proc/%d/stat", pid), "r");
        if (!f)
            return 0;
        size_t got = fread(stat, 1, sizeof stat - 1, f);
        stat[got] = '\0';
        fclose(f);
        const char *rp = strrchr(stat, ')');
        if (rp && rp[1] == ' ' && rp[2] == 'Z')
            return 0;
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    return 1;
}

Test(notebook_containment, a_flooding_cell_is_capped_and_leaves_no_file, .timeout = 60)
{
    setup("flood");
    setenv("NB_OUTPUT_MAX", "1000000", 1);
    char *out, *err;
    int rc = filter("chapters/90-flood.md", &out, &err);
    unsetenv("NB_OUTPUT_MAX");
    cr_expect_neq(rc, 0);
    cr_expect(strstr(err, "chapters/90-flood.md:5: run cell wrote more than 1000000 bytes of output (NB_OUTPUT_MAX)") !=
                  NULL,
              "%s", err);
    long bytes;
    int n = cell_files(&bytes);
    cr_expect_eq(n, 0, "%d files (%ld bytes) left in %s/cells", n, bytes, scratch);
}

Test(notebook_containment, a_timed_out_cell_leaves_no_file, .timeout = 60)
{
    setup("timeout");
    setenv("NB_TIMEOUT", "1", 1);
    char *out, *err;
    int rc = filter("chapters/90-timeout.md", &out, &err);
    cr_expect_neq(rc, 0);
    cr_expect(strstr(err, "chapters/90-timeout.md:5: run cell timed out after 1 s") != NULL, "%s", err);
    long bytes;
    int n = cell_files(&bytes);
    cr_expect_eq(n, 0, "%d files (%ld bytes) left in %s/cells", n, bytes, scratch);
}

Test(notebook_containment, a_child_that_calls_setsid_does_not_outlive_the_cell, .timeout = 60)
{
    setup("setsid");
    char *out, *err;
    int rc = filter("chapters/90-setsid.md", &out, &err);
    cr_assert_eq(rc, 0, "filter failed: %s", err);
    const char *at = strstr(out, "\nchild "); /* the output line, not the printf in the source */
    cr_assert_not_null(at, "%s", out);
    int child = 0, grandchild = 0;
    cr_assert_eq(sscanf(at, "\nchild %d grandchild %d", &child, &grandchild), 2, "%s", at);
    cr_assert_gt(child, 1);
    cr_assert_gt(grandchild, 1);
    int c_alive = alive(child), g_alive = alive(grandchild);
    if (c_alive)
        kill(child, 9); /* do not leave them behind for the rest of the run either */
    if (g_alive)
        kill(grandchild, 9);
    cr_expect(!c_alive, "the cell's setsid child %d outlived it", child);
    cr_expect(!g_alive, "the cell's grandchild %d outlived it", grandchild);
}

/* A cell that writes 8 MiB to a file under NB_FILE_MAX = 1 MB: stopped at
 * the cap, and the message names the chapter and the cell's line. */
Test(notebook_containment, a_cell_that_fills_a_file_is_stopped, .timeout = 60)
{
    setup("fill");
    setenv("NB_FILE_MAX", "1000000", 1);
    char *out, *err;
    int rc = filter("chapters/90-fill-disk.md", &out, &err);
    unsetenv("NB_FILE_MAX");
    cr_expect_neq(rc, 0, "the cell wrote 8 MiB past a 1 MB cap:\n%s", out);
    cr_expect(strstr(err, "chapters/90-fill-disk.md:5: run cell wrote a file of 1000000 bytes, the most a cell may "
                          "write (NB_FILE_MAX): stopped") != NULL,
              "%s", err);
}

/* The size of a file, or -1. */
static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* What a chapter program or a console cell runs through: nb_contain itself,
 * and run_bounded.sh without it.  A shell that fills a file with 200 MB
 * (the default cap is 64 MiB = 67,108,864 bytes) is stopped there. */
Test(notebook_containment, every_file_a_command_writes_is_capped, .timeout = 60)
{
    setup("fill-direct");
    const char *contain = getenv("NB_CONTAIN"), *src = need_env("NB_SRC");
    const char *f = fmt("%s/f", scratch);
    int st = system(fmt("cd '%s' && NB_FILE_MAX= '%s' 60 sh -c 'head -c 200000000 /dev/zero > f' 2> err.txt", scratch,
                        contain));
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 122, "exit status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    cr_expect_eq(file_size(f), 67108864L);
    char *err = slurp(err_path);
    cr_expect(err && strstr(err, "nb_contain: sh: a file it wrote reached 67108864 bytes (NB_FILE_MAX): stopped"),
              "%s", err ? err : "(no stderr)");
    unlink(f);

    /* a cap of its own, and a program that is not a shell */
    st = system(fmt("cd '%s' && NB_FILE_MAX=1000000 '%s' 60 dd if=/dev/zero of=f bs=65536 count=64 2> err.txt", scratch,
                    contain));
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 122, "exit status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    cr_expect_eq(file_size(f), 1000000L);
    err = slurp(err_path);
    cr_expect(err && strstr(err, "nb_contain: dd: a file it wrote reached 1000000 bytes (NB_FILE_MAX)"), "%s",
              err ? err : "(no stderr)");
    unlink(f);

    /* run_bounded.sh without nb_contain: ulimit -f caps it all the same */
    st = system(fmt("cd '%s' && NB_CONTAIN= NB_FILE_MAX=1000000 '%s/tools/run_bounded.sh' 60 dd if=/dev/zero of=f "
                    "bs=65536 count=64 2> err.txt",
                    scratch, src));
    cr_expect(!(WIFEXITED(st) && WEXITSTATUS(st) == 0), "dd wrote 4 MiB past a 1 MB cap");
    /* ulimit counts blocks of 512 bytes: 1,000,000 / 512 = 1953 whole blocks, 999,936 bytes */
    cr_expect_eq(file_size(f), 999936L);
    unlink(f);
}
