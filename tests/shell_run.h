/* Running a shell command line from a suite: what it prints, and how it
 * exited.  Include it after Criterion.
 *
 *   char out[8192];
 *   int rc = shell_run("tool --flag", out, sizeof out);
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

#endif
