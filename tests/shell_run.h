/* Running a shell command line from a suite: what it prints, and how it
 * exited; and finding a program the build made.  Include it after
 * Criterion.
 *
 *   char out[8192];
 *   int rc = shell_run("tool --flag", out, sizeof out);
 *   rc = shell_run_built("bin/grade", "grade", "--batch < 'in.jsonl'", out, sizeof out);
 *
 * The command runs as "( cmd ) 2>&1": out gets its stdout and stderr
 * together, and a redirection inside the command still wins.  All of its
 * output is read, so a command that prints more than out holds neither
 * blocks on a full pipe nor dies of SIGPIPE: the first n - 1 bytes are
 * kept, NUL-terminated, the rest dropped. */
#ifndef NAPKIN_TEST_SHELL_RUN_H
#define NAPKIN_TEST_SHELL_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The command's exit status, or -1 when it did not exit (a signal). */
__attribute__((unused)) static int shell_run(const char *cmd, char *out, size_t n)
{
    size_t len = strlen(cmd) + sizeof "(  ) 2>&1";
    char *full = malloc(len);
    cr_assert_not_null(full);
    snprintf(full, len, "( %s ) 2>&1", cmd);
    FILE *p = popen(full, "r");
    free(full);
    cr_assert_not_null(p, "cannot run %s", cmd);
    size_t got = fread(out, 1, n - 1, p);
    out[got] = '\0';
    char rest[4096];
    while (fread(rest, 1, sizeof rest, p) > 0) {
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A program the build made: $NB_BUILD/dir/name (build/ without NB_BUILD)
 * in buf, returned; the test is skipped, saying so, when it is not built
 * (the kernels need nvcc). */
__attribute__((unused)) static const char *built_program(const char *dir, const char *name, char *buf, size_t n)
{
    const char *b = getenv("NB_BUILD");
    snprintf(buf, n, "%s/%s/%s", b ? b : "build", dir, name);
    if (access(buf, X_OK) != 0)
        cr_skip_test("%s is not built (make builds it; the kernels need nvcc)", buf);
    return buf;
}

/* The program the build made (built_program: skipped when it is not built)
 * run with args, the rest of its shell command line (the caller quotes
 * what needs it): its exit status and output as shell_run's. */
__attribute__((unused)) static int shell_run_built(const char *dir, const char *name, const char *args, char *out,
                                                   size_t n)
{
    char prog[1024];
    built_program(dir, name, prog, sizeof prog);
    size_t len = strlen(prog) + strlen(args) + sizeof "'' ";
    char *cmd = malloc(len);
    cr_assert_not_null(cmd);
    snprintf(cmd, len, "'%s' %s", prog, args);
    int rc = shell_run(cmd, out, n);
    free(cmd);
    return rc;
}

#endif
