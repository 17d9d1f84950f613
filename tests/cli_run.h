/* Running the napkin command as a reader does, for the CLI suites: `run`
 * folds stderr into the output and returns the exit status; `tsv_value`
 * reads one "name<TAB>value<TAB>unit" line of --format tsv output.  The
 * command runs from the source tree (NB_SRC) when it is set, so relative
 * paths to fixtures work. */
#ifndef NAPKIN_TEST_CLI_RUN_H
#define NAPKIN_TEST_CLI_RUN_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell_run.h"

#define OUT_MAX 65536

__attribute__((unused)) static int run(const char *args, char *out, size_t n)
{
    const char *bin = getenv("NAPKIN_BIN"), *src = getenv("NB_SRC");
    cr_assert(bin != NULL, "NAPKIN_BIN is not set");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s", src && *src ? src : ".", bin, args);
    return shell_run(cmd, out, n);
}

__attribute__((unused)) static double tsv_value(const char *out, const char *name)
{
    size_t len = strlen(name);
    for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, name, len) == 0 && line[len] == '\t')
            return strtod(line + len + 1, NULL);
    cr_assert_fail("no value %s in output:\n%s", name, out);
    return NAN;
}

#endif
