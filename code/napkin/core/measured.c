/* Reading measured TSV sets; see measured.h. */
#include "measured.h"

#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int grow(void **p, int count, size_t elem)
{
    /* room for count + 1 elements: capacity 8, then doubling at each power of two */
    if (count != 0 && (count < 8 || (count & (count - 1))))
        return 0;
    size_t cap = count < 8 ? 8 : (size_t)count * 2;
    void *q = realloc(*p, cap * elem);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

static int fail(char *err, size_t n, const char *file, int line, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (err && n)
        snprintf(err, n, "%s:%d: %s", file, line, msg);
    return -1;
}

/* Split a line on tabs into cells appended to *cells; returns the count or -1. */
static int split_tabs(const char *line, size_t len, char ***cells, int *count)
{
    int added = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || line[i] == '\t') {
            if (grow((void **)cells, *count, sizeof **cells))
                return -1;
            char *c = dup_range(line + start, i - start);
            if (!c)
                return -1;
            (*cells)[(*count)++] = c;
            added++;
            start = i + 1;
        }
    }
    return added;
}

int measured_table_parse(const char *text, const char *filename, measured_table *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    int line_no = 0, ncells = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        line_no++;
        if (len && line[len - 1] == '\r')
            len--;
        if (len == 0) {
            /* blank line: skip */
        } else if (line[0] == '#') {
            if (t->ncols == 0) {
                const char *colon = memchr(line, ':', len);
                if (colon) {
                    const char *k = line + 1;
                    while (*k == ' ')
                        k++;
                    const char *v = colon + 1;
                    while (v < line + len && *v == ' ')
                        v++;
                    if (grow((void **)&t->meta_key, t->nmeta, sizeof(char *)) ||
                        grow((void **)&t->meta_value, t->nmeta, sizeof(char *)))
                        goto oom;
                    t->meta_key[t->nmeta] = dup_range(k, (size_t)(colon - k));
                    t->meta_value[t->nmeta] = dup_range(v, (size_t)(line + len - v));
                    t->nmeta++;
                }
            }
        } else if (t->ncols == 0) {
            if (split_tabs(line, len, &t->cols, &t->ncols) < 0)
                goto oom;
        } else {
            int got = split_tabs(line, len, &t->cells, &ncells);
            if (got < 0)
                goto oom;
            if (got != t->ncols) {
                fail(err, errlen, filename, line_no, "%d cells, header has %d", got, t->ncols);
                for (int i = t->nrows * t->ncols; i < ncells; i++) /* the ragged row's cells */
                    free(t->cells[i]);
                measured_table_free(t);
                return -1;
            }
            t->nrows++;
        }
        line = end ? end + 1 : line + len;
    }
    if (t->ncols == 0) {
        fail(err, errlen, filename, line_no, "no header row");
        measured_table_free(t);
        return -1;
    }
    return 0;
oom:
    fail(err, errlen, filename, line_no, "out of memory");
    for (int i = t->nrows * t->ncols; i < ncells; i++)
        free(t->cells[i]);
    measured_table_free(t);
    return -1;
}

int measured_table_load(const char *path, measured_table *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, errlen, path, 0, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 14, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (len + 1 < cap)
            break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (!buf)
        return fail(err, errlen, path, 0, "out of memory");
    buf[len] = '\0';
    int rc = measured_table_parse(buf, path, t, err, errlen);
    free(buf);
    return rc;
}

static void free_strings(char **s, int n)
{
    for (int i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

void measured_table_free(measured_table *t)
{
    free_strings(t->meta_key, t->nmeta);
    free_strings(t->meta_value, t->nmeta);
    free_strings(t->cols, t->ncols);
    free_strings(t->cells, t->nrows * t->ncols);
    memset(t, 0, sizeof *t);
}

const char *measured_meta(const measured_table *t, const char *key)
{
    for (int i = 0; i < t->nmeta; i++)
        if (strcmp(t->meta_key[i], key) == 0)
            return t->meta_value[i];
    return NULL;
}

int measured_col(const measured_table *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i], name) == 0)
            return i;
    return -1;
}

const char *measured_cell(const measured_table *t, int row, int col)
{
    if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
        return NULL;
    return t->cells[(size_t)row * t->ncols + col];
}

double measured_num(const measured_table *t, int row, int col)
{
    const char *c = measured_cell(t, row, col);
    if (!c || !*c)
        return NAN;
    char *end;
    double v = strtod(c, &end);
    return *end ? NAN : v;
}

int measured_find_row(const measured_table *t, int col, const char *value)
{
    for (int r = 0; r < t->nrows; r++) {
        const char *c = measured_cell(t, r, col);
        if (c && strcmp(c, value) == 0)
            return r;
    }
    return -1;
}


double measured_read_bandwidth(const measured_table *t)
{
    int kc = measured_col(t, "kernel"), gc = measured_col(t, "gb_s");
    int row = kc < 0 || gc < 0 ? -1 : measured_find_row(t, kc, "read");
    double gbs = row < 0 ? NAN : measured_num(t, row, gc);
    return gbs > 0 ? gbs * GB : NAN;
}
