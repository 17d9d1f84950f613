/* napkin: no-asan
 * The built book can be navigated and cited: a bar and the contents on
 * every page, an anchor for every exercise, numbered table and figure, the
 * reference list from chapters/references.bib, and every chapter as its own
 * page linked to its neighbours.  The expected anchors are counted from the
 * sources, not from the HTML. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_text.h"

/* Problems of an exercise set: paragraphs opening with "**N." at a line start. */
static int problems_in(const char *md)
{
    int n = 0;
    for (const char *p = md; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (p[0] == '*' && p[1] == '*' && p[2] >= '1' && p[2] <= '9') {
            const char *q = p + 2;
            while (*q >= '0' && *q <= '9')
                q++;
            if (*q == '.')
                n++;
        }
    return n;
}

/* The sources of one kind: "exercises" -> exercises/NN-*.md, by number. */
static int sources(const char *dir, char names[][256], int max)
{
    DIR *d = opendir(fmt("%s/%s", need_env("NB_SRC"), dir));
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len > 6 && e->d_name[0] >= '0' && e->d_name[0] <= '9' && e->d_name[2] == '-' &&
            strcmp(e->d_name + len - 3, ".md") == 0)
            snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

Test(book_nav, bar_and_contents)
{
    char *html = built_text("book.html");
    cr_expect(strstr(html, "<nav id=\"nb-bar\" data-page=\"book\"") != NULL, "no navigation bar");
    cr_expect(strstr(html, "href=\"#TOC\"") != NULL, "no link to the contents");
    cr_expect(strstr(html, "id=\"TOC\"") != NULL, "no contents");
}

Test(book_nav, every_exercise_has_its_anchor)
{
    char names[64][256];
    int n = sources("exercises", names, 64);
    char *html = built_text("book.html");
    char *instructor = built_text("book-instructor.html");
    int total = 0;
    for (int i = 0; i < n; i++) {
        char *md = slurp(fmt("%s/exercises/%s", need_env("NB_SRC"), names[i]));
        int ch = atoi(names[i]);
        int k = problems_in(md);
        for (int j = 1; j <= k; j++) {
            cr_expect(strstr(html, fmt("id=\"exercise-%d-%d\"", ch, j)) != NULL, "no anchor exercise-%d-%d", ch, j);
            cr_expect(strstr(html, fmt("Exercise %d.%d.", ch, j)) != NULL, "no label Exercise %d.%d", ch, j);
        }
        total += k;
    }
    cr_expect_gt(total, 20, "only %d problems found in the exercise sources", total);
    /* A worked solution links back to its problem. */
    cr_expect(strstr(instructor, "id=\"solution-12-1\"") != NULL);
    cr_expect(strstr(instructor, "href=\"#exercise-12-1\"") != NULL);
}

/* Chapter 1 has three captioned tables (": " caption lines in the source). */
Test(book_nav, tables_are_numbered)
{
    char *html = built_text("book.html");
    char *md = slurp(fmt("%s/chapters/01-decode-roofline.md", need_env("NB_SRC")));
    cr_assert_not_null(md);
    int captions = count_of(md, "\n: ");
    cr_assert_gt(captions, 0);
    for (int j = 1; j <= captions; j++) {
        cr_expect(strstr(html, fmt("id=\"table-1-%d\"", j)) != NULL, "no anchor table-1-%d", j);
        cr_expect(strstr(html, fmt("Table 1.%d:", j)) != NULL, "no label Table 1.%d", j);
    }
}

/* Chapter 12 cites Grattafiori et al. and Rajbhandari et al. (its source
 * says [@grattafiori2024llama3] and [@rajbhandari2020zero]); citeproc writes
 * the entries into the reference list; nothing is left unresolved. */
Test(book_nav, citations_resolve_into_the_reference_list)
{
    char *html = built_text("book.html");
    const char *refs = strstr(html, "id=\"refs\"");
    cr_assert_not_null(refs, "no reference list");
    cr_expect(strstr(refs, "id=\"ref-grattafiori2024llama3\"") != NULL);
    cr_expect(strstr(refs, "id=\"ref-rajbhandari2020zero\"") != NULL);
    cr_expect(strstr(refs, "3 Herd of") != NULL, "the Llama 3 paper is not in the list");
    cr_expect(strstr(html, "href=\"#ref-korthikanti2022\"") != NULL, "citations are not linked");
    cr_expect_eq(strstr(html, "[@"), NULL, "an unresolved citation");
    cr_expect_eq(strstr(html, "???"), NULL, "citeproc's mark of an unknown key");
}

/* make chapters: chapter-NN.html per chapter, with the bar, linked to the
 * chapters before and after it and to the whole book. */
Test(book_nav, chapter_pages)
{
    char names[64][256];
    int n = sources("chapters", names, 64);
    cr_assert_gt(n, 1);
    int nums[64];
    for (int i = 0; i < n; i++)
        nums[i] = atoi(names[i]);
    /* sort the chapter numbers */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (nums[j] < nums[i]) {
                int t = nums[i];
                nums[i] = nums[j];
                nums[j] = t;
            }
    for (int i = 0; i < n; i++) {
        char *html = built_text(fmt("chapter-%02d.html", nums[i]));
        cr_expect(strstr(html, "data-page=\"chapter\"") != NULL, "chapter %d has no bar", nums[i]);
        cr_expect(strstr(html, "href=\"book.html\"") != NULL, "chapter %d: no link to the book", nums[i]);
        if (i > 0)
            cr_expect(strstr(html, fmt("href=\"chapter-%02d.html\"", nums[i - 1])) != NULL, "chapter %d: no previous",
                      nums[i]);
        if (i + 1 < n)
            cr_expect(strstr(html, fmt("href=\"chapter-%02d.html\"", nums[i + 1])) != NULL, "chapter %d: no next",
                      nums[i]);
    }
}
