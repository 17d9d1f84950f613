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
#include <sys/stat.h>
#include <unistd.h>

/* The values file of `prog`, run once per build of it: a copy kept under
 * $NB_BUILD/tests/chapter-values/ is used while it is newer than the program
 * (each test runs in its own process, and some programs take seconds). */
static inline char *chapter_values_of(const char *prog)
{
    const char *build = need_env("NB_BUILD"), *src = need_env("NB_SRC");
    char *bin = fmt("%s/bin/%s", build, prog), *name = fmt("%s", prog);
    for (char *p = name; *p; p++)
        if (*p == '/')
            *p = '_';
    char *cache = fmt("%s/tests/chapter-values/%s.tsv", build, name);
    struct stat sb, sc;
    cr_assert_eq(stat(bin, &sb), 0, "%s is missing: the Makefile builds a chapter's programs before its suite", bin);
    if (stat(cache, &sc) == 0 && sc.st_mtime > sb.st_mtime)
        return slurp(cache);
    char dir[] = "/tmp/chapter_values.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *values = fmt("%s/values.tsv", dir);
    char *cmd = fmt("cd '%s' && NB_VALUES='%s' NB_DATA='%s' '%s' >/dev/null", src, values, dir, bin);
    cr_assert_eq(system(cmd), 0, "%s failed", cmd);
    char *text = slurp(values);
    cr_assert_not_null(text, "%s wrote no values", prog);
    /* keep a copy for the next test: written whole, then renamed into place */
    char *tmp = fmt("%s.%ld", cache, (long)getpid());
    if (system(fmt("mkdir -p '%s/tests/chapter-values' && cp '%s' '%s' && mv '%s' '%s'", build, values, tmp, tmp,
                   cache)) != 0)
        fprintf(stderr, "chapter_values: could not keep %s (runs again next time)\n", cache);
    cr_assert_eq(system(fmt("rm -rf '%s'", dir)), 0);
    return text;
}

/* The text of value `name` that program `prog` ("ch12/activations") records;
 * fails the test when the program fails or does not record it. */
static inline const char *chapter_value_text(const char *prog, const char *name)
{
    char *text = chapter_values_of(prog);
    const char *found = NULL;
    size_t n = strlen(name);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, name, n) == 0 && line[n] == '\t')
            found = line + n + 1;
    cr_assert_not_null(found, "%s records no value '%s'", prog, name);
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
