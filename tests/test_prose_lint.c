/* tools/prose_lint.py, which make test runs over the built chapters: it
 * names file:line and the kind of each machine-written sentence and exits
 * 1; a clean chapter exits 0.  The fixture tests/prose_lint_fixture/dirty.md
 * has one of each kind at a line counted by hand (its code block holds the
 * same patterns, which must not count); clean.md says the same things as a
 * person would, with a numbered list, a price in dollars and a caption that
 * names its panels by what they show. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell_run.h"

#define OUT_MAX 8192

static int lint(const char *fixture, char *out, size_t n)
{
    const char *src = getenv("NB_SRC");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && python3 tools/prose_lint.py tests/prose_lint_fixture/%s",
             src && *src ? src : ".", fixture);
    return shell_run(cmd, out, n);
}

static int count(const char *out, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(out, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

Test(prose_lint, each_pattern_is_named_with_its_line)
{
    char out[OUT_MAX];
    cr_assert_eq(lint("dirty.md", out, sizeof out), 1, "%s", out);
    static const char *want[] = {
        "dirty.md:3: zero-run: 0% at batch 1;",              /* the run starts on line 3, ends on 4 */
        "dirty.md:6: echo: TP 4 (TP 4 on the roofline)",     /* over two lines, reported at its start */
        "dirty.md:9: echo: 1 and 1",
        "dirty.md:12: price: 2.50 per GPU-hour",            /* $0.137 on the next line has its currency */
        "dirty.md:16: list-start: 52.",                      /* a continuation line, not an item */
        "dirty.md:18: all-spent: 100% is spent",
        "dirty.md:20: panel-side: (left)",                  /* a caption naming both sides: two */
        "dirty.md:20: panel-side: (right)",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(strstr(out, want[i]) != NULL, "no \"%s\" in:\n%s", want[i], out);
    /* eight findings (the caption names two sides), none from the code block at the end */
    cr_assert_eq(count(out, "dirty.md:"), 8, "%s", out);
    cr_assert(strstr(out, "8 machine-written sentences") != NULL, "%s", out);
}

Test(prose_lint, a_clean_chapter_passes)
{
    char out[OUT_MAX];
    cr_assert_eq(lint("clean.md", out, sizeof out), 0, "%s", out);
    cr_assert_eq(out[0], '\0', "a clean chapter prints nothing:\n%s", out);
}

Test(prose_lint, a_missing_file_is_exit_2)
{
    char out[OUT_MAX];
    cr_assert_eq(lint("no-such-chapter.md", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "no-such-chapter.md") != NULL, "%s", out);
}
