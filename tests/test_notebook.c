/* The notebook filter (tools/notebook.lua) on the fixtures in tests/filter/:
 * good fixtures expand to the expected text, bad ones stop with the right
 * "file:line: message", and run cells are cached.
 *
 * The fixtures are a small repository of their own: tests/filter/chapters,
 * code, figures, values, bin.  pandoc runs with tests/filter as its working
 * directory, so messages name "chapters/90-....md:LINE". Every expected line
 * number below is counted by hand in the fixture file it names. */
#include <criterion/criterion.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include_flags.h"
#include "test_text.h"

typedef struct {
    int status;   /* pandoc's exit status */
    char *out;    /* expanded markdown */
    char *err;    /* messages */
} filter_run;

static void spew(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* A scratch build directory per test name, with the rendered stand-in of
 * figures/42-curve.gp the good fixture needs.  Environment as the Makefile
 * would set it, with include paths made absolute. */
static void setup_env(const char *scratch_name)
{
    /* Copies: setenv below may free what getenv returned; NB_BUILD is
     * replaced by the scratch directory, so keep the first one. */
    static char *build;
    if (!build)
        build = fmt("%s", need_env("NB_BUILD"));
    char *src = fmt("%s", need_env("NB_SRC"));

    /* NB_SCRATCH: a root of its own for each build of this suite (make runs
     * the plain and the sanitized one side by side); the build by default. */
    const char *root = getenv("NB_SCRATCH");
    char *scratch = fmt("%s/test-notebook/%s", root && *root ? root : build, scratch_name);
    cr_assert_eq(system(fmt("rm -rf '%s' && mkdir -p '%s/figures'", scratch, scratch)), 0);
    setenv("NB_BUILD", scratch, 1);
    spew(fmt("%s/figures/42-curve.svg", scratch),
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"8\" height=\"8\"></svg>\n");

    /* The Makefile exports NB_CC; keep it, or use the system compiler. */
    const char *cc = getenv("NB_CC");
    setenv("NB_CC", cc && *cc ? cc : "cc", 1);
    setenv("NB_CFLAGS",
           fmt("%s -D_POSIX_C_SOURCE=200809L -std=c11 -Wall -Wextra -Werror -O1", napkin_include_flags(src)), 1);
    setenv("NB_LIB", fmt("%s/lib/libnapkin.a", build), 1);
    setenv("NB_LDLIBS", "-lm -lpthread", 1);
    setenv("NB_BIN", fmt("%s/tests/filter/bin", src), 1);
    setenv("NB_VALUE_FILES", "values/42-fixture.tsv", 1);
    setenv("NB_FIGURE_EXT", "svg", 1);
    setenv("NB_TIMEOUT", "30", 1);
}

/* Expand one fixture file (relative to tests/filter). */
static filter_run run_filter(const char *fixture)
{
    const char *src = need_env("NB_SRC");
    const char *scratch = need_env("NB_BUILD");
    char *out = fmt("%s/out.md", scratch);
    char *err = fmt("%s/err.txt", scratch);
    int rc = system(fmt("cd '%s/tests/filter' && pandoc -f markdown -t markdown --wrap=none "
                        "--lua-filter '%s/tools/notebook.lua' '%s' > '%s' 2> '%s'",
                        src, src, fixture, out, err));
    filter_run r = { .status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, .out = slurp(out), .err = slurp(err) };
    cr_assert(r.out && r.err, "the shell did not create %s and %s", out, err);
    return r;
}

/* The texts are slurp's, freed at exit (test_text.h); nothing to do now. */
static void free_run(filter_run *r)
{
    r->out = r->err = NULL;
}

#define assert_contains(hay, needle)                                                    \
    cr_expect(strstr((hay), (needle)) != NULL, "expected to find:\n%s\n--- in:\n%s", \
              (needle), (hay))
#define assert_lacks(hay, needle)                                                          \
    cr_expect(strstr((hay), (needle)) == NULL, "expected NOT to find:\n%s\n--- in:\n%s", \
              (needle), (hay))

/* A line holding `first`, then only blanks or '|', then `last` at its end:
 * a table row in whichever table syntax the writer picked. */
static int has_row(const char *text, const char *first, const char *last)
{
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *p = line;
        while (p < line + len && (*p == ' ' || *p == '|'))
            p++;
        size_t nf = strlen(first), nl = strlen(last);
        if ((size_t)(line + len - p) > nf + nl && strncmp(p, first, nf) == 0) {
            const char *q = p + nf;
            const char *tail = line + len;
            while (tail > q && (tail[-1] == ' ' || tail[-1] == '|'))
                tail--;
            int gap_ok = 1;
            for (const char *g = q; g < tail - nl; g++)
                gap_ok &= (*g == ' ' || *g == '|');
            if (gap_ok && (size_t)(tail - q) >= nl && strncmp(tail - nl, last, nl) == 0)
                return 1;
        }
        if (!end)
            break;
        line = end + 1;
    }
    return 0;
}

/* ------------------------------------------------------------ good fixture */

Test(notebook_good, expands_every_kind_of_cell)
{
    setup_env("good");
    filter_run r = run_filter("chapters/42-good.md");
    cr_assert_eq(r.status, 0, "filter failed: %s", r.err);

    /* Excerpt "square": lines 5-8 of code/snippets.c, markers dropped. */
    /* "///< ..." on the first line is a doc comment, kept. */
    assert_contains(r.out, "static double square(double x) ///< not a marker: a doc comment\n{\n    return x * x;\n}\n");
    /* Excerpt "indented": its 4-space indent inside main() is removed. */
    assert_contains(r.out, "``` c\nfor (int i = 0; i < 3; i++)\n    printf(\"%g\\n\", square(i));\n```");
    /* Excerpt "outer" contains the nested snippet "inner", markers dropped. */
    assert_contains(r.out, "int a = 1;\nint b = 2;\nprintf(\"%d\\n\", a + b);");
    /* Excerpt from a gnuplot file, marker behind a "#" comment leader. */
    assert_contains(r.out, "set xlabel \"batch\"\nset ylabel \"tokens/s\"");
    assert_lacks(r.out, "//>");
    const char *closers[] = { "//< square", "//< indented", "//< outer", "//< inner", "//< axes" };
    for (size_t i = 0; i < sizeof closers / sizeof closers[0]; i++)
        assert_lacks(r.out, closers[i]);
    /* The excerpt names its file. */
    assert_contains(r.out, "`code/snippets.c`");

    /* Run cell: 6 * 7 = 42 printed, and source shown. */
    assert_contains(r.out, "``` output\nsix times seven is 42\n```");
    assert_contains(r.out, "nb_value(\"fx_cell\", \"%d\", 6 * 7);");

    /* Console cell: command, then the fixture tool's echo of its arguments;
     * the "# exit 3" line is expected to fail and shows its message. */
    assert_contains(r.out, "$ fixture-tool hello world\nargs: hello world\n");
    assert_contains(r.out, "$ fixture-tool --fail  # exit 3\nfixture-tool: asked to fail");
    /* A program one directory down in NB_BIN, shown as written. */
    assert_contains(r.out, "$ sub/nested-tool one\nnested: one");

    /* Values: 1.25 from values/42-fixture.tsv (above), 42 = 6 * 7 from the
     * run cell (used above the cell too), in text, math, code, link, table,
     * caption. */
    assert_contains(r.out, "Intro with a value 1.25 and one recorded further down: 42.");
    assert_contains(r.out, "Math $b = 42$ and code `3 GB/s`");
    assert_contains(r.out, "[link 42](#ch42-excerpts)");
    cr_expect(has_row(r.out, "cell", "42"), "table row 'cell | 42' missing:\n%s", r.out);
    assert_lacks(r.out, "{{");

    /* Figure: first figure of chapter 42; rendered path without extension. */
    assert_contains(r.out, "![Figure 42.1: Curve for 42 requests](");
    assert_contains(r.out, "/test-notebook/good/figures/42-curve){#fig:curve}");
    assert_contains(r.out, "As [Figure 42.1](#fig:curve) shows.");

    /* Numbers from the file name: chapter 42, sections 42.1, 42.2, 42.2.1. */
    assert_contains(r.out, "# A fixture chapter {#ch42-a-fixture-chapter number=\"42\"}");
    assert_contains(r.out, "## Excerpts {#ch42-excerpts number=\"42.1\"}");
    assert_contains(r.out, "## Cells {#ch42-cells number=\"42.2\"}");
    assert_contains(r.out, "### Deeper {#ch42-deeper number=\"42.2.1\"}");
    free_run(&r);
}

Test(notebook_good, exercise_set_sits_under_its_chapter)
{
    setup_env("exercises");
    /* Exercise sets see the chapter's value files (not its run cells). */
    filter_run r = run_filter("exercises/42-good.md");
    cr_assert_eq(r.status, 0, "filter failed: %s", r.err);
    /* "# Exercises" becomes an unnumbered level-2 heading, problems level 3. */
    assert_contains(r.out, "## Exercises {#ex42-exercises .unnumbered}");
    assert_contains(r.out, "### Problem 1: a product {#ex42-problem-1-a-product .unnumbered}");
    /* 1.25 from values/42-fixture.tsv. */
    assert_contains(r.out, "The chapter's table says 1.25.");
    free_run(&r);
}

/* Numbering and anchors: tables "Table 44.1", "44.2" in order with anchors
 * table-44-1, table-44-2; the unlabelled figure gets figure-44-1; the
 * citations, both keys in tests/filter/references.bib, are left for citeproc. */
Test(notebook_good, numbers_tables_figures_and_keeps_known_citations)
{
    setup_env("numbering");
    setenv("NB_BIBLIOGRAPHY", "references.bib", 1);
    filter_run r = run_filter("chapters/44-numbering.md");
    unsetenv("NB_BIBLIOGRAPHY");
    cr_assert_eq(r.status, 0, "filter failed: %s", r.err);
    assert_contains(r.out, "[]{#table-44-1}Table 44.1: The first table.");
    assert_contains(r.out, "[]{#table-44-2}Table 44.2: The second table.");
    assert_contains(r.out, "![Figure 44.1: An unlabelled figure](");
    assert_contains(r.out, "/figures/42-curve){#figure-44-1}");
    assert_contains(r.out, "[@page1954]");
    assert_contains(r.out, "[@page1954; @leviathan2023]");
    free_run(&r);
}

/* Problems "**1. Title.**" and "**2.**" of set 44 become Exercise 44.1 and
 * 44.2 with anchors exercise-44-1, exercise-44-2; a bold paragraph without
 * a number is left alone; a solution links back to its problem. */
Test(notebook_good, numbers_exercises_and_links_solutions)
{
    setup_env("problems");
    filter_run r = run_filter("exercises/44-numbering.md");
    cr_assert_eq(r.status, 0, "filter failed: %s", r.err);
    assert_contains(r.out, "[]{#exercise-44-1}**Exercise 44.1. The first.** Text");
    assert_contains(r.out, "[]{#exercise-44-2}**Exercise 44.2.** A problem");
    assert_contains(r.out, "**Not a problem.** A bold");
    free_run(&r);
    r = run_filter("solutions/44-numbering.md");
    cr_assert_eq(r.status, 0, "filter failed: %s", r.err);
    assert_contains(r.out, "[]{#solution-44-1}**[Solution 44.1.](#exercise-44-1) The first.** Its answer.");
    free_run(&r);
}

/* ------------------------------------------------------------ bad fixtures */

static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* tests/filter/chapters/45-folds.md: "square" (4 lines, code/snippets.c
 * lines 5-8) plain and with fold="closed", "indented" (2 lines) with
 * fold="open", and a console cell of one command and one line of output
 * (2 lines) with fold="closed".  At the default limit of 15 lines only the
 * two closed cells fold, the excerpt's file name inside its fold; at a
 * limit of 3 the plain "square" folds too, and the open one still does not. */
Test(notebook_good, long_or_closed_cells_fold_and_open_ones_do_not)
{
    setup_env("folds");
    unsetenv("NB_FOLD_LINES");
    filter_run r = run_filter("chapters/45-folds.md");
    cr_assert_eq(r.status, 0, "filter failed: %s", r.err);
    cr_expect_eq(occurrences(r.out, "show the code (4 lines)"), 1, "%s", r.out);
    assert_contains(r.out, "<summary>show the code (4 lines)</summary>\n```\n`code/snippets.c`");
    assert_contains(r.out, "<summary>show the output (2 lines)</summary>");
    cr_expect_eq(occurrences(r.out, "<details class=\"fold\">"), 2, "%s", r.out);
    cr_expect_eq(occurrences(r.out, "</details>"), 2, "%s", r.out);
    assert_lacks(r.out, "fold=");
    free_run(&r);

    setenv("NB_FOLD_LINES", "3", 1);
    r = run_filter("chapters/45-folds.md");
    unsetenv("NB_FOLD_LINES");
    cr_assert_eq(r.status, 0, "filter failed: %s", r.err);
    cr_expect_eq(occurrences(r.out, "show the code (4 lines)"), 2, "%s", r.out);
    assert_lacks(r.out, "show the code (2 lines)");
    free_run(&r);
}

static void expect_failure(const char *scratch, const char *fixture, const char *message)
{
    setup_env(scratch);
    filter_run r = run_filter(fixture);
    cr_expect_neq(r.status, 0, "%s should fail", fixture);
    assert_contains(r.err, message);
    cr_expect_eq(strstr(r.err, "stack traceback"), NULL, "a clean message, not a Lua trace:\n%s", r.err);
    free_run(&r);
}

/* The excerpt fence is on line 5: a snippet is found by name, so a cell
 * that also names a file is refused (a moved file would break it). */
Test(notebook_bad, fold_is_open_or_closed)
{
    expect_failure("bad-fold", "chapters/90-bad-fold.md",
                   "chapters/90-bad-fold.md:3: fold=\"sideways\": a cell's fold is \"open\" or \"closed\"");
}

Test(notebook_bad, excerpt_names_a_file)
{
    expect_failure("excerpt-file", "chapters/90-excerpt-file.md",
                   "chapters/90-excerpt-file.md:5: an excerpt names its snippet alone");
}

/* Fence on line 3; "shared" opens in code/elsewhere.c and code/snippets.c
 * (sorted by path). */
Test(notebook_bad, snippet_in_two_files)
{
    expect_failure("two-files", "chapters/90-snippet-two-files.md",
                   "chapters/90-snippet-two-files.md:3: snippet 'shared' is opened in more than one file: "
                   "code/elsewhere.c, code/snippets.c");
}

/* The excerpt fence is on line 7. */
Test(notebook_bad, missing_snippet)
{
    expect_failure("missing-snippet", "chapters/90-missing-snippet.md",
                   "chapters/90-missing-snippet.md:7: snippet 'cube' not found in code/, kernels/, solutions/ or figures/");
}

/* Fence on line 3; code/snippets.c opens "twice" on lines 27 and 30. */
Test(notebook_bad, duplicate_snippet)
{
    expect_failure("duplicate-snippet", "chapters/90-duplicate-snippet.md",
                   "chapters/90-duplicate-snippet.md:3: snippet 'twice' defined twice in code/snippets.c "
                   "(lines 27 and 30)");
}

/* Fence on line 5; "unclosed" opens on line 34 of code/snippets.c. */
Test(notebook_bad, unclosed_snippet)
{
    expect_failure("unclosed-snippet", "chapters/90-unclosed-snippet.md",
                   "chapters/90-unclosed-snippet.md:5: snippet 'unclosed' opened at code/snippets.c:34 "
                   "is never closed");
}

/* Fence on line 3: the excerpt's body must come from the file. */
Test(notebook_bad, excerpt_with_body)
{
    expect_failure("excerpt-body", "chapters/90-excerpt-not-empty.md",
                   "chapters/90-excerpt-not-empty.md:3: excerpt cell must be empty");
}

/* Fence on line 5; the bad identifier is on cell line 3, chapter line 8. */
Test(notebook_bad, compile_error)
{
    expect_failure("compile-error", "chapters/90-compile-error.md",
                   "chapters/90-compile-error.md:5: run cell does not compile");
    expect_failure("compile-error", "chapters/90-compile-error.md",
                   "chapters/90-compile-error.md:8:12: error:");
}

/* Fence on line 3; the program returns 5 after a message on stderr. */
Test(notebook_bad, nonzero_exit)
{
    expect_failure("exit-status", "chapters/90-exit-status.md",
                   "chapters/90-exit-status.md:3: run cell exited with status 5:\nfixture: failing on purpose");
}

/* Fence on line 3; abort() raises SIGABRT, signal 6 on Linux. */
Test(notebook_bad, crash)
{
    expect_failure("crash", "chapters/90-crash.md", "chapters/90-crash.md:3: run cell was killed by signal 6");
}

/* Fence on line 5; the program sleeps 10 s, the limit is 1 s. */
Test(notebook_bad, time_out, .timeout = 20)
{
    setup_env("timeout");
    setenv("NB_TIMEOUT", "1", 1);
    filter_run r = run_filter("chapters/90-timeout.md");
    cr_expect_neq(r.status, 0);
    assert_contains(r.err, "chapters/90-timeout.md:5: run cell timed out after 1 s");
    free_run(&r);
}

/* Fence on line 5; the cell ignores TERM, so it is killed a second after
 * the 1 s limit instead of keeping the build waiting forever. */
Test(notebook_bad, ignores_term, .timeout = 20)
{
    setup_env("ignores-term");
    setenv("NB_TIMEOUT", "1", 1);
    setenv("NB_KILL_AFTER", "1", 1);
    filter_run r = run_filter("chapters/90-ignores-term.md");
    unsetenv("NB_KILL_AFTER");
    cr_expect_neq(r.status, 0);
    assert_contains(r.err, "chapters/90-ignores-term.md:5: run cell timed out after 1 s");
    free_run(&r);
}

/* The cell forks a child that would sleep a minute; when the cell returns,
 * the child is gone with it. */
Test(notebook_bad, leaves_no_child, .timeout = 20)
{
    setup_env("forks");
    filter_run r = run_filter("chapters/90-forks.md");
    cr_assert_eq(r.status, 0, "filter failed: %s", r.err);
    const char *at = strstr(r.out, "\nchild "); /* the output line, not the printf in the source */
    cr_assert_not_null(at, "%s", r.out);
    int pid = atoi(at + 7);
    cr_assert_gt(pid, 1);
    /* gone, or at most a zombie waiting for its reaper */
    char path[64], stat[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int alive = 1;
    for (int i = 0; i < 50 && alive; i++) {
        FILE *f = fopen(path, "r");
        if (!f) {
            alive = 0;
            break;
        }
        size_t got = fread(stat, 1, sizeof stat - 1, f);
        stat[got] = '\0';
        fclose(f);
        const char *close_paren = strrchr(stat, ')');
        if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z')
            alive = 0;
        else
            nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    cr_assert(!alive, "the cell's child %d outlived it: %s", pid, stat);
    free_run(&r);
}

/* "{{no_such_value}}" is on line 5. */
Test(notebook_bad, unknown_value)
{
    expect_failure("unknown-value", "chapters/90-unknown-value.md",
                   "chapters/90-unknown-value.md:5: unknown value 'no_such_value'");
}

/* "{{ fx_from_file }}" (spaces inside) on line 5 is a mistyped reference. */
Test(notebook_bad, malformed_value)
{
    expect_failure("malformed-value", "chapters/90-malformed-value.md",
                   "chapters/90-malformed-value.md:5: malformed value reference");
}

/* No "# Title" at all: reported at line 1. */
Test(notebook_bad, chapter_without_title)
{
    expect_failure("no-title", "chapters/90-no-title.md",
                   "chapters/90-no-title.md:1: a chapter starts with one level-1 heading");
}

/* values/42-fixture.tsv says fx_from_file is 1.25; the cell (fence line 3)
 * records 9.99 under the same name. */
Test(notebook_bad, value_defined_twice)
{
    expect_failure("value-conflict", "chapters/90-value-conflict.md",
                   "chapters/90-value-conflict.md:3: value 'fx_from_file' defined twice with different "
                   "values: '1.25' (values/42-fixture.tsv) and '9.99'");
}

/* The image is on line 5 and figures/90-absent.gp does not exist. */
Test(notebook_bad, missing_figure_script)
{
    expect_failure("missing-figure", "chapters/90-missing-figure.md",
                   "chapters/90-missing-figure.md:5: figure script figures/90-absent.gp not found");
}

/* The script exists; only an SVG stand-in was rendered, and the PDF is
 * asked for.  The image is on line 3. */
Test(notebook_bad, unrendered_figure)
{
    setup_env("unrendered");
    setenv("NB_FIGURE_EXT", "pdf", 1);
    filter_run r = run_filter("chapters/91-unrendered-figure.md");
    cr_expect_neq(r.status, 0);
    assert_contains(r.err, "chapters/91-unrendered-figure.md:3: figure figures/42-curve.gp was not rendered");
    assert_contains(r.err, "/figures/42-curve.pdf is missing");
    free_run(&r);
}

/* "@fig:nowhere" is on line 5. */
Test(notebook_bad, unknown_figure_label)
{
    expect_failure("unknown-label", "chapters/90-unknown-label.md",
                   "chapters/90-unknown-label.md:5: unknown figure label 'fig:nowhere'");
}

/* The second command (line 5) exits 3 without "# exit 3". */
/* "[@nosuch2099]" is on line 5; the bibliography has page1954 only and leviathan2023. */
Test(notebook_bad, unknown_citation)
{
    setenv("NB_BIBLIOGRAPHY", "references.bib", 1);
    expect_failure("unknown-citation", "chapters/90-unknown-citation.md",
                   "chapters/90-unknown-citation.md:5: unknown citation key 'nosuch2099': not in references.bib");
    unsetenv("NB_BIBLIOGRAPHY");
}

Test(notebook_bad, console_exit_status)
{
    expect_failure("console-exit", "chapters/90-console-exit.md",
                   "chapters/90-console-exit.md:5: console command exited with status 3 (expected 0)");
}

/* "rm" (line 4) is not one of the book's programs. */
Test(notebook_bad, console_foreign_program)
{
    expect_failure("console-program", "chapters/90-console-program.md",
                   "chapters/90-console-program.md:4: console command 'rm' is not a program in");
}

/* ------------------------------------------------------------ cache */

static int count_lines(const char *path)
{
    char *s = slurp(path);
    if (!s)
        return 0; /* never written */
    int n = 0;
    for (const char *p = s; *p; p++)
        n += *p == '\n';
    return n;
}

/* The probe cell appends a line to $NB_TEST_COUNTER each time it runs. */
Test(notebook_cache, second_expansion_reuses_the_cell)
{
    setup_env("cache");
    char *counter = fmt("%s/counter.txt", getenv("NB_BUILD"));
    setenv("NB_TEST_COUNTER", counter, 1);

    filter_run r = run_filter("chapters/43-cache.md");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_contains(r.out, "``` output\nprobe\n```");
    free_run(&r);
    cr_assert_eq(count_lines(counter), 1, "first expansion runs the cell once");

    r = run_filter("chapters/43-cache.md");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_contains(r.out, "``` output\nprobe\n```"); /* output comes from the cache */
    free_run(&r);
    cr_assert_eq(count_lines(counter), 1, "second expansion must not run the cell again");

    /* Other compiler flags are another key: the cell runs again. */
    setenv("NB_CFLAGS", fmt("%s -DNB_CACHE_PROBE=1", getenv("NB_CFLAGS")), 1);
    r = run_filter("chapters/43-cache.md");
    cr_assert_eq(r.status, 0, "%s", r.err);
    free_run(&r);
    cr_assert_eq(count_lines(counter), 2, "changed flags must re-run the cell");
}
