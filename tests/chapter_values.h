/* The values a chapter program records with nb_value, read back by running
 * the program itself ($NB_BUILD/bin/chNN/name, from $NB_SRC, with NB_VALUES
 * and NB_DATA pointed at a scratch directory).  A chapter test checks these
 * against hand arithmetic, so a number the prose prints cannot drift from
 * the derivation even when the library beneath it is right. */
#ifndef NAPKIN_TEST_CHAPTER_VALUES_H
#define NAPKIN_TEST_CHAPTER_VALUES_H

#include "test_text.h"

#include <stdlib.h>
#include <string.h>

/* The text of value `name` that program `prog` ("ch12/activations") records;
 * fails the test when the program fails or does not record it. */
static inline const char *chapter_value_text(const char *prog, const char *name)
{
    const char *build = need_env("NB_BUILD"), *src = need_env("NB_SRC");
    char dir[] = "/tmp/chapter_values.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *values = fmt("%s/values.tsv", dir);
    char *cmd = fmt("cd '%s' && NB_VALUES='%s' NB_DATA='%s' '%s/bin/%s' >/dev/null", src, values, dir, build, prog);
    cr_assert_eq(system(cmd), 0, "%s failed", cmd);
    char *text = slurp(values);
    const char *found = NULL;
    size_t n = strlen(name);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, name, n) == 0 && line[n] == '\t')
            found = line + n + 1;
    cr_assert_not_null(found, "%s records no value '%s'", prog, name);
    cr_assert_eq(system(fmt("rm -rf '%s'", dir)), 0);
    return found;
}

/* The same value as a number. */
static inline double chapter_value(const char *prog, const char *name)
{
    const char *t = chapter_value_text(prog, name);
    char *end;
    double v = strtod(t, &end);
    cr_assert(end != t && *end == '\0', "%s: value '%s' = '%s' is not a number", prog, name, t);
    return v;
}

#endif
