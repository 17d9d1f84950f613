/* Helpers for the suites that read files and the build's environment. */
#ifndef NAPKIN_TEST_TEXT_H
#define NAPKIN_TEST_TEXT_H

#include <criterion/criterion.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Strings these helpers hand out live until the test process exits; they
 * are kept here and freed then, so LeakSanitizer sees no leak. */
static char **text_kept;
static size_t text_nkept, text_capkept;

static inline void text_free_all(void)
{
    for (size_t i = 0; i < text_nkept; i++)
        free(text_kept[i]);
    free(text_kept);
    text_kept = NULL;
    text_nkept = text_capkept = 0;
}

/* Keep p until exit; returns p. */
static inline void *text_keep(void *p)
{
    if (!text_kept)
        atexit(text_free_all);
    if (text_nkept == text_capkept) {
        size_t cap = text_capkept ? 2 * text_capkept : 64;
        char **grown = realloc(text_kept, cap * sizeof *grown);
        cr_assert_not_null(grown);
        text_kept = grown;
        text_capkept = cap;
    }
    text_kept[text_nkept++] = p;
    return p;
}

/* printf into a fresh string, freed at exit (a test process is short-lived). */
static inline char *fmt(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    cr_assert(n >= 0);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    va_start(ap, format);
    vsnprintf(s, (size_t)n + 1, format, ap);
    va_end(ap);
    return text_keep(s);
}

/* A file's whole text (freed at exit), or NULL when it cannot be opened. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return text_keep(s);
}

/* Write n bytes (NULs included) to path, replacing what was there. */
static inline void write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* An environment variable that `make test` sets. */
static inline const char *need_env(const char *name)
{
    const char *v = getenv(name);
    cr_assert(v && *v, "%s must be set (make test sets it)", name);
    return v;
}

/* A file the build wrote under NB_BUILD (freed at exit); the test stops
 * when it is missing. */
static inline char *built_text(const char *name)
{
    char *path = fmt("%s/%s", need_env("NB_BUILD"), name);
    char *text = slurp(path);
    cr_assert_not_null(text, "%s is missing: `make book-tests` builds it", path);
    return text;
}

/* How many times needle occurs in hay, overlaps counted. */
static inline int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

#endif
