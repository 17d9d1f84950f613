/* The TSV reader every table of the workbook shares (GPUs, models, vision
 * and video models): header check, rows split into fields, numbers in the
 * one syntax of units.h, duplicate keys, "file:line: field 'x': reason"
 * messages.  See specs_tsv.h. */
#include "specs_tsv.h"

#include "units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A key's room, as long as any table's key field. */
#define TSV_KEY_MAX 32

#define MAX_FIELDS 32
#define MAX_LINE 2048

/* One TSV line split in place into fields. */
typedef struct {
    char buf[MAX_LINE];
    char *field[MAX_FIELDS];
    int n;
} tsv_row;

static int split_tabs(const char *line, size_t len, tsv_row *r)
{
    if (len >= sizeof r->buf)
        return -1;
    memcpy(r->buf, line, len);
    r->buf[len] = '\0';
    if (len && r->buf[len - 1] == '\r')
        r->buf[len - 1] = '\0';
    r->n = 0;
    char *p = r->buf;
    for (;;) {
        if (r->n == MAX_FIELDS)
            return -1;
        r->field[r->n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return 0;
}

/* A row's key and line, kept for the duplicate check at the end. */
typedef struct {
    char key[TSV_KEY_MAX];
    int line;
} key_line;

typedef struct {
    const char *file;
    int line;
    char *err;
    size_t errlen;
    size_t cap;       /* rows allocated in the table being filled */
    key_line *keys;   /* every row's key, in file order */
    size_t nkeys, capkeys;
} parse_ctx; /* the spec_tsv_ctx of specs_tsv.h */

/* Room for one more row: capacity doubles, so n rows cost O(n) copies. */
static int grow_rows(void **rows, int n, size_t size, size_t *cap)
{
    if ((size_t)n < *cap)
        return 0;
    size_t want = *cap ? 2 * *cap : 16;
    void *grown = realloc(*rows, want * size);
    if (!grown)
        return -1;
    *rows = grown;
    *cap = want;
    return 0;
}

static int fail(parse_ctx *c, const char *field, const char *fmt, const char *value)
{
    char reason[256];
    snprintf(reason, sizeof reason, fmt, value);
    if (field)
        snprintf(c->err, c->errlen, "%s:%d: field '%s': %s", c->file, c->line, field, reason);
    else
        snprintf(c->err, c->errlen, "%s:%d: %s", c->file, c->line, reason);
    return -1;
}

/* A number in the one syntax of flags and tables (units.h), in the table's
 * unit, within [lo, hi] of that unit: the bounds are what a real part can
 * have, so an overflow (1e300 TFLOP/s) or an underflow (5e-324) is refused
 * here, before the unit multiply, rather than printed as inf or 0 later.
 * "-" gives 0 when allow_none. */
static int parse_number(parse_ctx *c, const char *field, const char *s, int allow_none, double lo, double hi,
                        double *out)
{
    if (allow_none && strcmp(s, "-") == 0) {
        *out = 0;
        return 0;
    }
    double v;
    if (parse_plain_number(s, &v) != 0) {
        if (*s == '-' || *s == '+')
            return fail(c, field, "'%s' must be positive (write it without a sign)", s);
        return fail(c, field, "'%s' is not a number (digits, a fraction, an exponent: 989.4, 85.5e9)", s);
    }
    if (v <= 0)
        return fail(c, field, "'%s' must be positive", s);
    if (v < lo || v > hi) {
        char msg[128];
        snprintf(msg, sizeof msg, "'%%s' is outside what a real part has (%g to %g)", lo, hi);
        return fail(c, field, msg, s);
    }
    *out = v;
    return 0;
}

static int parse_int(parse_ctx *c, const char *field, const char *s, int min, int max, int *out)
{
    long long v;
    if (parse_whole_number(s, 1000000000LL, &v) != 0)
        return fail(c, field, "'%s' is not a whole number (digits only)", s);
    if (v < min || v > max) {
        char msg[96];
        snprintf(msg, sizeof msg, "'%%s' must be from %d to %d", min, max);
        return fail(c, field, msg, s);
    }
    *out = (int)v;
    return 0;
}

static int copy_text(parse_ctx *c, const char *field, const char *s, char *dst, size_t cap)
{
    if (*s == '\0')
        return fail(c, field, "empty%s", "");
    if (strlen(s) >= cap)
        return fail(c, field, "longer than the limit ('%.40s...')", s);
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

static int note_key(parse_ctx *c, const char *key)
{
    if (c->nkeys == c->capkeys) {
        size_t want = c->capkeys ? 2 * c->capkeys : 16;
        key_line *grown = realloc(c->keys, want * sizeof *grown);
        if (!grown)
            return fail(c, NULL, "out of memory%s", "");
        c->keys = grown;
        c->capkeys = want;
    }
    snprintf(c->keys[c->nkeys].key, TSV_KEY_MAX, "%s", key);
    c->keys[c->nkeys++].line = c->line;
    return 0;
}

static int by_key_then_line(const void *a, const void *b)
{
    const key_line *x = a, *y = b;
    int k = strcasecmp(x->key, y->key);
    return k ? k : (x->line > y->line) - (x->line < y->line);
}

/* Keys are case-insensitive and unique: sort once (n log n) instead of
 * scanning every earlier row for each new one.  The message names the
 * earliest line that repeats a key, and where that key first appeared. */
static int check_duplicate_keys(parse_ctx *c)
{
    if (c->nkeys < 2)
        return 0; /* qsort's base must not be NULL, even for no rows */
    qsort(c->keys, c->nkeys, sizeof *c->keys, by_key_then_line);
    size_t at = 0, first = 0;
    for (size_t i = 0, run = 0; i < c->nkeys; i++) {
        if (i == 0 || strcasecmp(c->keys[i].key, c->keys[i - 1].key) != 0)
            run = i; /* the first row of this key, in file order */
        else if (!at || c->keys[i].line < c->keys[at].line) {
            at = i;
            first = run;
        }
    }
    if (!at)
        return 0;
    c->line = c->keys[at].line;
    char msg[96];
    snprintf(msg, sizeof msg, "'%%s' appears twice (first on line %d)", c->keys[first].line);
    return fail(c, "key", msg, c->keys[at].key);
}

/* Walk the text line by line; check the header against `columns`, hand each
 * data row to `row_fn`.  Comment (#) and blank lines are skipped; a UTF-8
 * byte-order mark before the first line is skipped too. */
typedef int (*row_fn)(parse_ctx *c, tsv_row *r, void *table);

static int parse_rows(parse_ctx *c, const char *text, const char *const *columns, int nrequired, int ncolumns, row_fn fn,
                      void *table);

static int parse_tsv(const char *text, const char *file, const char *const *columns, int nrequired, int ncolumns,
                     row_fn fn, void *table, char *err, size_t errlen)
{
    parse_ctx c = {file, 0, err, errlen, 0, NULL, 0, 0};
    if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
        text += 3;
    int rc = parse_rows(&c, text, columns, nrequired, ncolumns, fn, table);
    if (rc == 0)
        rc = check_duplicate_keys(&c);
    free(c.keys);
    return rc;
}

/* The header names the first nrequired..ncolumns columns in order (columns
 * past nrequired are optional, for tables written before they existed);
 * every row has as many fields as the header, or leaves out optional ones
 * at its end. */
static int parse_rows(parse_ctx *c, const char *text, const char *const *columns, int nrequired, int ncolumns,
                      row_fn fn, void *table)
{
    int seen_header = 0;
    const char *p = text;
    tsv_row r;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        c->line++;
        const char *q = p;
        p = nl ? nl + 1 : p + len;
        if (len == 0 || q[0] == '#' || (len == 1 && q[0] == '\r'))
            continue;
        if (split_tabs(q, len, &r) != 0)
            return fail(c, NULL, "line too long or too many fields%s", "");
        if (!seen_header) {
            if (r.n < nrequired || r.n > ncolumns)
                return fail(c, NULL, "header has the wrong number of columns%s", "");
            ncolumns = r.n;
            for (int i = 0; i < ncolumns; i++)
                if (strcmp(r.field[i], columns[i]) != 0)
                    return fail(c, columns[i], "header names '%s' here", r.field[i]);
            seen_header = 1;
            continue;
        }
        /* a row may leave out optional columns at its end (a row added to a
         * copy of an older table) */
        if (r.n != ncolumns && !(r.n >= nrequired && r.n < ncolumns && nrequired < ncolumns)) {
            char msg[96];
            snprintf(msg, sizeof msg, "row has %d fields, expected %d", r.n, ncolumns);
            return fail(c, r.n < ncolumns ? columns[r.n] : columns[ncolumns - 1], "%s", msg);
        }
        if (fn(c, &r, table) != 0)
            return -1;
    }
    if (!seen_header) {
        c->line = c->line ? c->line : 1;
        return fail(c, NULL, "no header row%s", "");
    }
    return 0;
}

/* Tables are a few kB; anything past this is not a table (/dev/zero, a
 * wrong path) and is refused before it can exhaust memory. */
#define TABLE_MAX_BYTES (16u << 20)

static char *read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len > TABLE_MAX_BYTES)
            break;
        if (cap - len - 1 == 0) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    int read_error = ferror(f) ? errno : 0;
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (read_error || len > TABLE_MAX_BYTES) {
        if (read_error == EISDIR)
            snprintf(err, errlen, "%s: is a directory, not a table", path);
        else if (read_error)
            snprintf(err, errlen, "%s: %s", path, strerror(read_error));
        else
            snprintf(err, errlen, "%s: larger than %u MiB: not a table", path, TABLE_MAX_BYTES >> 20);
        free(buf);
        return NULL;
    }
    /* A NUL would end the text early and hide every row after it. */
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        int line = 1;
        for (const char *q = buf; q < nul; q++)
            line += *q == '\n';
        snprintf(err, errlen, "%s:%d: a NUL byte: not a text table", path, line);
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* ------------------------------------------------------------ the API */

struct spec_tsv_adapter {
    spec_tsv_row_fn fn;
    void *table;
};

static int adapt_row(parse_ctx *c, tsv_row *r, void *arg)
{
    struct spec_tsv_adapter *a = arg;
    return a->fn((spec_tsv_ctx *)c, r->field, r->n, a->table);
}

int spec_tsv_parse_optional(const char *text, const char *file, const char *const *columns, int nrequired,
                            int ncolumns, spec_tsv_row_fn fn, void *table, char *err, size_t errlen)
{
    struct spec_tsv_adapter a = {fn, table};
    return parse_tsv(text, file, columns, nrequired, ncolumns, adapt_row, &a, err, errlen);
}

int spec_tsv_parse(const char *text, const char *file, const char *const *columns, int ncolumns,
                   spec_tsv_row_fn fn, void *table, char *err, size_t errlen)
{
    return spec_tsv_parse_optional(text, file, columns, ncolumns, ncolumns, fn, table, err, errlen);
}

int spec_tsv_int(spec_tsv_ctx *c, const char *field, const char *s, int min, int *out)
{
    return parse_int((parse_ctx *)c, field, s, min, 1000000000, out);
}

int spec_tsv_int_in(spec_tsv_ctx *c, const char *field, const char *s, int min, int max, int *out)
{
    return parse_int((parse_ctx *)c, field, s, min, max, out);
}

int spec_tsv_number(spec_tsv_ctx *c, const char *field, const char *s, double *out)
{
    /* no real table field is below a billionth or above a trillion of its unit */
    return parse_number((parse_ctx *)c, field, s, 0, 1e-9, 1e12, out);
}

int spec_tsv_number_in(spec_tsv_ctx *c, const char *field, const char *s, double lo, double hi, double *out)
{
    return parse_number((parse_ctx *)c, field, s, 0, lo, hi, out);
}

int spec_tsv_number_or_none(spec_tsv_ctx *c, const char *field, const char *s, double lo, double hi, double *out)
{
    return parse_number((parse_ctx *)c, field, s, 1, lo, hi, out);
}

int spec_tsv_grow(spec_tsv_ctx *c, void **rows, int n, size_t size)
{
    parse_ctx *p = (parse_ctx *)c;
    return grow_rows(rows, n, size, &p->cap) != 0 ? fail(p, NULL, "out of memory%s", "") : 0;
}

int spec_tsv_text(spec_tsv_ctx *c, const char *field, const char *s, char *dst, size_t cap)
{
    return copy_text((parse_ctx *)c, field, s, dst, cap);
}

int spec_tsv_fail(spec_tsv_ctx *c, const char *field, const char *reason, const char *value)
{
    return fail((parse_ctx *)c, field, reason, value);
}

char *spec_read_text_file(const char *path, char *err, size_t errlen)
{
    return read_file(path, err, errlen);
}

int spec_tsv_key(spec_tsv_ctx *c, const char *key)
{
    return note_key((parse_ctx *)c, key);
}

/* ---------------------------------------------- rows by key, for any table */

int spec_key_index(const char *first_key, size_t stride, int n, const char *key)
{
    for (int i = 0; key && i < n; i++)
        if (strcasecmp(first_key + (size_t)i * stride, key) == 0)
            return i;
    return -1;
}

char *spec_keys_join(const char *first_key, size_t stride, int n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *k = first_key + (size_t)i * stride;
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", k);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
    return buf;
}
