/* Checks on $NB_BUILD/book.html and book-instructor.html, the products of
 * `make book` and `make instructor`: one self-contained file, a table of
 * contents, no unresolved value, math as MathML, every chapter present with
 * the number its file name gives it, every figure embedded.
 *
 * What to expect is read from the sources in $NB_SRC (chapters/NN-*.md,
 * exercises/, solutions/), so the checks follow chapters as they are added. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_text.h"

/* Source files "dir/NN-*.md" of the repository, sorted by name. */
typedef struct {
    int n;
    char *name[100]; /* "01-decode-roofline.md" */
    int number[100]; /* 1 */
} source_list;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static source_list sources(const char *dir)
{
    source_list l = { 0 };
    DIR *d = opendir(fmt("%s/%s", need_env("NB_SRC"), dir));
    if (!d)
        return l;
    struct dirent *e;
    while ((e = readdir(d)) && l.n < 100) {
        const char *s = e->d_name;
        size_t len = strlen(s);
        if (len > 6 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '-' &&
            strcmp(s + len - 3, ".md") == 0)
            l.name[l.n++] = fmt("%s", s);
    }
    closedir(d);
    qsort(l.name, (size_t)l.n, sizeof l.name[0], by_name);
    for (int i = 0; i < l.n; i++)
        l.number[i] = (l.name[i][0] - '0') * 10 + (l.name[i][1] - '0');
    return l;
}

static char *source_text(const char *dir, const char *name)
{
    char *s = slurp(fmt("%s/%s/%s", need_env("NB_SRC"), dir, name));
    cr_assert_not_null(s);
    return s;
}

/* The text with every <pre>...</pre> removed: code may hold "{{0}}". */
static char *without_pre(const char *html)
{
    char *out = fmt("%s", html);
    char *w = out;
    const char *r = html;
    while (*r) {
        if (strncmp(r, "<pre", 4) == 0) {
            const char *end = strstr(r, "</pre>");
            if (!end)
                break;
            r = end + 6;
            continue;
        }
        *w++ = *r++;
    }
    *w = '\0';
    return out;
}

/* 1 when the heading line [from, to) is marked unnumbered. */
static int memmem_unnumbered(const char *from, const char *to)
{
    for (const char *p = from; p < to; p++)
        if ((to - p >= 10 && strncmp(p, "unnumbered", 10) == 0) || (to - p >= 3 && strncmp(p, "{-}", 3) == 0))
            return 1;
    return 0;
}

/* 1 when a chapter source has inline or display math outside ``` fences. */
static int source_has_math(const char *md)
{
    int fenced = 0;
    const char *line = md;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len >= 3 && strncmp(line, "```", 3) == 0)
            fenced = !fenced;
        else if (!fenced) {
            /* "$x" opening inline math: a dollar followed by a non-blank,
             * non-digit character (prices like "$2" are not math). */
            for (size_t i = 0; i + 1 < len; i++)
                if (line[i] == '$' && line[i + 1] != ' ' && !(line[i + 1] >= '0' && line[i + 1] <= '9') &&
                    (i == 0 || line[i - 1] != '\\'))
                    return 1;
        }
        if (!end)
            break;
        line = end + 1;
    }
    return 0;
}

Test(book, exists_with_title_and_contents)
{
    char *html = built_text("book.html");
    cr_expect(strlen(html) > 4096, "book.html is suspiciously small");
    cr_expect(strstr(html, "<nav id=\"TOC\"") != NULL, "no table of contents");
    cr_expect(strstr(html, "Batching by the Numbers</h1>") != NULL, "no title");
    /* The preface comes before chapter 1 and carries no number. */
    cr_expect(strstr(html, "<h1 class=\"unnumbered\" id=\"preface\">Preface</h1>") != NULL,
              "preface missing or numbered");
}

Test(book, no_unresolved_values)
{
    char *text = without_pre(built_text("book.html"));
    for (const char *p = strstr(text, "{{"); p; p = strstr(p + 2, "{{")) {
        const char *q = p + 2;
        while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')
            q++;
        cr_expect(!(q > p + 2 && q[0] == '}' && q[1] == '}'), "unresolved value near: %.60s", p);
    }
}

/* No network at read time: images inline, no remote script or stylesheet. */
static void check_self_contained(const char *html, const char *name)
{
    for (const char *p = strstr(html, "<img"); p; p = strstr(p + 4, "<img")) {
        const char *src = strstr(p, "src=\"");
        const char *close = strchr(p, '>');
        cr_assert(src && close && src < close, "%s: <img> without src: %.80s", name, p);
        cr_expect(strncmp(src + 5, "data:", 5) == 0, "%s: image not embedded: %.100s", name, src);
    }
    cr_expect_eq(count_of(html, "<script src=\"http"), 0, "%s loads a remote script", name);
    cr_expect_eq(count_of(html, "<link rel=\"stylesheet\" href=\"http"), 0, "%s loads a remote stylesheet", name);
    cr_expect_eq(count_of(html, "url(http"), 0, "%s: CSS fetches a URL", name);
    cr_expect_eq(count_of(html, "@import"), 0, "%s: CSS imports a file", name);
    cr_expect_eq(count_of(html, "MathJax"), 0, "%s: math must be MathML, not MathJax", name);
}

Test(book, self_contained)
{
    check_self_contained(built_text("book.html"), "book.html");
    check_self_contained(built_text("book-instructor.html"), "book-instructor.html");
}

/* Chapter NN.md is chapter NN (not its rank), numbered in heading and TOC;
 * its sections are NN.1, ...; its figures are embedded and captioned
 * "Figure NN.M:" in order; math is MathML. */
Test(book, every_chapter_numbered_from_its_file_name)
{
    char *html = built_text("book.html");
    source_list ch = sources("chapters");
    int figures = 0, any_math = 0;
    for (int i = 0; i < ch.n; i++) {
        int n = ch.number[i];
        char *md = source_text("chapters", ch.name[i]);
        cr_expect(strstr(html, fmt("<h1 data-number=\"%d\" id=\"", n)) != NULL,
                  "%s: no level-1 heading numbered %d", ch.name[i], n);
        cr_expect(strstr(html, fmt("<span class=\"toc-section-number\">%d</span>", n)) != NULL,
                  "%s: chapter %d missing from the contents", ch.name[i], n);
        const char *section = strstr(md, "\n## ");
        const char *eol = section ? strchr(section + 1, '\n') : NULL;
        if (section && !(eol && memmem_unnumbered(section, eol)))
            cr_expect(strstr(html, fmt("data-number=\"%d.1\"", n)) != NULL,
                      "%s: first section should be %d.1", ch.name[i], n);
        /* Figures: "](figures/NN-name.gp" in the source, in order. */
        int m = 0;
        for (const char *p = strstr(md, "](figures/"); p; p = strstr(p + 1, "](figures/")) {
            const char *close = strchr(p, ')');
            if (close && close - p > 4 && strncmp(close - 3, ".gp", 3) == 0) {
                m++;
                cr_expect(strstr(html, fmt("<figcaption aria-hidden=\"true\">Figure %d.%d: ", n, m)) != NULL,
                          "%s: caption 'Figure %d.%d:' missing", ch.name[i], n, m);
            }
        }
        figures += m;
        any_math |= source_has_math(md);
    }
    cr_expect_geq(count_of(html, "<img src=\"data:image/svg+xml;base64,"), figures,
                  "%d figures referenced by chapters, fewer embedded as SVG", figures);
    if (any_math)
        cr_expect(strstr(html, "<math") != NULL, "chapters have math but the book has no MathML");
}

/* The part of the book from chapter n's heading to the next level-1
 * heading (or the end), as a fresh string; NULL when chapter n is absent. */
static char *chapter_part(const char *html, int n)
{
    const char *from = strstr(html, fmt("<h1 data-number=\"%d\"", n));
    if (!from)
        return NULL;
    const char *to = strstr(from + 4, "<h1 ");
    size_t len = to ? (size_t)(to - from) : strlen(from);
    char *part = malloc(len + 1);
    cr_assert_not_null(part);
    memcpy(part, from, len);
    part[len] = '\0';
    return text_keep(part);
}

static int files_for(const source_list *l, int n)
{
    int k = 0;
    for (int i = 0; i < l->n; i++)
        k += l->number[i] == n;
    return k;
}

/* Exercise and solution sets are unnumbered level-2 sections inside their
 * chapter: each exercise file adds one to the chapter's part of both
 * editions, each solution file one more to the instructor's only. */
Test(book, exercises_and_solutions_placed)
{
    char *html = built_text("book.html");
    char *teacher = built_text("book-instructor.html");
    source_list ch = sources("chapters");
    source_list ex = sources("exercises");
    source_list sol = sources("solutions");
    const char *unnumbered = "<h2 class=\"unnumbered\"";
    for (int i = 0; i < ch.n; i++) {
        int n = ch.number[i];
        char *student = chapter_part(html, n);
        char *instructor = chapter_part(teacher, n);
        cr_assert(student && instructor, "chapter %d missing from an edition", n);
        int nex = files_for(&ex, n), nsol = files_for(&sol, n);
        cr_expect_geq(count_of(student, unnumbered), nex, "chapter %d: %d exercise set(s) expected inside it", n,
                      nex);
        cr_expect_eq(count_of(instructor, unnumbered), count_of(student, unnumbered) + nsol,
                     "chapter %d: the instructor edition should add exactly %d solution set(s)", n, nsol);
    }
}
